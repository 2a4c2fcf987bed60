/*
 * provider_cq_ring.c - the NIC side of the provider's poll tests
 * (provider_cq_ring.h).
 */
#include "config.h"

#include "check_main.h"
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "provider_cq_ring.h"
struct fixture *fx_new_n(uint64_t wc_flags, bool single_threaded, uint32_t nent)
{
	struct fixture *f = calloc(1, sizeof(*f));

	ck_assert_ptr_nonnull(f);
	pthread_mutex_init(&f->ctx.qp_lock, NULL);
	f->ctx.clock = &f->clock;

	f->qp.vqp.qp.qp_num = QPN;
	ck_assert_int_eq(uroce_qp_table_insert(&f->ctx, &f->qp), 0);
	f->qp.cap.max_send_wr = 8;
	f->qp.cap.max_recv_wr = 4;
	f->qp.sq_wrid = calloc(8, sizeof(uint64_t));
	f->qp.sq_wqe_head = calloc(8, sizeof(uint32_t));
	f->qp.rq_wrid = calloc(4, sizeof(uint64_t));
	for (int i = 0; i < 8; i++) {
		f->qp.sq_wrid[i] = 0x5000 + (uint64_t)i;
		f->qp.sq_wqe_head[i] = (uint32_t)i;
	}
	for (int i = 0; i < 4; i++)
		f->qp.rq_wrid[i] = 0x7000 + (uint64_t)i;

	f->cq.vcq.cq.context = &f->ctx.vctx.context;
	f->cq.nent = nent;
	f->cq.wc_flags = wc_flags;
	f->cq.single_threaded = single_threaded;
	f->cq.ring_size = (size_t)uroce_cq_ring_size(nent);
	f->cq.ring = aligned_alloc(4096, f->cq.ring_size);
	ck_assert_ptr_nonnull(f->cq.ring);
	memset(f->cq.ring, 0, f->cq.ring_size);
	f->cq.hdr = f->cq.ring;
	f->cq.cqes = (struct mlx5_cqe64 *)((char *)f->cq.ring + UROCE_CQ_RING_HDR_SIZE);
	for (uint32_t i = 0; i < nent; i++)
		f->cq.cqes[i].op_own = MLX5_CQE_INVALID << 4;
	pthread_spin_init(&f->cq.lock, PTHREAD_PROCESS_PRIVATE);
	uroce_qp_cache_reset(&f->cq.qpc);
	uroce_cq_fill_ex_ops(&f->cq);
	return f;
}

void fx_free(struct fixture *f)
{
	uroce_qp_table_remove(&f->ctx, &f->qp);
	ck_assert_ptr_null(uroce_find_qp(&f->ctx, QPN));
	uroce_qp_table_free(&f->ctx);
	free(f->qp.sq_wrid);
	free(f->qp.sq_wqe_head);
	free(f->qp.rq_wrid);
	free(f->cq.ring);
	free(f);
}

/* Writes CQE number f->pi: all fields, then op_own with the lap's owner bit (release). */
void nic_write(struct fixture *f, const struct cqe_spec *s)
{
	struct mlx5_cqe64 *cqe = &f->cq.cqes[f->pi & (f->cq.nent - 1)];
	uint8_t owner = !!(f->pi & f->cq.nent);

	memset(cqe, 0, offsetof(struct mlx5_cqe64, op_own));
	cqe->byte_cnt = htobe32(s->byte_cnt);
	cqe->imm_inval_pkey = s->imm_inval_pkey;
	cqe->flags_rqpn = htobe32(s->flags_rqpn);
	cqe->slid = htobe16(s->slid);
	cqe->ml_path = s->ml_path;
	cqe->timestamp = htobe64(s->timestamp);
	cqe->sop_drop_qpn = htobe32((uint32_t)s->wqe_op << 24 | (s->qpn ? s->qpn : QPN));
	cqe->wqe_counter = htobe16(s->wqe_counter);
	if (s->opcode == MLX5_CQE_REQ_ERR || s->opcode == MLX5_CQE_RESP_ERR) {
		struct mlx5_err_cqe *e = (struct mlx5_err_cqe *)cqe;
		e->syndrome = s->syndrome;
		e->vendor_err_synd = s->vendor_err;
	}
	__atomic_store_n(&cqe->op_own, (uint8_t)(s->opcode << 4 | owner), __ATOMIC_RELEASE);
	f->pi++;
}

uint32_t dbrec_ci(struct fixture *f)
{
	return be32toh(f->cq.hdr->dbrec[0]);
}

unsigned int fx_yields;

int sched_yield(void)
{
	fx_yields++;
	return 0;
}
