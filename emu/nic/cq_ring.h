/*
 * cq_ring.h - the CQ ring as the NIC writes it: one transport-engine
 * completion (struct xport_cqe, emu/xport/xport.h) becomes the 64-byte CQE a
 * ConnectX writes (struct mlx5_cqe64 / mlx5_err_cqe from
 * <infiniband/mlx5dv.h>; field use in docs/daemon.md), which is written into
 * the client's ring with the owner bit of its lap; arming and completion
 * events follow the CQ ring section of include/uroce/abi.h.
 */
#ifndef UROCE_EMU_NIC_CQ_RING_H
#define UROCE_EMU_NIC_CQ_RING_H

#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <infiniband/mlx5dv.h>
#include "emu/obj/objects.h"
#include "emu/xport/xport.h"

/* CQEs written to CQ that its client has not consumed yet: the producer
 * index minus the consumer index the provider publishes in dbrec[0]
 * (include/uroce/abi.h, CQ ring), modulo 2^24. Inline: the overrun check
 * of every CQE and the deterministic clock (nic_time.c) both ask. */
static inline uint32_t cq_unpolled(const struct ctl_cq *cq)
{
	const struct uroce_cq_ring_hdr *h = cq->ring;
	uint32_t ci = be32toh(__atomic_load_n(&h->dbrec[0], __ATOMIC_ACQUIRE)) & UROCE_CQ_CI_MASK;

	return ((cq->pi & UROCE_CQ_CI_MASK) - ci) & UROCE_CQ_CI_MASK;
}

/*
 * cqe_build - fill OUT from C.
 *   ts       completion time in HCA cycles (hca_clock_now()), big-endian in
 *            the timestamp field. Error CQEs share bytes 54-55 with the
 *            syndromes, so there the timestamp is ts rounded down to 65536
 *            cycles with the vendor syndrome and syndrome in its low 16 bits.
 *   ipv6     the device's address family: receive CQEs carry the RoCE
 *            packet type in the SL bits of flags_rqpn as ConnectX does
 *            (2 = RoCEv2/IPv4, 1 = RoCEv2/IPv6), which UCX's ud_verbs checks.
 * Success, requester (C->is_recv false): opcode MLX5_CQE_REQ, sop_drop_qpn =
 *   MLX5_OPCODE_* of the WQE << 24 | qpn, byte_cnt, wqe_counter.
 * Success, responder: MLX5_CQE_RESP_SEND / _SEND_IMM / _SEND_INV / _WR_IMM,
 *   byte_cnt, imm_inval_pkey (immediate as sent; invalidated rkey
 *   big-endian), flags_rqpn = GRH bit 28 (IBV_WC_GRH) | packet type << 24 |
 *   src_qp, SE bit in op_own for solicited requests.
 * Errors: MLX5_CQE_REQ_ERR / MLX5_CQE_RESP_ERR, syndrome from the status
 *   (cqe_syndrome()), vendor syndrome (cqe_vendor_err()), s_wqe_opcode_qpn,
 *   wqe_counter.
 * The owner bit is left 0: cq_push() sets it for the ring lap.
 */
void cqe_build(const struct xport_cqe *c, uint64_t ts, bool ipv6, struct mlx5_cqe64 *out);

/* mlx5 error syndrome for an ibv_wc_status (the inverse of mlx5's
 * syndrome -> status table); unknown statuses: 0xff (GENERAL_ERR on read). */
uint8_t cqe_syndrome(enum ibv_wc_status status);

/* Vendor syndrome uroce reports with an error status (read back as
 * ibv_wc.vendor_err); documented in docs/daemon.md. */
uint8_t cqe_vendor_err(enum ibv_wc_status status);

/* MLX5_OPCODE_* of a send work request opcode (0 if it has none). */
uint8_t cqe_wqe_opcode(enum ibv_wr_opcode op);

struct ctl_cq;

/* Read CQ's arm word and remember an arm request (see abi.h): called on the
 * doorbell and before deciding whether a new CQE fires an event. Returns
 * whether the word held a new request. */
bool cq_check_arm(struct ctl_cq *cq);

/* Prepare / stop CQ's moderation timer (CREATE_CQ / destroy). */
void cq_mod_init(struct ctl_cq *cq);
void cq_mod_fini(struct ctl_cq *cq);

/*
 * cq_ring_move - RESIZE_CQ's switch to RING (mapped, NENT entries, a power
 * of two, for CQE entries asked for): the unpolled CQEs ci..pi-1 are copied
 * to their slots of the new ring with the owner bit of their lap there, the
 * free-running indices are kept (abi.h "Resizing"). The caller unmaps the
 * old ring (cq->ring before the call) on success. Returns 0, or EINVAL
 * (more unpolled CQEs than CQE, or the CQ is in error): nothing changed.
 */
int cq_ring_move(struct ctl_cq *cq, void *ring, uint32_t nent, uint32_t cqe);

/*
 * cq_push - write one CQE into CQ's ring (all of CQE but op_own's owner bit
 * and opcode, which the caller sets in cqe->op_own's high nibble), set the
 * owner bit for the current lap, publish it and fire an armed event.
 * Returns 0, or EOVERFLOW when the ring is full (overrun: the CQ enters error
 * and IBV_EVENT_CQ_ERR is sent, unless UROCE_CQ_IGNORE_OVERRUN), or EIO if the
 * CQ already is in error.
 */
int cq_push(struct ctl_cq *cq, const struct mlx5_cqe64 *cqe);

#endif
