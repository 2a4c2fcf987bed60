/*
 * provider_api.c - the provider through libibverbs' public API only.
 *
 * Run by tests/provider_api.sh inside `uroce run` against a private uroced
 * (`uroce up --mtu 1024 --gid-tbl-len 16 --clock-khz 156250 --clock-bits 48`).
 * Environment from the wrapper:
 *   UROCE_TEST_DEV      device name (uroce0)
 *   UROCE_TEST_LINK     command prefix that flaps the port: "$UROCE link set DEV"
 *   UROCE_TEST_GIDS     expected gid_tbl_len (number of sysfs GID files)
 *   UROCE_TEST_CLOCK_KHZ, UROCE_TEST_CLOCK_MASK  expected hca_core_clock (kHz) and
 *                       completion_timestamp_mask (from --clock-khz / --clock-bits)
 * Every test opens its own context (Check forks per test).
 */
#include "config.h"

#include "check_main.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);
	return v && *v ? v : def;
}

/* Opens the test device; fails the test if it is not listed or does not open. */
static struct ibv_context *open_dev(void)
{
	const char *name = env_or("UROCE_TEST_DEV", "uroce0");
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n;

	list = ibv_get_device_list(&n);
	ck_assert_msg(list != NULL, "ibv_get_device_list: %s", strerror(errno));
	for (int i = 0; i < n; i++)
		if (strcmp(ibv_get_device_name(list[i]), name) == 0)
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	ck_assert_msg(ctx != NULL, "device %s not found or ibv_open_device failed: %s", name,
		      strerror(errno));
	return ctx;
}

START_TEST(test_query_device)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_device_attr_ex ex;
	struct ibv_device_attr legacy;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	memset(&ex, 0xa5, sizeof(ex));
	ck_assert_int_eq(ibv_query_device_ex(ctx, NULL, &ex), 0);
	ck_assert_int_eq(ibv_query_device(ctx, &legacy), 0);
	ck_assert_int_eq(memcmp(&legacy, &ex.orig_attr, sizeof(legacy)), 0);
	ck_assert_uint_eq(ex.orig_attr.vendor_id, 0x02c0de);
	ck_assert_uint_ne(ex.orig_attr.node_guid, 0);
	ck_assert_uint_ne(ex.orig_attr.sys_image_guid, 0);
	ck_assert_int_eq(ex.orig_attr.phys_port_cnt, 1);
	ck_assert_int_ge(ex.orig_attr.max_qp_rd_atom, 1);
	ck_assert_int_ge(ex.orig_attr.max_qp, 1);
	ck_assert_int_ge(ex.orig_attr.max_qp_wr, 1);
	ck_assert_int_ge(ex.orig_attr.max_sge, 1);
	ck_assert_int_ge(ex.orig_attr.max_cqe, 1);
	ck_assert_uint_gt(ex.orig_attr.max_mr_size, 4096);
	/* uroce up --clock-khz / --clock-bits, through the daemon's clock page */
	ck_assert_uint_eq(ex.hca_core_clock, strtoull(env_or("UROCE_TEST_CLOCK_KHZ", "0"), NULL, 0));
	ck_assert_uint_eq(ex.completion_timestamp_mask,
			  strtoull(env_or("UROCE_TEST_CLOCK_MASK", "0"), NULL, 0));
	ck_assert_uint_eq(ex.phys_port_cnt_ex, 1);
	ck_assert_uint_eq(ex.odp_caps.general_caps, IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT);
	ck_assert_int_eq(ctx->num_comp_vectors, (int)ncpu);

	/* a comp_mask in the input that the provider does not know */
	struct ibv_query_device_ex_input in = { .comp_mask = 1 };
	ck_assert_int_eq(ibv_query_device_ex(ctx, &in, &ex), EINVAL);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

