/*
 * check_state.h - what the checker of `uroce inspect --check` keeps per flow
 * and in all (internal to check*.c; the interface is check.h).  The rules are
 * stated in docs/wire-format.md §1.5-§1.6 and listed with their ids in
 * docs/inspect.md.
 *
 * A packet takes this path: check.c (insp_check_add) finds its flow in the
 * table (check_flow.c), then hands it to check_request.c or to
 * check_response.c (READ responses: check_read.c); every rule broken is
 * recorded and finally printed by check_report.c.
 */
#ifndef UROCE_TOOLS_INSPECT_CHECK_STATE_H
#define UROCE_TOOLS_INSPECT_CHECK_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "flows.h"
#include "decode.h"

/* ---- Rules ---------------------------------------------------------------- */

enum rule {
	R_ICRC,
	R_MALFORMED,
	R_PSN_GAP,
	R_OPCODE_SEQUENCE,
	R_OPCODE_MIXED,
	R_PAYLOAD_PMTU,
	R_PAYLOAD_MTU,
	R_PAYLOAD_LAST_EMPTY,
	R_RETH_LENGTH,
	R_READ_RESPONSE_PSN,
	R_READ_RESPONSE_COUNT,
	R_READ_RESPONSE_LENGTH,
	R_READ_RESPONSE_AETH,
	R_ACK_UNSENT_PSN,
	R_ACK_MSN,
	R_AETH_RESERVED,
	R_NAK_NO_RESEND,
	R_RNR_NO_RETRY,
	R_RNR_EARLY_RETRY,
	R_ATOMIC_ACK_PSN,
	R_ATOMIC_PLAIN_ACK,
	R_RETRANSMIT_CHANGED,
	R__COUNT
};

/*
 * Rule id (stable, for --json readers) and the IBA Vol. 1 section it comes
 * from, to the depth docs/wire-format.md cites: §9.2 BTH and opcodes, §9.3
 * ETHs (§9.3.5 AETH), §9.7 reliable service (§9.7.1 PSN, §9.7.5.2.8 RNR),
 * §7.8.1 ICRC.  Indexed by enum rule (check_report.c).
 */
struct chk_rule {
	const char *id, *section;
};
extern const struct chk_rule chk_rules[R__COUNT];

/* ---- State ---------------------------------------------------------------- */

#define HIST 512u		/* PSNs remembered per request flow (a power of two) */
#define MEM_BUDGET (256u << 20)	/* bytes of struct reqmem for all flows together */
#define MAX_FLOWS (1u << 16)	/* flows followed; the packets of more are only counted */
#define NREAD 256u		/* outstanding READs remembered per QP pair */
#define NENDS 1024u		/* message ends remembered per QP pair (for the MSN) */
#define NGAP 16u
#define NNAK 8u
#define MAX_FINDINGS (1u << 17)	/* listed; more are only counted */
#define NPAIR 1024u		/* buckets of the pairing index (request flows by address pair) */
#define PAIR_SCAN 256		/* candidates looked at per join */
#define PAIR_TRIES 8		/* joins tried per response flow */

/* The capture time of R, ns. */
static inline int64_t rec_ns(const struct insp_rec *r)
{
	return r->ts_sec * 1000000000ll + r->ts_nsec;
}

/* What a request flow remembers of one PSN it sent. */
struct hist {
	uint32_t psn;
	uint8_t valid, opcode;
	uint32_t payload_len;
	uint64_t va;
	uint32_t rkey, dma_len;
	uint64_t swap_add, compare;
};

struct gap {
	uint32_t first, count;	/* PSNs still missing: first .. first + count - 1 */
	uint64_t frame;		/* the packet that jumped */
};

struct read_req {
	uint32_t psn, len;	/* request PSN, DMA length (bytes) */
	uint64_t frame;
};

struct nak {
	uint32_t psn;
	int rnr;
	uint64_t frame;
	int64_t t_ns;		/* capture time of the NAK */
	uint64_t wait_ns;	/* RNR: the timer's wait */
	uint32_t max_at;	/* highest PSN the requester had sent then */
};

struct cflow {
	struct insp_flow_key key;

