/*
 * traffic_comm_est.c - IBV_EVENT_COMM_EST through the public verbs API on
 * uroce0 (Check, run inside `uroce run` by traffic_comm_est.sh against a
 * private daemon). Sources: ibv_get_async_event(3), IBTA 11.6.3.1; mlx5
 * reports the same event (MLX5_EVENT_TYPE_COMM_EST). An RC QP left in RTR
 * receives three 64 KiB SENDs (MTU 1024) from a QP in RTS: one COMM_EST
 * naming that QP, after the first; none for the sender, none for the later
 * SENDs nor after the receiver moves to RTS; the QP is then destroyed with
 * the event acknowledged.
 */
#include "check_main.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "traffic_verbs.h"

#define DEV "uroce0"
#define WAIT_MS 20000
#define MSG 65536u

static struct ibv_qp *mk_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr qa;
	struct ibv_qp *qp;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qp = ibv_create_qp(pd, &qa);
	ck_assert_ptr_nonnull(qp);
	return qp;
}

/* RESET -> INIT -> RTR towards dest_qpn at dgid, RQ PSN 0 (as tv_rc_connect). */
static void to_rtr(struct ibv_qp *qp, uint32_t dest_qpn, const union ibv_gid *dgid)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
	ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				       IBV_QP_ACCESS_FLAGS), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest_qpn;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *dgid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER), 0);
}

/* One 64 KiB SEND from tx to rx (a receive posted first): both completions
 * exact, the bytes arrived. */
static void one_send(struct ibv_qp *tx, struct ibv_qp *rx, struct ibv_cq *cq, struct ibv_mr *mr,
		     uint8_t *buf, uint8_t seed)
{
	struct ibv_sge rs = { (uintptr_t)(buf + MSG), MSG, mr->lkey };
	struct ibv_sge ss = { (uintptr_t)buf, MSG, mr->lkey };
	struct ibv_recv_wr rw = { .wr_id = 200 + seed, .sg_list = &rs, .num_sge = 1 }, *rbad = NULL;
	struct ibv_send_wr sw = { .wr_id = 100 + seed, .sg_list = &ss, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *sbad = NULL;
	struct ibv_wc wc;
	int got = 0;

	for (unsigned i = 0; i < MSG; i++)
		buf[i] = (uint8_t)(i * 7 + seed);
	memset(buf + MSG, 0, MSG);
	ck_assert_int_eq(ibv_post_recv(rx, &rw, &rbad), 0);
	ck_assert_int_eq(ibv_post_send(tx, &sw, &sbad), 0);
	while (got < 2) {
		ck_assert_int_eq(tv_poll_one(cq, WAIT_MS, &wc), 0);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		if (wc.wr_id == 200u + seed) {
			ck_assert_uint_eq(wc.qp_num, rx->qp_num);
			ck_assert_uint_eq(wc.byte_len, MSG);
		} else {
			ck_assert_uint_eq(wc.wr_id, 100u + seed);
		}
		got++;
	}
	ck_assert_int_eq(memcmp(buf, buf + MSG, MSG), 0);
}

START_TEST(comm_est_once)
{
	struct ibv_context *ctx = tv_open(DEV);
	struct ibv_async_event ev;
	struct ibv_qp_attr a;
	union ibv_gid gid;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *tx, *rx;
	uint8_t *buf = malloc(2 * MSG);

	ck_assert_ptr_nonnull(ctx);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(ibv_query_gid(ctx, 1, 0, &gid), 0);
	pd = ibv_alloc_pd(ctx);
	ck_assert_ptr_nonnull(pd);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	ck_assert_ptr_nonnull(cq);
	mr = ibv_reg_mr(pd, buf, 2 * MSG, IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(mr);
	tx = mk_qp(pd, cq);
	rx = mk_qp(pd, cq);
	to_rtr(rx, tx->qp_num, &gid);
	ck_assert_int_eq(tv_rc_connect(tx, rx->qp_num, &gid, IBV_MTU_1024, 14), 0);
	ck_assert_int_eq(tv_next_async(ctx, 300, &ev), ETIMEDOUT);   /* nothing before a packet */
	one_send(tx, rx, cq, mr, buf, 1);
	ck_assert_int_eq(tv_next_async(ctx, WAIT_MS, &ev), 0);
	ck_assert_int_eq(ev.event_type, IBV_EVENT_COMM_EST);
	ck_assert_ptr_eq(ev.element.qp, rx);
	ibv_ack_async_event(&ev);
	one_send(tx, rx, cq, mr, buf, 2);
	ck_assert_int_eq(tv_next_async(ctx, 300, &ev), ETIMEDOUT);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	ck_assert_int_eq(ibv_modify_qp(rx, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				       IBV_QP_MAX_QP_RD_ATOMIC), 0);
	one_send(tx, rx, cq, mr, buf, 3);
	ck_assert_int_eq(tv_next_async(ctx, 300, &ev), ETIMEDOUT);
	ck_assert_int_eq(ibv_destroy_qp(tx), 0);
	ck_assert_int_eq(ibv_destroy_qp(rx), 0);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
	free(buf);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traffic_comm_est");
	TCase *tc = tcase_create("comm_est");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, comm_est_once);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