START_TEST(test_query_port)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_port_attr pa;
	union ibv_gid gid;
	int gids = atoi(env_or("UROCE_TEST_GIDS", "16"));

	ck_assert_int_eq(ibv_query_port(ctx, 1, &pa), 0);
	ck_assert_int_eq(pa.state, IBV_PORT_ACTIVE);
	ck_assert_int_eq(pa.link_layer, IBV_LINK_LAYER_ETHERNET);
	ck_assert_int_eq(pa.active_mtu, IBV_MTU_1024); /* uroce up --mtu 1024 */
	ck_assert_int_eq(pa.gid_tbl_len, gids);
	ck_assert_int_ge(pa.pkey_tbl_len, 1);
	ck_assert_int_eq(ibv_query_port(ctx, 2, &pa), EINVAL);
	ck_assert_int_eq(ibv_query_port(ctx, 0, &pa), EINVAL);
	/* GID 0 is ::ffff:127.0.0.1; the last index is readable (all zero) */
	ck_assert_int_eq(ibv_query_gid(ctx, 1, 0, &gid), 0);
	static const uint8_t want[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1 };
	ck_assert_int_eq(memcmp(gid.raw, want, 16), 0);
	ck_assert_int_eq(ibv_query_gid(ctx, 1, gids - 1, &gid), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

START_TEST(test_rt_values)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_device_attr_ex ex;
	struct ibv_values_ex v1, v2;

	ck_assert_int_eq(ibv_query_device_ex(ctx, NULL, &ex), 0);
	memset(&v1, 0xff, sizeof(v1));
	v1.comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
	ck_assert_int_eq(ibv_query_rt_values_ex(ctx, &v1), 0);
	ck_assert_uint_eq(v1.comp_mask, IBV_VALUES_MASK_RAW_CLOCK);
	ck_assert_int_eq(v1.raw_clock.tv_sec, 0);
	ck_assert_uint_eq((uint64_t)v1.raw_clock.tv_nsec & ~ex.completion_timestamp_mask, 0);
	v2.comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
	ck_assert_int_eq(ibv_query_rt_values_ex(ctx, &v2), 0);
	/* the counter runs forward (modulo its width: the distance is under half a wrap) */
	uint64_t d = ((uint64_t)v2.raw_clock.tv_nsec - (uint64_t)v1.raw_clock.tv_nsec) &
		     ex.completion_timestamp_mask;
	ck_assert_uint_le(d, ex.completion_timestamp_mask / 2);

	/* unknown bits → EINVAL; nothing asked → nothing filled */
	v1.comp_mask = IBV_VALUES_MASK_RAW_CLOCK | 2;
	ck_assert_int_eq(ibv_query_rt_values_ex(ctx, &v1), EINVAL);
	v1.comp_mask = 0;
	ck_assert_int_eq(ibv_query_rt_values_ex(ctx, &v1), 0);
	ck_assert_uint_eq(v1.comp_mask, 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

#define NMR 64
/* Keys are index<<8 | variant: lkey+1 never names a live MR, a re-registration gets a new key. */
START_TEST(test_mr_keys)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	static char buf[NMR][256];
	struct ibv_mr *mr[NMR];
	uint32_t old_key;

	ck_assert_ptr_nonnull(pd);
	for (int i = 0; i < NMR; i++) {
		mr[i] = ibv_reg_mr(pd, buf[i], sizeof(buf[i]),
				   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		ck_assert_msg(mr[i] != NULL, "reg_mr %d: %s", i, strerror(errno));
		ck_assert_uint_eq(mr[i]->lkey, mr[i]->rkey);
		ck_assert_ptr_eq(mr[i]->addr, buf[i]);
		ck_assert_uint_eq(mr[i]->length, sizeof(buf[i]));
		ck_assert_ptr_eq(mr[i]->pd, pd);
	}
	for (int i = 0; i < NMR; i++)
		for (int j = 0; j < NMR; j++) {
			ck_assert_msg(mr[i]->lkey + 1 != mr[j]->lkey,
				      "lkey+1 of MR %d (0x%x) is the key of MR %d", i, mr[i]->lkey, j);
			if (i != j)
				ck_assert_uint_ne(mr[i]->lkey >> 8, mr[j]->lkey >> 8);
		}
	/* re-registering after dereg must not hand out the same key again */
	old_key = mr[0]->lkey;
	ck_assert_int_eq(ibv_dereg_mr(mr[0]), 0);
	mr[0] = ibv_reg_mr(pd, buf[0], sizeof(buf[0]), IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(mr[0]);
	ck_assert_uint_ne(mr[0]->lkey, old_key);

	/* access flags the IBTA forbids / we do not support */
	errno = 0;
	ck_assert_ptr_null(ibv_reg_mr(pd, buf[1], 16, IBV_ACCESS_REMOTE_WRITE));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(ibv_reg_mr(pd, buf[1], 16, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_HUGETLB));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	/* FLUSH_GLOBAL (1 << 8) is taken; FLUSH_PERSISTENT (1 << 9): no
	 * persistent memory (docs/transport.md, "ATOMIC WRITE and FLUSH") */
	{
		struct ibv_mr *fmr = ibv_reg_mr(pd, buf[1], 16, IBV_ACCESS_LOCAL_WRITE |
						IBV_ACCESS_REMOTE_WRITE | (1u << 8));

		ck_assert_ptr_nonnull(fmr);
		ck_assert_int_eq(ibv_dereg_mr(fmr), 0);
	}
	errno = 0;
	ck_assert_ptr_null(ibv_reg_mr(pd, buf[1], 16, IBV_ACCESS_LOCAL_WRITE | (1u << 9)));
	ck_assert_int_eq(errno, EOPNOTSUPP);

	/* memory the kernel could not pin: EFAULT (ibv_reg_mr(3)) */
	{
		long pg = sysconf(_SC_PAGESIZE);
		char *ro = mmap(NULL, 2 * pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct ibv_mr *m;

		ck_assert_ptr_ne(ro, MAP_FAILED);
		ck_assert_int_eq(munmap(ro + pg, pg), 0);
		errno = 0;
		ck_assert_ptr_null(ibv_reg_mr(pd, ro + pg, pg, IBV_ACCESS_LOCAL_WRITE)); /* unmapped */
		ck_assert_int_eq(errno, EFAULT);
		errno = 0;
		ck_assert_ptr_null(ibv_reg_mr(pd, NULL, pg, 0));
		ck_assert_int_eq(errno, EFAULT);
		errno = 0;
		ck_assert_ptr_null(ibv_reg_mr(pd, ro, pg, IBV_ACCESS_LOCAL_WRITE)); /* read-only */
		ck_assert_int_eq(errno, EFAULT);
		m = ibv_reg_mr(pd, ro, pg, IBV_ACCESS_REMOTE_READ);
		ck_assert_msg(m != NULL, "read-only page, REMOTE_READ: %s", strerror(errno));
		ck_assert_int_eq(ibv_dereg_mr(m), 0);
		munmap(ro, pg);
	}

	ck_assert_int_eq(ibv_dealloc_pd(pd), EBUSY);
	for (int i = 0; i < NMR; i++)
		ck_assert_int_eq(ibv_dereg_mr(mr[i]), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

/* libibverbs' own ibv_create_comp_channel, a CQ on it, armed, destroyed cleanly. */
START_TEST(test_comp_channel)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq_init_attr_ex cqa = { 0 };
	struct ibv_cq *cq, *cq2;
	struct ibv_cq_ex *cqx;
	int type = 0, fd;
	socklen_t len = sizeof(type);
	struct stat st;

	ck_assert_msg(ch != NULL, "ibv_create_comp_channel: %s", strerror(errno));
	fd = ch->fd;
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_int_eq(getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len), 0);
	ck_assert_int_eq(type, SOCK_SEQPACKET);
	ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);

	cq = ibv_create_cq(ctx, 16, (void *)0x1234, ch, 0);
	ck_assert_msg(cq != NULL, "ibv_create_cq on a channel: %s", strerror(errno));
	ck_assert_ptr_eq(cq->channel, ch);
	ck_assert_ptr_eq(cq->cq_context, (void *)0x1234);
	ck_assert_int_ge(cq->cqe, 16);
	ck_assert_int_eq(ibv_req_notify_cq(cq, 0), 0);
	ck_assert_int_eq(ibv_req_notify_cq(cq, 1), 0);

	/* a second CQ, extended, on the same channel */
	cqa.cqe = 8;
	cqa.channel = ch;
	cqa.wc_flags = IBV_WC_STANDARD_FLAGS;
	cqx = ibv_create_cq_ex(ctx, &cqa);
	ck_assert_msg(cqx != NULL, "ibv_create_cq_ex on a channel: %s", strerror(errno));
	cq2 = ibv_cq_ex_to_cq(cqx);
	ck_assert_int_eq(ibv_req_notify_cq(cq2, 0), 0);

	/* nothing completed, so no event is pending on the channel */
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);

	/* libibverbs refuses to destroy a channel that CQs still use */
	ck_assert_int_eq(ibv_destroy_comp_channel(ch), EBUSY);
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
	ck_assert_int_eq(ibv_destroy_cq(cq2), 0);
	ck_assert_int_eq(ibv_destroy_comp_channel(ch), 0);
	errno = 0;
	ck_assert_int_eq(fcntl(fd, F_GETFD), -1);
	ck_assert_int_eq(errno, EBADF);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

/* A channel fd that ibv_create_comp_channel did not make is refused, not used. */
START_TEST(test_foreign_channel)
{
	struct ibv_context *ctx = open_dev();
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	struct ibv_comp_channel fake = { .context = ctx, .fd = sv[0], .refcnt = 0 };
	errno = 0;
	ck_assert_ptr_null(ibv_create_cq(ctx, 4, NULL, &fake, 0));
	ck_assert_int_eq(errno, EINVAL);
	close(sv[0]);
	close(sv[1]);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

struct cq_case {
	const char *name;
	int cqe_delta;       /* cqe = max_cqe + delta, or 16 when 0 with delta_is_abs */
	int comp_vector_add; /* comp_vector = num_comp_vectors + this, or -1 => 0 */
	uint64_t wc_flags;
	uint32_t comp_mask, flags;
	int want_errno;      /* 0 = success */
};

#define CQE_ABS 1000000 /* cqe_delta >= this: cqe = cqe_delta - CQE_ABS */
static const struct cq_case cq_cases[] = {
	{ "cqe = max_cqe", 0, -1, 0, 0, 0, 0 },
	{ "cqe = max_cqe + 1", 1, -1, 0, 0, 0, EINVAL },
	{ "cqe = 0", CQE_ABS + 0, -1, 0, 0, 0, EINVAL },
	{ "comp_vector = num_comp_vectors", CQE_ABS + 4, 0, 0, 0, 0, EINVAL },
	{ "comp_vector = num_comp_vectors + 1", CQE_ABS + 4, 1, 0, 0, 0, EINVAL },
	{ "standard wc_flags", CQE_ABS + 4, -1, IBV_WC_STANDARD_FLAGS, 0, 0, 0 },
	{ "completion timestamp", CQE_ABS + 4, -1, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, 0, 0, 0 },
	{ "wallclock timestamp", CQE_ABS + 4, -1, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK, 0, 0, 0 },
	{ "cvlan", CQE_ABS + 4, -1, IBV_WC_EX_WITH_CVLAN, 0, 0, 0 },
	{ "flow tag", CQE_ABS + 4, -1, IBV_WC_EX_WITH_FLOW_TAG, 0, 0, 0 },
	{ "tm info", CQE_ABS + 4, -1, IBV_WC_EX_WITH_TM_INFO, 0, 0, 0 },
	{ "unknown wc_flag 1 << 12", CQE_ABS + 4, -1, 1ull << 12, 0, 0, EOPNOTSUPP },
	{ "single threaded", CQE_ABS + 4, -1, 0, IBV_CQ_INIT_ATTR_MASK_FLAGS,
	  IBV_CREATE_CQ_ATTR_SINGLE_THREADED, 0 },
	{ "ignore overrun", CQE_ABS + 4, -1, 0, IBV_CQ_INIT_ATTR_MASK_FLAGS,
	  IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN, 0 },
	{ "unknown create flag", CQE_ABS + 4, -1, 0, IBV_CQ_INIT_ATTR_MASK_FLAGS, 1u << 7, EOPNOTSUPP },
	{ "MASK_PD without a parent domain", CQE_ABS + 4, -1, 0, IBV_CQ_INIT_ATTR_MASK_PD, 0, EINVAL },
	{ "unknown comp_mask", CQE_ABS + 4, -1, 0, 1u << 5, 0, EINVAL },
};

START_TEST(test_create_cq_cases)
{
	const struct cq_case *c = &cq_cases[_i];
	struct ibv_context *ctx = open_dev();
	struct ibv_device_attr attr;
	struct ibv_cq_init_attr_ex a = { 0 };
	struct ibv_cq_ex *cq;
	struct ibv_poll_cq_attr pa = { 0 };

	ck_assert_int_eq(ibv_query_device(ctx, &attr), 0);
	a.cqe = c->cqe_delta >= CQE_ABS ? (uint32_t)(c->cqe_delta - CQE_ABS)
					: (uint32_t)(attr.max_cqe + c->cqe_delta);
	a.comp_vector = c->comp_vector_add < 0 ? 0 :
			(uint32_t)(ctx->num_comp_vectors + c->comp_vector_add);
	a.wc_flags = c->wc_flags;
	a.comp_mask = c->comp_mask;
	a.flags = c->flags;
	errno = 0;
	cq = ibv_create_cq_ex(ctx, &a);
	if (c->want_errno) {
		ck_assert_msg(cq == NULL, "%s: created, expected errno %d", c->name, c->want_errno);
		ck_assert_msg(errno == c->want_errno, "%s: errno %d (%s), expected %d", c->name,
			      errno, strerror(errno), c->want_errno);
	} else {
		ck_assert_msg(cq != NULL, "%s: %s", c->name, strerror(errno));
		ck_assert_int_ge(ibv_cq_ex_to_cq(cq)->cqe, (int)a.cqe);
		/* an empty CQ: the iterator says ENOENT, the legacy poll 0 */
		ck_assert_int_eq(ibv_start_poll(cq, &pa), ENOENT);
		struct ibv_wc wc;
		ck_assert_int_eq(ibv_poll_cq(ibv_cq_ex_to_cq(cq), 1, &wc), 0);
		ck_assert_int_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
	}
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq, enum ibv_qp_type t)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = t,
		.cap = { .max_send_wr = 10, .max_recv_wr = 3, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	return ibv_create_qp(pd, &ia);
}

START_TEST(test_qp_lifecycle)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct ibv_qp *qp, *qp2;

	ck_assert_ptr_nonnull(pd);
	ck_assert_ptr_nonnull(cq);
	qp = make_qp(pd, cq, IBV_QPT_RC);
	ck_assert_msg(qp != NULL, "create RC QP: %s", strerror(errno));
	ck_assert_uint_gt(qp->qp_num, 1);
	ck_assert_uint_lt(qp->qp_num, 1u << 24);
	ck_assert_int_eq(qp->state, IBV_QPS_RESET);
	ck_assert_int_eq(qp->qp_type, IBV_QPT_RC);
	ck_assert_ptr_eq(qp->pd, pd);
	ck_assert_ptr_eq(qp->send_cq, cq);
	qp2 = make_qp(pd, cq, IBV_QPT_UD);
	ck_assert_ptr_nonnull(qp2);
	ck_assert_uint_ne(qp2->qp_num, qp->qp_num);

	/* RESET -> INIT needs STATE|PKEY_INDEX|PORT|ACCESS_FLAGS for RC */
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	ck_assert_int_eq(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PORT), EINVAL);
	ck_assert_int_eq(qp->state, IBV_QPS_RESET);
	attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	ck_assert_int_eq(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					       IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	ck_assert_int_eq(qp->state, IBV_QPS_INIT);
	/* INIT -> RTS skips RTR: not a legal transition */
	attr.qp_state = IBV_QPS_RTS;
	ck_assert_int_eq(ibv_modify_qp(qp, &attr, IBV_QP_STATE), EINVAL);

	memset(&attr, 0, sizeof(attr));
	ck_assert_int_eq(ibv_query_qp(qp, &attr, IBV_QP_STATE | IBV_QP_CAP, &init), 0);
	ck_assert_int_eq(attr.qp_state, IBV_QPS_INIT);
	ck_assert_int_eq(init.qp_type, IBV_QPT_RC);
	ck_assert_uint_ge(init.cap.max_send_wr, 10);
	ck_assert_uint_ge(init.cap.max_recv_wr, 3);
	ck_assert_ptr_eq(init.send_cq, cq);

	/* any state -> ERR, then -> RESET */
	attr.qp_state = IBV_QPS_ERR;
	ck_assert_int_eq(ibv_modify_qp(qp, &attr, IBV_QP_STATE), 0);
	ck_assert_int_eq(qp->state, IBV_QPS_ERR);
	attr.qp_state = IBV_QPS_RESET;
	ck_assert_int_eq(ibv_modify_qp(qp, &attr, IBV_QP_STATE), 0);

	/* the CQ is in use */
	ck_assert_int_eq(ibv_destroy_cq(cq), EBUSY);
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
	ck_assert_int_eq(ibv_destroy_qp(qp2), 0);
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

/* QP types and features the device does not have fail with EOPNOTSUPP (pyverbs skips). */
START_TEST(test_qp_unsupported)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp_init_attr_ex ex;

	errno = 0;
	ck_assert_ptr_null(make_qp(pd, cq, IBV_QPT_DRIVER));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	memset(&ex, 0, sizeof(ex));
	ex.qp_type = IBV_QPT_RC;
	ex.send_cq = ex.recv_cq = cq;
	ex.cap.max_send_wr = ex.cap.max_recv_wr = 1;
	ex.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ex.pd = pd;
	/* send_ops_flags uroce cannot carry (the rest: traffic_qpex.c) */
	ex.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_TSO;
	errno = 0;
	ck_assert_ptr_null(ibv_create_qp_ex(ctx, &ex));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	ex.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;
	ex.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	errno = 0;
	ck_assert_ptr_null(ibv_create_qp_ex(ctx, &ex));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

START_TEST(test_ah)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_ah_attr a;
	struct ibv_ah *ah;

	memset(&a, 0, sizeof(a));
	a.port_num = 1;
	a.dlid = 1;
	errno = 0;
	ck_assert_ptr_null(ibv_create_ah(pd, &a)); /* RoCE needs a GRH */
	ck_assert_int_eq(errno, EINVAL);
	a.is_global = 1;
	a.grh.hop_limit = 64;
	ck_assert_int_eq(ibv_query_gid(ctx, 1, 0, &a.grh.dgid), 0);
	ah = ibv_create_ah(pd, &a);
	ck_assert_msg(ah != NULL, "create_ah with GRH: %s", strerror(errno));
	ck_assert_ptr_eq(ah->pd, pd);
	ck_assert_int_eq(ibv_dealloc_pd(pd), EBUSY);
	ck_assert_int_eq(ibv_destroy_ah(ah), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

/* Runs "$UROCE_TEST_LINK down|up"; the command must succeed. */
static void link_set(const char *state)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "%s %s >/dev/null", env_or("UROCE_TEST_LINK", "false"), state);
	ck_assert_msg(system(cmd) == 0, "'%s' failed", cmd);
}

/* Waits (at most 20 s, a hang guard) for one async event. */
static void expect_async(struct ibv_context *ctx, enum ibv_event_type type)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	ck_assert_msg(poll(&pfd, 1, 20000) == 1, "no async event arrived");
	ck_assert_int_eq(ibv_get_async_event(ctx, &ev), 0);
	ck_assert_msg(ev.event_type == type, "event %s, expected %s",
		      ibv_event_type_str(ev.event_type), ibv_event_type_str(type));
	ck_assert_int_eq(ev.element.port_num, 1);
	ibv_ack_async_event(&ev);
}

START_TEST(test_port_events)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_port_attr pa;

	link_set("down");
	expect_async(ctx, IBV_EVENT_PORT_ERR);
	ck_assert_int_eq(ibv_query_port(ctx, 1, &pa), 0);
	ck_assert_int_eq(pa.state, IBV_PORT_DOWN);
	link_set("up");
	expect_async(ctx, IBV_EVENT_PORT_ACTIVE);
	ck_assert_int_eq(ibv_query_port(ctx, 1, &pa), 0);
	ck_assert_int_eq(pa.state, IBV_PORT_ACTIVE);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

/*
 * A kernel command other than CREATE_COMP_CHANNEL written by libibverbs on
 * our cmd_fd (/dev/null) must fail with EOPNOTSUPP, not "succeed" silently.
 * ibv_cmd_dealloc_pd is one of libibverbs' own (private, IBVERBS_PRIVATE_34)
 * command writers; the provider itself never calls it.
 */
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
START_TEST(test_cmd_write_refused)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);

	ck_assert_ptr_nonnull(pd);
	ck_assert_int_eq(ibv_cmd_dealloc_pd(pd), EOPNOTSUPP);
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

/* ibv_open_qp through a private XRC domain (no file names it to another
 * process): EINVAL (docs/xrc.md; traffic_xrc's open_qp case opens one). */
START_TEST(test_open_qp_private_xrcd)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
					 .fd = -1, .oflags = O_CREAT };
	struct ibv_qp_open_attr oa = { .comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
						    IBV_QP_OPEN_ATTR_TYPE,
				       .qp_num = 0x11, .qp_type = IBV_QPT_XRC_RECV };

	oa.xrcd = ibv_open_xrcd(ctx, &xa);
	ck_assert_ptr_nonnull(oa.xrcd);
	errno = 0;
	ck_assert_ptr_null(ibv_open_qp(ctx, &oa));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(ibv_close_xrcd(oa.xrcd), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

/* Descriptors open in this process (entries of /proc/self/fd). */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* 50 full open/create/destroy/close cycles leave exactly the descriptors there were. */
START_TEST(test_no_fd_leak)
{
	int before, after;

	/* the first open loads the provider and installs the hooks for good */
	ck_assert_int_eq(ibv_close_device(open_dev()), 0);
	before = count_fds();
	for (int i = 0; i < 50; i++) {
		struct ibv_context *ctx = open_dev();
		struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
		struct ibv_pd *pd = ibv_alloc_pd(ctx);
		struct ibv_cq *cq;
		struct ibv_qp *qp;
		static char buf[64];
		struct ibv_mr *mr;

		ck_assert_ptr_nonnull(ch);
		ck_assert_ptr_nonnull(pd);
		cq = ibv_create_cq(ctx, 8, NULL, ch, 0);
		ck_assert_ptr_nonnull(cq);
		ck_assert_int_eq(ibv_req_notify_cq(cq, 0), 0);
		qp = make_qp(pd, cq, IBV_QPT_RC);
		ck_assert_ptr_nonnull(qp);
		mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
		ck_assert_ptr_nonnull(mr);
		ck_assert_int_eq(ibv_dereg_mr(mr), 0);
		ck_assert_int_eq(ibv_destroy_qp(qp), 0);
		ck_assert_int_eq(ibv_destroy_cq(cq), 0);
		ck_assert_int_eq(ibv_destroy_comp_channel(ch), 0);
		ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
		ck_assert_int_eq(ibv_close_device(ctx), 0);
	}
	after = count_fds();
	ck_assert_int_eq(after, before);
}
END_TEST

/* Two contexts in one process (as pyverbs' traffic tests use): each has its own channels. */
START_TEST(test_two_contexts)
{
	struct ibv_context *a = open_dev(), *b = open_dev();
	struct ibv_comp_channel *ca = ibv_create_comp_channel(a);
	struct ibv_comp_channel *cb = ibv_create_comp_channel(b);
	struct ibv_cq *qa, *qb;

	ck_assert_ptr_nonnull(ca);
	ck_assert_ptr_nonnull(cb);
	ck_assert_int_ne(ca->fd, cb->fd);
	ck_assert_int_ne(a->cmd_fd, b->cmd_fd);
	qa = ibv_create_cq(a, 4, NULL, ca, 0);
	qb = ibv_create_cq(b, 4, NULL, cb, 0);
	ck_assert_ptr_nonnull(qa);
	ck_assert_ptr_nonnull(qb);
	/* another context's objects are refused, not confused with ours */
	{
		struct ibv_pd *pa = ibv_alloc_pd(a), *pb = ibv_alloc_pd(b);
		struct ibv_qp_init_attr ia = {
			.send_cq = qb, .recv_cq = qa, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		};
		struct ibv_qp_init_attr_ex ex = {
			.send_cq = qa, .recv_cq = qa, .qp_type = IBV_QPT_RC,
			.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pb,
			.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		};

		ck_assert_ptr_nonnull(pa);
		ck_assert_ptr_nonnull(pb);
		errno = 0;
		ck_assert_ptr_null(ibv_create_qp(pa, &ia)); /* send CQ of b */
		ck_assert_int_eq(errno, EINVAL);
		ia.send_cq = qa;
		ia.recv_cq = qb;
		errno = 0;
		ck_assert_ptr_null(ibv_create_qp(pa, &ia)); /* receive CQ of b */
		ck_assert_int_eq(errno, EINVAL);
		errno = 0;
		ck_assert_ptr_null(ibv_create_qp_ex(a, &ex)); /* PD of b */
		ck_assert_int_eq(errno, EINVAL);
		errno = 0;
		ck_assert_ptr_null(ibv_create_cq(a, 4, NULL, cb, 0)); /* channel of b */
		ck_assert_int_eq(errno, EINVAL);
		ck_assert_int_eq(ibv_dealloc_pd(pa), 0);
		ck_assert_int_eq(ibv_dealloc_pd(pb), 0);
	}
	ck_assert_int_eq(ibv_destroy_cq(qa), 0);
	ck_assert_int_eq(ibv_destroy_comp_channel(ca), 0);
	ck_assert_int_eq(ibv_close_device(a), 0);
	/* closing a does not disturb b */
	ck_assert_int_eq(ibv_req_notify_cq(qb, 0), 0);
	ck_assert_int_eq(ibv_destroy_cq(qb), 0);
	ck_assert_int_eq(ibv_destroy_comp_channel(cb), 0);
	ck_assert_int_eq(ibv_close_device(b), 0);
}
END_TEST

/* Several threads share one context: requests are serialised, every reply matches. */
#define NTHREADS 4
#define NITER 200
static void *pd_churn(void *arg)
{
	struct ibv_context *ctx = arg;
	static char buf[NTHREADS][64];
	static int next;
	int me = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);

	for (int i = 0; i < NITER; i++) {
		struct ibv_pd *pd = ibv_alloc_pd(ctx);
		struct ibv_mr *mr;

		if (!pd)
			return (void *)1;
		mr = ibv_reg_mr(pd, buf[me], sizeof(buf[me]), IBV_ACCESS_LOCAL_WRITE);
		if (!mr || mr->pd != pd || ibv_dereg_mr(mr) || ibv_dealloc_pd(pd))
			return (void *)2;
	}
	return NULL;
}

