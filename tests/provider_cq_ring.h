/*
 * provider_cq_ring.h - a CQ ring without a daemon, for the provider's poll
 * tests (provider_cq_poll.c, provider_dv_wc.c): the test plays the NIC and
 * writes struct mlx5_cqe64 entries as abi.h and docs/cqe-format.md §3 say
 * (all fields, then op_own with the lap's owner bit, release store), into a
 * CQ of one context with one QP (QPN) whose SQ wr_ids are 0x5000 + slot
 * (8 slots) and RQ wr_ids 0x7000 + slot (4 slots).
 */
#ifndef UROCE_TESTS_PROVIDER_CQ_RING_H
#define UROCE_TESTS_PROVIDER_CQ_RING_H

#include <stdbool.h>
#include <stdint.h>

#include "provider/uroce.h"

#define QPN 0x123456

struct fixture {
	struct uroce_context ctx;
	struct uroce_cq cq;
	struct uroce_qp qp;
	struct uroce_clock_page clock;
	uint32_t pi; /* the "NIC"'s producer index */
};
/* A CQ of nent (a power of two) entries, all INVALID, with the iterator's
 * functions for wc_flags (uroce_cq_fill_ex_ops). Fails the test on ENOMEM. */
struct fixture *fx_new_n(uint64_t wc_flags, bool single_threaded, uint32_t nent);
void fx_free(struct fixture *f);

/* What the NIC puts in one CQE. */
struct cqe_spec {
	uint8_t opcode;     /* MLX5_CQE_* */
	uint8_t wqe_op;     /* MLX5_OPCODE_* for requester CQEs */
	uint16_t wqe_counter;
	uint32_t byte_cnt;
	uint32_t imm_inval_pkey; /* stored as is (already network order for imm) */
	uint32_t flags_rqpn;     /* host order; stored big-endian */
	uint16_t slid;
	uint8_t ml_path;
	uint64_t timestamp;
	uint8_t syndrome, vendor_err; /* error CQEs */
	uint32_t qpn;                 /* 0: the fixture's QP (QPN) */
};
/* Writes CQE number f->pi and advances it. */
void nic_write(struct fixture *f, const struct cqe_spec *s);

/* The consumer index the provider published (dbrec[0]). */
uint32_t dbrec_ci(struct fixture *f);

/* sched_yield(2) calls of the provider's polls since the test last set it
 * to 0: this file defines sched_yield, and the provider's objects linked
 * into the test program reach that definition. */
extern unsigned int fx_yields;

#endif
