/*
 * cq_ring.c - the CQ ring, as the NIC writes it (see cq_ring.h): building
 * the mlx5 CQE of an engine completion, writing it with the owner bit,
 * overrun detection, and arming / completion-event delivery. CQE fields:
 * mlx5dv.h and docs/daemon.md; ring and arming: include/uroce/abi.h.
 */
#include "config.h"
#include "emu/nic/cq_ring.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/log.h"
#include "emu/nic/device.h"
#include "emu/nic/mem_wb.h"
#include "emu/nic/nic_time.h"

#include <endian.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <rdma/ib_user_verbs.h>

#define CQE_OPCODE(op_own) ((op_own) >> 4)
#define CQE_REQ_ERR 13
#define CQE_RESP_ERR 14
#define CQE_SE 0x2

static struct uroce_cq_ring_hdr *ring_hdr(const struct ctl_cq *cq)
{
	return cq->ring;
}

static struct mlx5_cqe64 *ring_cqe(const struct ctl_cq *cq, uint32_t n)
{
	return (struct mlx5_cqe64 *)((char *)cq->ring + UROCE_CQ_RING_HDR_SIZE) + (n & (cq->nent - 1));
}


/* ibv_wc_status -> mlx5 syndrome (the inverse of mlx5's syndrome -> status
 * table in rdma-core's providers/mlx5/cq.c) and the vendor
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
	switch ((int)op) {
	case IBV_WR_RDMA_WRITE: return MLX5_OPCODE_RDMA_WRITE;
	case IBV_WR_RDMA_WRITE_WITH_IMM: return MLX5_OPCODE_RDMA_WRITE_IMM;
	case IBV_WR_SEND: return MLX5_OPCODE_SEND;
	case IBV_WR_SEND_WITH_IMM: return MLX5_OPCODE_SEND_IMM;
	case IBV_WR_SEND_WITH_INV: return MLX5_OPCODE_SEND_INVAL;
	case IBV_WR_RDMA_READ: return MLX5_OPCODE_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP: return MLX5_OPCODE_ATOMIC_CS;
	case IBV_WR_ATOMIC_FETCH_AND_ADD: return MLX5_OPCODE_ATOMIC_FA;
	/* mlx5 posts both as UMR and keeps the wc opcode per WQE; the CQE
	 * names LOCAL_INV apart so the provider needs no per-WQE state */
	case IBV_WR_BIND_MW: return MLX5_OPCODE_UMR;
	case IBV_WR_LOCAL_INV: return MLX5_OPCODE_LOCAL_INVAL;
	case IBV_WR_TSO: return MLX5_OPCODE_TSO;
	/* no mlx5 opcode: uroce's own values (abi_ring.h) */
	case UROCE_IBV_WR_FLUSH: return UROCE_CQE_OPCODE_FLUSH;
	case UROCE_IBV_WR_ATOMIC_WRITE: return UROCE_CQE_OPCODE_ATOMIC_WRITE;
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

/* A tag-matching receive (docs/cqe-format.md "Tag matching"): app, app_op
 * and app_info as rdma-core's mlx5 cq.c reads them, and on a match the TMH
 * in bytes 0-15 (mlx5dv.h: "TMH is scattered to CQE upon match"). */
static void cqe_tm(const struct xport_cqe *c, struct mlx5_cqe64 *out)
{
	if (!c->tm_app_op)
		return;
	out->app = UROCE_CQE_APP_TAG_MATCHING;
	out->app_op = c->tm_app_op;
	out->app_info = htobe16(c->tm_app_info);
	if (c->tm_app_op == UROCE_TM_APP_OP_CONSUMED_MSG || c->tm_app_op == UROCE_TM_APP_OP_CONSUMED)
		memcpy(out, c->tmh, sizeof(c->tmh));
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
		cqe_tm(c, out);
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
	cqe_tm(c, out);
}

/* Deliver the completion event of an armed CQ and disarm it. */
static void cq_fire(struct ctl_cq *cq)
{
	struct ib_uverbs_comp_event_desc ev = { .cq_handle = cq->user_handle };

	cq->armed = false;
	cq->mod_pending = 0;
	nic_timer_stop(&cq->mod_timer);
	if (cq->chan_fd < 0)
		return;
	if (send(cq->chan_fd, &ev, sizeof(ev), MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)sizeof(ev))
		cq->comp_events++;
	else
		ulog_limited(ULOG_LIMIT_CQ_LOST, ULOG_WARN, "client#%u cqn %u: completion event lost: %s",
			     cq->owner->id, cq->cqn, strerror(errno));
}

/* Whether CQE op_own satisfies a solicited-only arm (SE set, or an error). */
static int cqe_wakes_solicited(uint8_t op_own)
{
	return (op_own & CQE_SE) || CQE_OPCODE(op_own) == CQE_REQ_ERR ||
	       CQE_OPCODE(op_own) == CQE_RESP_ERR;
}

/* The moderation period ran out with the CQ still armed: fire. */
static void cq_mod_timeout(struct nic_timer *t)
{
	struct ctl_cq *cq = t->data;

	if (cq->armed)
		cq_fire(cq);
}