START_TEST(test_threads)
{
	struct ibv_context *ctx = open_dev();
	pthread_t t[NTHREADS];

	for (int i = 0; i < NTHREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, pd_churn, ctx), 0);
	for (int i = 0; i < NTHREADS; i++) {
		void *ret;

		ck_assert_int_eq(pthread_join(t[i], &ret), 0);
		ck_assert_msg(ret == NULL, "thread %d failed at step %ld", i, (long)(intptr_t)ret);
	}
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

/* Objects held across the daemon's end; the destroys must still succeed. */
struct held {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_comp_channel *ch;
};

static void hold(struct held *h)
{
	static char buf[64];

	h->ctx = open_dev();
	h->ch = ibv_create_comp_channel(h->ctx);
	h->pd = ibv_alloc_pd(h->ctx);
	ck_assert_ptr_nonnull(h->ch);
	ck_assert_ptr_nonnull(h->pd);
	h->cq = ibv_create_cq(h->ctx, 8, NULL, h->ch, 0);
	ck_assert_ptr_nonnull(h->cq);
	h->qp = make_qp(h->pd, h->cq, IBV_QPT_RC);
	ck_assert_ptr_nonnull(h->qp);
	h->mr = ibv_reg_mr(h->pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(h->mr);
}

/* After the daemon is gone: requests fail with want_errno, destroys free locally. */
static void after_daemon(struct held *h, int want_errno)
{
	struct ibv_port_attr pa;

	errno = 0;
	ck_assert_ptr_null(ibv_alloc_pd(h->ctx));
	ck_assert_int_eq(errno, want_errno);
	ck_assert_int_eq(ibv_query_port(h->ctx, 1, &pa), want_errno);
	ck_assert_int_eq(ibv_dereg_mr(h->mr), 0);
	ck_assert_int_eq(ibv_destroy_qp(h->qp), 0);
	ck_assert_int_eq(ibv_destroy_cq(h->cq), 0);
	ck_assert_int_eq(ibv_destroy_comp_channel(h->ch), 0);
	ck_assert_int_eq(ibv_dealloc_pd(h->pd), 0);
	ck_assert_int_eq(ibv_close_device(h->ctx), 0);
}

/* RESET -> INIT -> RTR -> RTS for a UD QP (no peer needed). */
static void ud_to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111 };

	ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					       IBV_QP_QKEY), 0);
	a.qp_state = IBV_QPS_RTR;
	ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
}