	/* request flows (RC and UC; UD gets only per-packet rules) */
	uint8_t transport;	/* ROCE_OP_TRANSPORT_MASK bits of the first opcode */
	int started;
	uint32_t first_psn;
	uint32_t next_psn;	/* the next new PSN expected */
	uint32_t max_sent;	/* highest PSN used, READ response PSNs included */
	uint32_t slack;		/* after a READ of unknown response count: PSNs the next request may skip */
	int msg;		/* 0 between messages, 1 inside one, -1 unknown (after a gap) */
	uint16_t msg_class;	/* ROCE_OPF_SEND / ROCE_OPF_WRITE of the open message */
	uint32_t msg_bytes, msg_reth_len;
	int msg_has_reth;
	uint32_t pmtu;		/* bytes, 0 = not known yet */
	struct reqmem *m;	/* RC/UC request flow: its history, or NULL (over MEM_BUDGET) */
	struct gap gaps[NGAP];
	unsigned ngap;
	unsigned read_head, nread;	/* m->reads */
	unsigned end_head, nend;	/* m->ends */
	struct nak naks[NNAK];
	unsigned nnak;
	int dead;		/* a fatal NAK was sent: the QP is in error */
	long peer;		/* request flow: its response flow; response flow: its request flow */

	/* response flows */
	int paired_by_port;	/* joined by UDP port: the PSN check waits for a second response */
	int pair_tries;		/* response flow: joins tried (at most PAIR_TRIES) */
	long pair_next;		/* request flow: next in its pairing-index bucket, -1 at the end */
	int have_ack;
	uint32_t ack_psn;	/* last good AETH: the PSN it acknowledges up to */
	uint32_t msn_lo, msn_width;	/* the MSN at ack_psn: msn_lo .. msn_lo + msn_width */
	int rd_active;		/* inside a READ response sequence */
	uint32_t rd_next, rd_left, rd_count, rd_expect;
	int have_rd_max;
	uint32_t rd_max;	/* highest READ response PSN seen */

	/* statistics (--flows) */
	int have_t;
	int64_t t_first, t_last;	/* ns */
	uint64_t goodput_bytes, retx_pkts, retx_bytes, dups, ooo;
	uint64_t nak_count[INSP_NAK__COUNT];
	uint64_t rnr_waits, rnr_wait_ns;
	int64_t msg_t0;		/* first packet of the open message */
	unsigned pend_head, npend;	/* m->pend */
	uint64_t *lat;		/* ns, one per completed message */
	size_t nlat, caplat;
};

/* A message waiting for its completion: its last PSN (a READ's or atomic's: the request's). */
struct pend {
	uint32_t end_psn;
	uint8_t explicit_only;	/* READ / atomic: completed only by its own response */
	int64_t t0;		/* ns */
};
#define NPEND 1024u

/*
 * What an RC/UC request flow remembers, allocated at its first packet while
 * MEM_BUDGET lasts; the rules that need it wait for flows without it.
 */
struct reqmem {
	struct hist hist[HIST];		/* by PSN modulo HIST */
	struct read_req reads[NREAD];	/* outstanding READs, a ring */
	uint32_t ends[NENDS];		/* PSNs that complete a message, in PSN order (a ring) */
	struct pend pend[NPEND];	/* messages sent and not completed, in PSN order (a ring) */
};

struct finding {
	uint64_t frame;
	enum rule rule;
	char flow[160];
	char msg[200];
};

struct insp_check {
	uint32_t pmtu;
	struct cflow *v;
	size_t n, cap;
	size_t *slot, nslot;
	size_t mem_bytes;
	uint64_t unfollowed;	/* packets of flows beyond MAX_FLOWS */
	long pair_head[NPAIR];	/* request flows by address pair: the newest, -1 = none */
	struct finding *f;
	size_t nf, capf;
	uint64_t findings;	/* all, also those not kept for lack of memory */
	uint64_t by_rule[R__COUNT];
	/* statistics */
	uint64_t packets, checked, retransmitted, retransmitted_bytes, out_of_order, gaps_repaired;
	uint64_t naks_seq, naks_rnr, naks_fatal, unpaired, duplicates;
	/* the previous packet: a copy right after it is a duplicate */
	long prev_flow;
	uint32_t prev_psn;
	uint64_t prev_frame;
	int nomem;
	struct insp_check_verdict last;	/* what the last frame was (insp_check_last) */
};

