/*
 * traffic_dm_proto.c - ALLOC_DM / FREE_DM / REG_DM_MR as a hostile local
 * client sends them on uroced's control socket ($UROCE_DM_SOCK), for
 * traffic_dm (include/uroce/abi_dm.h): lengths a client lies about,
 * alignments and masks out of range, ranges that wrap around 2^64, another
 * connection's handles, a double free, FREE_DM while an MR is registered,
 * a memfd that cannot be resized, and the device memory of a connection
 * that closes without freeing returned to the device (ADMIN_STATUS "dm"
 * line).
 */
#include "config.h"
#include "daemon_proto.h"
#include "traffic_dm.h"
#include "traffic_verbs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *sock_path(void)
{
	const char *p = getenv("UROCE_DM_SOCK");

	ck_assert_msg(p && *p, "UROCE_DM_SOCK (the daemon's control socket) is not set");
	return p;
}

/* ALLOC_DM on SS: the status; *h and *fd (-1 if none) on success. */
static int alloc_dm(struct dp_session *ss, uint64_t len, uint32_t log_align, uint32_t comp_mask,
		    uint32_t *h, int *fd, uint64_t *map_size)
{
	struct uroce_alloc_dm_req req;
	struct uroce_alloc_dm_resp resp;
	int fds[4], n = 0, rc;

	memset(&req, 0, sizeof(req));
	dp_hdr(&req, UROCE_OP_ALLOC_DM, 5);
	req.length = len;
	req.log_align_req = log_align;
	req.comp_mask = comp_mask;
	rc = dp_call(ss->s, &req, NULL, 0, &resp, sizeof(resp), fds, &n);
	if (fd)
		*fd = n > 0 ? fds[0] : -1;
	else
		for (int i = 0; i < n; i++)
			close(fds[i]);
	if (!rc) {
		ck_assert_int_eq(n, 1);
		*h = resp.handle;
		if (map_size)
			*map_size = resp.map_size;
	} else {
		ck_assert_int_eq(n, 0);
	}
	return rc;
}

static int reg_dm_mr(struct dp_session *ss, uint32_t pd, uint32_t dm, uint64_t off, uint64_t len,
		     uint32_t access, uint32_t reserved, uint32_t *mr)
{
	struct uroce_reg_dm_mr_req req;
	struct uroce_reg_mr_resp resp;
	int rc;

	memset(&req, 0, sizeof(req));
	dp_hdr(&req, UROCE_OP_REG_DM_MR, 6);
	req.pd_handle = pd;
	req.dm_handle = dm;
	req.access = access;
	req.reserved = reserved;
	req.dm_offset = off;
	req.length = len;
	rc = dp_call(ss->s, &req, NULL, 0, &resp, sizeof(resp), NULL, NULL);
	if (!rc && mr)
		*mr = resp.handle;
	return rc;
}

/* Bytes of device memory in use, from ADMIN_STATUS's "dm ... used=N". */
static unsigned long long dm_used(void)
{
	static char text[65536];
	unsigned long long used;
	char *line;

	ck_assert_int_eq(dp_status_text(sock_path(), text, sizeof(text)), 0);
	line = strstr(text, "\ndm ");
	ck_assert_ptr_nonnull(line);
	ck_assert_int_eq(sscanf(line + 1, "dm per_uid=%*u device=%*u used=%llu", &used), 1);
	return used;
}

#define ZL (IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE)