/* An RC QP on cq in INIT with one receive posted, armed CQ, then moved to ERR:
 * the flushed receive completes and fires cq's completion event. */
static struct ibv_qp *flush_one_recv(struct ibv_pd *pd, struct ibv_cq *cq, struct ibv_mr *mr)
{
	struct ibv_qp *qp = make_qp(pd, cq, IBV_QPT_RC);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_sge sge = { .addr = (uintptr_t)mr->addr, .length = 16, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 }, *bad;

	ck_assert_ptr_nonnull(qp);
	ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					       IBV_QP_ACCESS_FLAGS), 0);
	ck_assert_int_eq(ibv_post_recv(qp, &wr, &bad), 0);
	ck_assert_int_eq(ibv_req_notify_cq(cq, 0), 0);
	a.qp_state = IBV_QPS_ERR;
	ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	return qp;
}

/*
 * A CQ destroyed while its completion event sits unread in the channel:
 * ibv_destroy_cq returns 0 (it waits only for events the application read,
 * as over the kernel; it used to wait forever), and the channel, shared with
 * a second CQ, then delivers exactly the second CQ's event, never the freed
 * one's.
 */
START_TEST(test_destroy_cq_unread_event)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	static char buf[64];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_cq *cq1 = ibv_create_cq(ctx, 4, NULL, ch, 0);
	struct ibv_cq *cq2 = ibv_create_cq(ctx, 4, (void *)0x2222, ch, 0);
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct ibv_qp *qp1, *qp2;
	struct ibv_cq *ev_cq;
	struct ibv_wc wc;
	void *ev_ctx;

	ck_assert_ptr_nonnull(mr);
	ck_assert_ptr_nonnull(cq1);
	ck_assert_ptr_nonnull(cq2);
	qp1 = flush_one_recv(pd, cq1, mr);
	/* wait (hang guard only) until cq1's event is in the channel */
	ck_assert_int_eq(poll(&pfd, 1, 20000), 1);
	qp2 = flush_one_recv(pd, cq2, mr);
	ck_assert_int_eq(ibv_destroy_qp(qp1), 0);
	ck_assert_int_eq(ibv_destroy_cq(cq1), 0);
	/* cq2's event: wait for its CQE, then for the record */
	for (int i = 0; i < 2000 && ibv_poll_cq(cq2, 1, &wc) == 0; i++)
		poll(NULL, 0, 10);
	ck_assert_int_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(poll(&pfd, 1, 20000), 1);
	ck_assert_int_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	ck_assert_ptr_eq(ev_cq, cq2);
	ck_assert_ptr_eq(ev_ctx, (void *)0x2222);
	ibv_ack_cq_events(cq2, 1);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	ck_assert_int_eq(ibv_destroy_qp(qp2), 0);
	ck_assert_int_eq(ibv_destroy_cq(cq2), 0);
	ck_assert_int_eq(ibv_destroy_comp_channel(ch), 0);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

