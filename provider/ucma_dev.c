/*
 * ucma_dev.c - the uroce devices an rdma_cm_id can belong to
 * (docs/rdma-cm.md, "Provider"); which one an address names: ucma_addr.c.
 *
 * The list is what libibverbs itself lists, so librdmacm (which opens devices
 * through libibverbs) and the provider agree. A device's address is its
 * GID[0] (ports/1/gids/0, written by `uroce up` from the address the daemon
 * binds; RoCEv2 GIDs of IPv4 addresses are ::ffff:a.b.c.d, IBTA A17.8).
 */
#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uroce.h"
#include "ucma.h"

/* Reads one line of dir/file into buf (newline removed): 0, or -1. */
static int read_line(const char *dir, const char *file, char *buf, size_t len)
{
	char path[IBV_SYSFS_PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* GID text to an address: IPv4-mapped GIDs become AF_INET. */
static int gid_to_addr(const char *text, struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct in6_addr a;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET6, text, &a) != 1)
		return -1;
	if (IN6_IS_ADDR_V4MAPPED(&a)) {
		s4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, &a.s6_addr[12], 4);
	} else {
		s6->sin6_family = AF_INET6;
		s6->sin6_addr = a;
	}
	return 0;
}

static int dev_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ucma_dev *)a)->name, ((const struct ucma_dev *)b)->name);
}

int ucma_dev_list(struct ucma_dev *devs)
{
	struct ibv_device **list;
	char gid[64];
	int n = 0, num = 0;

	list = ibv_get_device_list(&num);
	if (!list)
		return 0;
	for (int i = 0; i < num && n < UCMA_MAX_DEVS; i++) {
		struct uroce_device *ud;
		struct ucma_dev *d = &devs[n];

		if (!uroce_is_device(list[i]))
			continue;
		ud = uroce_container_of(list[i], struct uroce_device, vdev.device);
		snprintf(d->name, sizeof(d->name), "%s", ibv_get_device_name(list[i]));
		if (read_line(ud->ibdev_path, UROCE_SYSFS_SOCKET_FILE, d->sock_path,
			      sizeof(d->sock_path)) ||
		    read_line(ud->ibdev_path, "ports/1/gids/0", gid, sizeof(gid)) ||
		    gid_to_addr(gid, &d->addr))
			continue;
		n++;
	}
	ibv_free_device_list(list);
	qsort(devs, (size_t)n, sizeof(*devs), dev_cmp);
	return n;
}
