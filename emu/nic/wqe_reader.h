/*
 * wqe_reader.h - read one send or receive WQE (uroce's format, the QP ring
 * section of include/uroce/abi.h) out of a QP's shared ring into the
 * transport engine's WQE (emu/xport/xport.h), validating everything: the ring is
 * client memory and may hold anything. The doorbell (doorbell.c)
 * handler calls these for each new WQE between the consumer and producer
 * indices.
 */
#ifndef UROCE_EMU_WQE_READER_H
#define UROCE_EMU_WQE_READER_H

#include <stdint.h>
#include "emu/xport/xport.h"

struct ctl_client;
struct ctl_qp;
struct ctl_srq;

/*
 * wqe_read_send - copy SQ WQE number N of QP (owned by client C) and convert
 * it. The WQE is copied out of shared memory first, then checked, so the
 * client cannot change it between check and use.
 * Returns 0, or EINVAL: wqe_index != N & 0xFFFF (slot not written yet or
 * garbage), unknown flag bits, num_sge above the QP's max_send_sge, inline
 * data above max_inline_data or the slot, byte_len not the sum of the SGE
 * lengths (or overflowing), UD AH handle not one of C's AHs in the QP's PD,
 * remote QPN >= 2^24; ENODEV: the QP has no ring. Opcode / QP-type
 * combinations are left to xport_post_send (EOPNOTSUPP there).
 */
int wqe_read_send(const struct ctl_client *c, const struct ctl_qp *qp, uint32_t n, struct xport_send_wqe *out);

/* wqe_read_recv - same for RQ WQE number N: wqe_index, num_sge <=
 * max_recv_sge. Returns 0, EINVAL or ENODEV. */
int wqe_read_recv(const struct ctl_qp *qp, uint32_t n, struct xport_recv_wqe *out);

/* wqe_read_srq - same for WQE number N of SRQ's ring (abi_ring.h "SRQ
 * ring"): wqe_index (the tag) < max_wr, num_sge <= max_sge; wr_index of
 * OUT is the tag. Returns 0 or EINVAL. */
int wqe_read_srq(const struct ctl_srq *srq, uint32_t n, struct xport_recv_wqe *out);

#endif