/*
 * A QP destroyed while its async event (SQ_DRAINED) is unread: ibv_destroy_qp
 * returns 0 (it used to wait forever for an ack of an event nobody read);
 * the late event still names the QP, and acking it touches valid memory.
 */
START_TEST(test_destroy_qp_unread_async)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp *qp = make_qp(pd, cq, IBV_QPT_UD);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_SQD, .en_sqd_async_notify = 1 };
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	ck_assert_ptr_nonnull(qp);
	ud_to_rts(qp);
	ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY), 0);
	ck_assert_int_eq(poll(&pfd, 1, 20000), 1);
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
	ck_assert_int_eq(ibv_get_async_event(ctx, &ev), 0);
	ck_assert_int_eq(ev.event_type, IBV_EVENT_SQ_DRAINED);
	ck_assert_ptr_eq(ev.element.qp, qp);
	ibv_ack_async_event(&ev);
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

/* The same event read and acked before the destroy: the ordinary path. */
START_TEST(test_destroy_qp_acked_async)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp *qp = make_qp(pd, cq, IBV_QPT_UD);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_SQD, .en_sqd_async_notify = 1 };
	struct ibv_async_event ev;

	ck_assert_ptr_nonnull(qp);
	ud_to_rts(qp);
	ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY), 0);
	ck_assert_int_eq(ibv_get_async_event(ctx, &ev), 0);
	ck_assert_int_eq(ev.event_type, IBV_EVENT_SQ_DRAINED);
	ck_assert_ptr_eq(ev.element.qp, qp);
	ibv_ack_async_event(&ev);
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