START_TEST(test_proto_lies)
{
	struct dp_session x, y;
	uint32_t pd, ypd, h, h2, mr;
	uint64_t map_size = 0;
	struct stat st;
	int fd;

	ck_assert_int_eq(dp_open(&x, sock_path()), 0);
	ck_assert_int_eq(dp_open(&y, sock_path()), 0);
	ck_assert_int_eq(dp_alloc_pd(&x, &pd), 0);
	ck_assert_int_eq(dp_alloc_pd(&y, &ypd), 0);
	/* lengths and alignments a client lies about */
	ck_assert_int_eq(alloc_dm(&x, 0, 0, 0, &h, NULL, NULL), EINVAL);
	ck_assert_int_eq(alloc_dm(&x, DM_DEVICE_BYTES + 1, 0, 0, &h, NULL, NULL), EINVAL);
	ck_assert_int_eq(alloc_dm(&x, 1ull << 63, 0, 0, &h, NULL, NULL), EINVAL);
	ck_assert_int_eq(alloc_dm(&x, UINT64_MAX, 0, 0, &h, NULL, NULL), EINVAL);
	ck_assert_int_eq(alloc_dm(&x, 4096, 13, 0, &h, NULL, NULL), EINVAL);
	ck_assert_int_eq(alloc_dm(&x, 4096, UINT32_MAX, 0, &h, NULL, NULL), EINVAL);
	ck_assert_int_eq(alloc_dm(&x, 4096, 0, 1, &h, NULL, NULL), EINVAL);
	/* a good one: one sealed memfd of 4096 zero bytes */
	ck_assert_int_eq(alloc_dm(&x, 4000, 0, 0, &h, &fd, &map_size), 0);
	ck_assert_uint_eq(map_size, 4096);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(st.st_size, 4096);
	ck_assert_int_eq(ftruncate(fd, 0), -1);
	ck_assert_int_eq(errno, EPERM);
	ck_assert_int_eq(ftruncate(fd, 1 << 20), -1);
	ck_assert_int_eq(errno, EPERM);
	close(fd);
	ck_assert_uint_eq(dm_used(), 4032);
	/* ranges outside the DM's 4000 bytes, wrapping ones among them */
	ck_assert_int_eq(reg_dm_mr(&x, pd, h, 0, 4001, ZL, 0, NULL), EINVAL);
	ck_assert_int_eq(reg_dm_mr(&x, pd, h, 4001, 0, ZL, 0, NULL), EINVAL);
	ck_assert_int_eq(reg_dm_mr(&x, pd, h, UINT64_MAX, 2, ZL, 0, NULL), EINVAL);
	ck_assert_int_eq(reg_dm_mr(&x, pd, h, 8, UINT64_MAX, ZL, 0, NULL), EINVAL);
	ck_assert_int_eq(reg_dm_mr(&x, pd, h, 0, 64, IBV_ACCESS_LOCAL_WRITE, 0, NULL), EINVAL);
	ck_assert_int_eq(reg_dm_mr(&x, pd, h, 0, 64, ZL | (1u << 31), 0, NULL), EINVAL);
	ck_assert_int_eq(reg_dm_mr(&x, pd, h, 0, 64, ZL, 1, NULL), EINVAL);
	ck_assert_int_eq(reg_dm_mr(&x, 999, h, 0, 64, ZL, 0, NULL), EINVAL);
	ck_assert_int_eq(reg_dm_mr(&x, pd, 999, 0, 64, ZL, 0, NULL), EINVAL);
	/* another connection's handle names nothing there */
	ck_assert_int_eq(dp_handle_op(&y, UROCE_OP_FREE_DM, h), EINVAL);
	ck_assert_int_eq(reg_dm_mr(&y, ypd, h, 0, 64, ZL, 0, NULL), EINVAL);
	/* FREE_DM while an MR is on it: EBUSY; after DEREG_MR: freed, once */
	ck_assert_int_eq(reg_dm_mr(&x, pd, h, 0, 4000, ZL, 0, &mr), 0);
	ck_assert_int_eq(dp_handle_op(&x, UROCE_OP_FREE_DM, h), EBUSY);
	ck_assert_int_eq(dp_handle_op(&x, UROCE_OP_DEREG_MR, mr), 0);
	ck_assert_int_eq(dp_handle_op(&x, UROCE_OP_FREE_DM, h), 0);
	ck_assert_int_eq(dp_handle_op(&x, UROCE_OP_FREE_DM, h), EINVAL);
	ck_assert_int_eq(dp_handle_op(&x, UROCE_OP_FREE_DM, 0), EINVAL);
	ck_assert_uint_eq(dm_used(), 0);
	/* a connection that closes holding device memory (and an MR on it) */
	ck_assert_int_eq(alloc_dm(&y, 65536, 6, 0, &h2, NULL, NULL), 0);
	ck_assert_int_eq(reg_dm_mr(&y, ypd, h2, 4096, 4096, ZL, 0, &mr), 0);
	ck_assert_uint_eq(dm_used(), 65536);
	dp_close(&y);
	{
		uint64_t deadline = tv_now_ms() + 60000;

		while (dm_used() && tv_now_ms() < deadline)
			usleep(10000);
	}
	ck_assert_uint_eq(dm_used(), 0);
	dp_close(&x);
}
END_TEST

TCase *dm_proto_tcase(void)
{
	TCase *tc = tcase_create("proto");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_proto_lies);
	return tc;
}
