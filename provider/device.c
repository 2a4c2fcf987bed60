/*
 * device.c - registration with libibverbs and device matching.
 *
 * The constructor runs when libibverbs dlopen()s liburoce-rdmav<PABI>.so
 * (RDMAV_DRIVERS=<dir>/liburoce). It first checks that the loaded libibverbs
 * has the layout verbs_provider.h declares (abi_version.c) and only then
 * registers. Matching (docs/provider-abi.md §1.4): the name pattern
 * rdma_device:*Nuroce* from the table, then match_device, which has the final
 * say, requires the uroce_socket file in the device's sysfs directory so a
 * foreign device whose name happens to contain "uroce" is never claimed.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi_version.h"
#include "uroce.h"
#include "ucma.h"

static const struct verbs_match_ent uroce_match_table[] = {
	{ .u.modalias = "rdma_device:*Nuroce*", .kind = VERBS_MATCH_MODALIAS },
	{ .kind = VERBS_MATCH_SENTINEL },
};

static bool uroce_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	char path[IBV_SYSFS_PATH_MAX + sizeof(UROCE_SYSFS_SOCKET_FILE) + 1];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", sysfs_dev->ibdev_path,
			     UROCE_SYSFS_SOCKET_FILE) >= sizeof(path))
		return false;
	return access(path, R_OK) == 0;
}

static struct verbs_device *uroce_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct uroce_device *dev = calloc(1, sizeof(*dev));

	if (!dev)
		return NULL;
	snprintf(dev->ibdev_path, sizeof(dev->ibdev_path), "%s", sysfs_dev->ibdev_path);
	return &dev->vdev;
}

static void uroce_uninit_device(struct verbs_device *vdev)
{
	free(uroce_container_of(vdev, struct uroce_device, vdev));
}

struct verbs_context *uroce_alloc_context(struct ibv_device *ibdev, int cmd_fd,
					  void *private_data);

static const struct verbs_device_ops uroce_dev_ops = {
	.name = "uroce",
	/* class/infiniband_verbs/<uv>/abi_version is "1" (docs/discovery.md); 0 if absent */
	.match_min_abi_version = 0,
	.match_max_abi_version = 1,
	.match_table = uroce_match_table,
	.match_device = uroce_match_device,
	.alloc_context = uroce_alloc_context,
	.import_context = uroce_import_context,
	.alloc_device = uroce_alloc_device,
	.uninit_device = uroce_uninit_device,
};

bool uroce_is_device(struct ibv_device *dev)
{
	return uroce_container_of(dev, struct verbs_device, device)->ops == &uroce_dev_ops;
}

static __attribute__((constructor)) void uroce_register(void)
{
	char why[PATH_MAX + 128];

	if (uroce_check_loaded_ibverbs(why, sizeof(why))) {
		fprintf(stderr, UROCE_LOG_PREFIX "provider not registered: %s\n", why);
		return;
	}
	uroce_verbs_register_driver(&uroce_dev_ops);
	/* librdmacm over uroce (docs/rdma-cm.md): now, and for a librdmacm loaded later */
	uroce_ucma_init();
}