/*
 * A fork child using the parent's context gets EIO (one line on stderr)
 * instead of sharing the parent's control connection, whose replies it
 * would steal; the parent's requests are unaffected.
 */
START_TEST(test_fork_child)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_pd *pd;
	int status;
	pid_t child;

	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		int bad = 0;

		for (int i = 0; i < 100; i++) {
			errno = 0;
			pd = ibv_alloc_pd(ctx);
			if (pd || errno != EIO)
				bad++;
		}
		_exit(bad ? 1 : 0);
	}
	for (int i = 0; i < 100; i++) {
		pd = ibv_alloc_pd(ctx);
		ck_assert_msg(pd != NULL, "parent alloc_pd %d: %s", i, strerror(errno));
		ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	}
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "child: alloc_pd on the parent's context did not fail with EIO");
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

/*
 * Run with /proc hidden (provider_api.sh), the GOT hooks cannot be installed:
 * ibv_create_comp_channel must fail (EBADF) instead of returning the
 * uninitialised fd of libibverbs' response; CQs without a channel still work.
 */
START_TEST(test_no_hooks)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_cq *cq;

	ck_assert_int_eq(access("/proc/self/maps", F_OK), -1);
	errno = 0;
	ck_assert_ptr_null(ibv_create_comp_channel(ctx));
	ck_assert_int_eq(errno, EBADF);
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	ck_assert_ptr_nonnull(cq);
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