void cq_mod_init(struct ctl_cq *cq)
{
	nic_timer_init(&cq->mod_timer, cq->owner->dev, cq_mod_timeout, cq);
}

void cq_mod_fini(struct ctl_cq *cq)
{
	nic_timer_stop(&cq->mod_timer);
}

/* A CQE that satisfies the arm was written: fire now, or when cq_count
 * such CQEs are in, or cq_period µs after the first (abi.h "Moderation"). */
static void cq_moderate(struct ctl_cq *cq)
{
	cq->mod_pending++;
	if ((!cq->mod_count && !cq->mod_period) ||
	    (cq->mod_count && cq->mod_pending >= cq->mod_count)) {
		cq_fire(cq);
		return;
	}
	if (cq->mod_period && !cq->mod_timer.when)
		nic_timer_start(&cq->mod_timer,
				nic_now_ns(cq->owner->dev) + (uint64_t)cq->mod_period * 1000);
}

int cq_ring_move(struct ctl_cq *cq, void *ring, uint32_t nent, uint32_t cqe)
{
	struct uroce_cq_ring_hdr *nh = ring;
	struct mlx5_cqe64 *to = (struct mlx5_cqe64 *)((char *)ring + UROCE_CQ_RING_HDR_SIZE);
	uint32_t used, n;

	if (cq->overrun)
		return EINVAL;
	used = cq_unpolled(cq);
	if (used > cqe || used > cq->nent)
		return EINVAL;
	/* an arm published in the old ring before the switch is not lost */
	cq_check_arm(cq);
	for (n = cq->pi - used; n != cq->pi; n++) {
		const struct mlx5_cqe64 *from = ring_cqe(cq, n);
		struct mlx5_cqe64 *slot = &to[n & (nent - 1)];

		memcpy(slot, from, offsetof(struct mlx5_cqe64, op_own));
		__atomic_store_n(&slot->op_own, (uint8_t)((from->op_own & 0xFE) | !!(n & nent)),
				 __ATOMIC_RELEASE);
	}
	/* the provider copied the header: its arm word is not a new request */
	cq->last_arm_word = be32toh(__atomic_load_n(&nh->dbrec[1], __ATOMIC_ACQUIRE));
	cq->ring = ring;
	cq->nent = nent;
	cq->cqe = cqe;
	return 0;
}

bool cq_check_arm(struct ctl_cq *cq)
{
	uint32_t word = be32toh(__atomic_load_n(&ring_hdr(cq)->dbrec[1], __ATOMIC_ACQUIRE));

	if (word == cq->last_arm_word || !(word & UROCE_CQ_ARM_CMD))
		return false;
	/* Armed for the next CQE only: CQEs already in the ring do not fire
	 * (the consumer polls after arming to find them, see abi.h). */
	cq->last_arm_word = word;
	cq->armed = true;
	cq->arm_solicited = word & UROCE_CQ_ARM_SOLICITED;
	cq->arm_ci = word & UROCE_CQ_CI_MASK;
	return true;
}

int cq_push(struct ctl_cq *cq, const struct mlx5_cqe64 *cqe)
{
	struct mlx5_cqe64 *slot;
	uint32_t used;
	uint8_t op_own;

	/* the data a completion announces is in memory before it */
	mem_wb_flush(cq->owner->dev);
	if (cq->overrun)
		return EIO;
	used = cq_unpolled(cq);
	if (used >= cq->nent && !(cq->flags & UROCE_CQ_IGNORE_OVERRUN)) {
		cq->overrun = true;
		ulog(ULOG_WARN, "client#%u cqn %u: overrun (pi %u ci %u nent %u): CQ in error",
		     cq->owner->id, cq->cqn, cq->pi, (cq->pi - used) & UROCE_CQ_CI_MASK, cq->nent);
		/* counted only if delivered, as the QP paths do: DESTROY_CQ's
		 * async_events_reported tells the provider an unread one may
		 * still come (abi.h) */
		if (client_async_event(cq->owner, cq->user_handle, IBV_EVENT_CQ_ERR) == 0)
			cq->async_events++;
		return EOVERFLOW;
	}
	slot = ring_cqe(cq, cq->pi);
	op_own = (uint8_t)((cqe->op_own & 0xFE) | !!(cq->pi & cq->nent));
	memcpy(slot, cqe, offsetof(struct mlx5_cqe64, op_own));
	/* The owner bit hands the CQE over: everything else must be visible first. */
	__atomic_store_n(&slot->op_own, op_own, __ATOMIC_RELEASE);
	cq->pi++;
	/* Publish, full fence, then read the arm word (the provider: store the
	 * arm word, doorbell syscall, then poll). Either we see the arm and
	 * fire, or its poll after arming sees this CQE: no lost wake-up. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	cq_check_arm(cq);
	if (cq->armed && (!cq->arm_solicited || cqe_wakes_solicited(op_own)))
		cq_moderate(cq);
	return 0;
}
