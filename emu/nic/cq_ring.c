/*
 * cqe_writer.c - engine completion -> mlx5 CQE (see cqe_writer.h;
 * roce-wire.md §4.1, §4.2, §4.4).
 */
#include "config.h"
#include "emu/nic/cqe_writer.h"

#include <endian.h>
#include <string.h>

/* ibv_wc_status -> mlx5 syndrome (roce-wire.md §4.2) and the vendor
 * syndrome uroce reports with it. WR_FLUSH (0xf9), RETRY_EXC (0x81) and
 * REM_ACCESS (0x88) are the vendor values ConnectX HCAs are commonly seen
 * reporting; the others are uroce's own (0x70 + syndrome) so a test can tell
 * them apart. */
static const struct {
	enum ibv_wc_status status;
	uint8_t syndrome, vendor;
} err_map[] = {
	{ IBV_WC_LOC_LEN_ERR, MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR, 0x71 },
	{ IBV_WC_LOC_QP_OP_ERR, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR, 0x72 },
	{ IBV_WC_LOC_PROT_ERR, MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, 0x74 },
	{ IBV_WC_WR_FLUSH_ERR, MLX5_CQE_SYNDROME_WR_FLUSH_ERR, 0xf9 },
	{ IBV_WC_MW_BIND_ERR, MLX5_CQE_SYNDROME_MW_BIND_ERR, 0x76 },
	{ IBV_WC_BAD_RESP_ERR, MLX5_CQE_SYNDROME_BAD_RESP_ERR, 0x80 },
	{ IBV_WC_LOC_ACCESS_ERR, MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR, 0x91 },
	{ IBV_WC_REM_INV_REQ_ERR, MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, 0x92 },
	{ IBV_WC_REM_ACCESS_ERR, MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, 0x88 },
	{ IBV_WC_REM_OP_ERR, MLX5_CQE_SYNDROME_REMOTE_OP_ERR, 0x94 },
	{ IBV_WC_RETRY_EXC_ERR, MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, 0x81 },
	{ IBV_WC_RNR_RETRY_EXC_ERR, MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR, 0x82 },
	{ IBV_WC_REM_ABORT_ERR, MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR, 0xa2 },
};

uint8_t cqe_syndrome(enum ibv_wc_status status)
{
	size_t i;

	for (i = 0; i < sizeof(err_map) / sizeof(err_map[0]); i++)
		if (err_map[i].status == status)
			return err_map[i].syndrome;
	return 0xff;
}

uint8_t cqe_vendor_err(enum ibv_wc_status status)
{
	size_t i;

	for (i = 0; i < sizeof(err_map) / sizeof(err_map[0]); i++)
		if (err_map[i].status == status)
			return err_map[i].vendor;
	return 0xfe;
}

uint8_t cqe_wqe_opcode(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE: return MLX5_OPCODE_RDMA_WRITE;
	case IBV_WR_RDMA_WRITE_WITH_IMM: return MLX5_OPCODE_RDMA_WRITE_IMM;
	case IBV_WR_SEND: return MLX5_OPCODE_SEND;
	case IBV_WR_SEND_WITH_IMM: return MLX5_OPCODE_SEND_IMM;
	case IBV_WR_SEND_WITH_INV: return MLX5_OPCODE_SEND_INVAL;
	case IBV_WR_RDMA_READ: return MLX5_OPCODE_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP: return MLX5_OPCODE_ATOMIC_CS;
	case IBV_WR_ATOMIC_FETCH_AND_ADD: return MLX5_OPCODE_ATOMIC_FA;
	default: return 0;
	}
}

static uint8_t resp_opcode(const struct xport_cqe *c)
{
	if (c->opcode == IBV_WC_RECV_RDMA_WITH_IMM)
		return MLX5_CQE_RESP_WR_IMM;
	if (c->wc_flags & IBV_WC_WITH_INV)
		return MLX5_CQE_RESP_SEND_INV;
	if (c->wc_flags & IBV_WC_WITH_IMM)
		return MLX5_CQE_RESP_SEND_IMM;
	return MLX5_CQE_RESP_SEND;
}

void cqe_build(const struct xport_cqe *c, uint64_t ts, bool ipv6, struct mlx5_cqe64 *out)
{
	uint32_t qpn = c->qpn & 0xFFFFFF;

	memset(out, 0, sizeof(*out));
	if (c->status != IBV_WC_SUCCESS) {
		struct mlx5_err_cqe *e = (struct mlx5_err_cqe *)out;
		uint8_t wqe_op = c->is_recv ? 0 : cqe_wqe_opcode(c->wr_opcode);

		/* bytes 48-53 of the timestamp survive; 54-55 are the syndromes */
		out->timestamp = htobe64(ts & ~0xFFFFull);
		e->vendor_err_synd = cqe_vendor_err(c->status);
		e->syndrome = cqe_syndrome(c->status);
		e->s_wqe_opcode_qpn = htobe32((uint32_t)wqe_op << 24 | qpn);
		e->wqe_counter = htobe16((uint16_t)c->wr_index);
		e->op_own = (uint8_t)((c->is_recv ? MLX5_CQE_RESP_ERR : MLX5_CQE_REQ_ERR) << 4);
		return;
	}
	out->timestamp = htobe64(ts);
	out->byte_cnt = htobe32(c->byte_len);
	out->wqe_counter = htobe16((uint16_t)c->wr_index);
	if (!c->is_recv) {
		out->sop_drop_qpn = htobe32((uint32_t)cqe_wqe_opcode(c->wr_opcode) << 24 | qpn);
		out->op_own = MLX5_CQE_REQ << 4;
		return;
	}
	out->sop_drop_qpn = htobe32(qpn);
	if (c->wc_flags & IBV_WC_WITH_INV)
		out->imm_inval_pkey = htobe32(c->imm_data);
	else if (c->wc_flags & IBV_WC_WITH_IMM)
		out->imm_inval_pkey = c->imm_data; /* already network order */
	out->flags_rqpn = htobe32((c->wc_flags & IBV_WC_GRH ? 1u << 28 : 0) | (ipv6 ? 1u : 2u) << 24 |
				  (c->src_qp & 0xFFFFFF));
	out->op_own = (uint8_t)(resp_opcode(c) << 4 | (c->solicited ? 0x2 : 0));
}
