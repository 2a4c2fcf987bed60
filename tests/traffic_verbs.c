/*
 * traffic_verbs.c - the verbs helpers of traffic_verbs.h (public API only).
 * QP attributes follow what ibv_rc_pingpong and pyverbs use
 * (docs/clients.md §1, §3).
 */
#include "config.h"

#include "traffic_verbs.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

uint64_t tv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct ibv_context *tv_open(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	if (!list) {
		perror("ibv_get_device_list");
		return NULL;
	}
	for (int i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name)) {
			ctx = ibv_open_device(list[i]);
			if (!ctx)
				perror("ibv_open_device");
			break;
		}
	if (!ctx)
		fprintf(stderr, "device %s not opened\n", name);
	ibv_free_device_list(list);
	return ctx;
}

static void fill_av(struct ibv_ah_attr *av, const union ibv_gid *dgid)
{
	memset(av, 0, sizeof(*av));
	av->is_global = 1;
	av->grh.dgid = *dgid;
	av->grh.sgid_index = 0;
	av->grh.hop_limit = 1;
	av->port_num = 1;
}

int tv_rc_connect(struct ibv_qp *qp, uint32_t dest_qpn, const union ibv_gid *dgid,
		  enum ibv_mtu mtu, uint8_t timeout)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	int err;

	if ((err = ibv_modify_qp(qp, &a, mask)))
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = 0;
	fill_av(&a.ah_attr, dgid);
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
	       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	if ((err = ibv_modify_qp(qp, &a, mask)))
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	a.timeout = timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
	       IBV_QP_MAX_QP_RD_ATOMIC;
	return ibv_modify_qp(qp, &a, mask);
}

int tv_ud_ready(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qkey = TV_QKEY,
	};
	int err;

	if ((err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)))
		return err;
	a.qp_state = IBV_QPS_RTR;
	if ((err = ibv_modify_qp(qp, &a, IBV_QP_STATE)))
		return err;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

struct ibv_ah *tv_ah(struct ibv_pd *pd, const union ibv_gid *dgid)
{
	struct ibv_ah_attr av;

	fill_av(&av, dgid);
	return ibv_create_ah(pd, &av);
}

int tv_poll_one(struct ibv_cq *cq, int timeout_ms, struct ibv_wc *wc)
{
	uint64_t deadline = tv_now_ms() + (uint64_t)timeout_ms;
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0)
		if (tv_now_ms() >= deadline)
			return ETIMEDOUT;
	return n == 1 ? 0 : EIO;
}

int tv_start_poll(struct ibv_cq_ex *cq, int timeout_ms)
{
	struct ibv_poll_cq_attr attr = { 0 };
	uint64_t deadline = tv_now_ms() + (uint64_t)timeout_ms;
	int ret;

	while ((ret = ibv_start_poll(cq, &attr)) == ENOENT) {
		if (tv_now_ms() > deadline)
			return ETIMEDOUT;
	}
	return ret;
}

int tv_next_async(struct ibv_context *ctx, int ms, struct ibv_async_event *ev)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	int fl = fcntl(ctx->async_fd, F_GETFL);

	if (fl < 0 || fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return errno;
	if (poll(&p, 1, ms) != 1)
		return ETIMEDOUT;
	return ibv_get_async_event(ctx, ev) ? errno : 0;
}