/* ---- Small helpers -------------------------------------------------------- */

static inline int is_pmtu(uint32_t v)
{
	return v == 256 || v == 512 || v == 1024 || v == 2048 || v == 4096;
}

static inline int is_atomic_req(uint8_t op)
{
	return op == ROCE_OP_RC_CMP_SWAP || op == ROCE_OP_RC_FETCH_ADD;
}

/* Responses a READ of LEN bytes takes at PMTU (docs/wire-format.md §1.6). */
static inline uint32_t read_npkts(uint32_t len, uint32_t pmtu)
{
	return len == 0 ? 1 : (uint32_t)(((uint64_t)len + pmtu - 1) / pmtu);
}

/* ---- check_flow.c: the flow table and what a flow remembers --------------- */

/* Slot of KEY's flow in the table (0 = free: KEY not there); c->nslot must be > 0. */
size_t *chk_lookup(const struct insp_check *c, const struct cflow *k);
/* Index of the flow of KEY, made if new; -1 when out of memory, -2 beyond MAX_FLOWS. */
long chk_find_flow(struct insp_check *c, const struct cflow *key);
/* "RoCEv2 a:p > b:p dqpn 0x..." into BUF; without the dqpn if !WITH_QPN. */
void chk_flow_name(const struct cflow *fl, int with_qpn, char *buf, size_t len);
/* Bucket of the address pair (version, SRC, DST) in the pairing index. */
unsigned chk_pair_bucket(int version, const char *src, const char *dst);
/* What FL remembers of PSN, or NULL (never sent, forgotten, or no history). */
struct hist *chk_hist_at(struct cflow *fl, uint32_t psn);
/* Remember request R as its PSN's entry of FL's history. */
void chk_hist_put(struct insp_check *c, struct cflow *fl, const struct insp_rec *r);
/* A message (ending at END_PSN) was sent for the first time; T0 its first packet. */
void chk_pend_push(struct insp_check *c, struct cflow *fl, uint32_t end_psn, int explicit_only, int64_t t0);
/* A response at NOW completes FL's messages up to UPTO (READs/atomics only if EXPLICIT_OK). */
void chk_pend_complete(struct cflow *fl, uint32_t upto, int explicit_ok, int64_t now);
/* PSN P (not seen before) filled part of a gap: shrink the gaps. */
void chk_gap_fill(struct insp_check *c, struct cflow *fl, uint32_t psn);
/* Remember that a message completes at PSN. */
void chk_end_push(struct cflow *fl, uint32_t psn);
/* Messages completed at PSNs in (from, to]. */
uint32_t chk_ends_between(const struct cflow *fl, uint32_t from, uint32_t to);
/* Forget the message ends at or before PSN UPTO (acknowledged). */
void chk_ends_prune(struct cflow *fl, uint32_t upto);

/* ---- check_read.c: outstanding READs and their responses ------------------ */

/* A READ (or ATOMIC WRITE) request R: outstanding until answered. */
void chk_read_push(struct cflow *fl, const struct insp_rec *r);
/* The outstanding READ of Q whose PSNs hold PSN, and (*N) how many it takes; or NULL. */
struct read_req *chk_read_of(struct cflow *q, uint32_t psn, uint32_t *n);
/* READ response R on response flow RI, answering request flow Q (which has m). */
void chk_read_response(struct insp_check *c, long ri, struct cflow *q, const struct insp_rec *r);

/* ---- check_request.c, check_response.c: one packet of flow FI / RI --------- */

void chk_request(struct insp_check *c, long fi, const struct insp_rec *r);
void chk_response(struct insp_check *c, long ri, const struct insp_rec *r);

/* ---- check_report.c: findings and the report ------------------------------ */

/* Record a finding of rule R at FRAME on flow index FLOW. */
void chk_finding(struct insp_check *c, uint64_t frame, enum rule r, long flow, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Record a finding about packet REC itself (its flow named from its headers). */
void chk_finding_rec(struct insp_check *c, const struct insp_rec *rec, enum rule r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* UROCE_TOOLS_INSPECT_CHECK_STATE_H */