/* Runs a shell command from the environment variable var; it must succeed. */
static void run_env_cmd(const char *var)
{
	const char *cmd = getenv(var);

	ck_assert_msg(cmd && *cmd, "%s is not set", var);
	ck_assert_msg(system(cmd) == 0, "'%s' failed", cmd);
}

/*
 * `uroce down` (the daemon's clean shutdown): IBV_EVENT_DEVICE_FATAL arrives
 * through ibv_get_async_event, the next read fails with EIO (as uverbs'
 * event file after disassociation); later requests fail with EIO.
 */
START_TEST(test_daemon_shutdown)
{
	struct ibv_async_event ev;
	struct held h;
	struct pollfd pfd;

	hold(&h);
	run_env_cmd("UROCE_TEST_SHUTDOWN");
	pfd = (struct pollfd){ .fd = h.ctx->async_fd, .events = POLLIN };
	ck_assert_msg(poll(&pfd, 1, 20000) == 1, "no async event after shutdown");
	ck_assert_int_eq(ibv_get_async_event(h.ctx, &ev), 0);
	ck_assert_int_eq(ev.event_type, IBV_EVENT_DEVICE_FATAL);
	ibv_ack_async_event(&ev);
	errno = 0;
	ck_assert_int_eq(ibv_get_async_event(h.ctx, &ev), -1);
	ck_assert_int_eq(errno, EIO);
	after_daemon(&h, EIO);
}
END_TEST

/*
 * The daemon killed (SIGKILL): the end of file on async_fd becomes one
 * IBV_EVENT_DEVICE_FATAL, then EIO; requests fail with EIO, nothing hangs.
 */
START_TEST(test_daemon_killed)
{
	struct ibv_async_event ev;
	struct held h;

	hold(&h);
	run_env_cmd("UROCE_TEST_KILL");
	ck_assert_int_eq(ibv_get_async_event(h.ctx, &ev), 0);
	ck_assert_int_eq(ev.event_type, IBV_EVENT_DEVICE_FATAL);
	ibv_ack_async_event(&ev);
	errno = 0;
	ck_assert_int_eq(ibv_get_async_event(h.ctx, &ev), -1);
	ck_assert_int_eq(errno, EIO);
	after_daemon(&h, EIO);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("provider_api");
	TCase *tc = tcase_create("api");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_query_device);
	tcase_add_test(tc, test_query_port);
	tcase_add_test(tc, test_rt_values);
	tcase_add_test(tc, test_mr_keys);
	tcase_add_test(tc, test_comp_channel);
	tcase_add_test(tc, test_foreign_channel);
	tcase_add_loop_test(tc, test_create_cq_cases, 0,
			    (int)(sizeof(cq_cases) / sizeof(cq_cases[0])));
	tcase_add_test(tc, test_qp_lifecycle);
	tcase_add_test(tc, test_qp_unsupported);
	tcase_add_test(tc, test_ah);
	tcase_add_test(tc, test_open_qp_private_xrcd);
	tcase_add_test(tc, test_cmd_write_refused);
	tcase_add_test(tc, test_two_contexts);
	tcase_add_test(tc, test_threads);
	tcase_add_test(tc, test_no_fd_leak);
	tcase_add_test(tc, test_port_events);
	tcase_add_test(tc, test_destroy_cq_unread_event);
	tcase_add_test(tc, test_destroy_qp_unread_async);
	tcase_add_test(tc, test_destroy_qp_acked_async);
	tcase_add_test(tc, test_fork_child);
	suite_add_tcase(s, tc);
	/* These end the daemon: the wrapper runs each alone (CK_RUN_CASE) on a fresh one. */
	tc = tcase_create("shutdown");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_daemon_shutdown);
	suite_add_tcase(s, tc);
	tc = tcase_create("nohooks");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_no_hooks);
	suite_add_tcase(s, tc);
	tc = tcase_create("killed");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_daemon_killed);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_ENV);
}
