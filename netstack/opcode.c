/*
 * opcode.c - THE opcode table: for every opcode its name, transport, the
 * headers it carries and their offsets, FIRST/MIDDLE/LAST, whether it
 * carries payload, needs a receive WQE, is a request or a response.
 * Parsing, building and validation loop over this description instead of
 * switching on opcodes (the pattern of the kernel's rxe_opcode.c).
 *
 * Header offsets are computed at compile time from the header set: every
 * header has one fixed position in the canonical wire order RDETH, DETH,
 * XRCETH, FETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH (the order
 * of enum roce_hdr), which holds for every opcode of IBA Table 38, Annex
 * A14 (XRC) and IBA 1.5 (FLUSH, ATOMIC_WRITE).  Source: docs/wire-format.md §1.4.
 */
#include "netstack/packet.h"

/* Size in bytes of header I (enum roce_hdr order). */
#define HSZ0 ROCE_RDETH_LEN
#define HSZ1 ROCE_DETH_LEN
#define HSZ2 ROCE_XRCETH_LEN
#define HSZ3 ROCE_FETH_LEN
#define HSZ4 ROCE_RETH_LEN
#define HSZ5 ROCE_ATOMICETH_LEN
#define HSZ6 ROCE_AETH_LEN
#define HSZ7 ROCE_ATOMICACKETH_LEN
#define HSZ8 ROCE_IMMDT_LEN
#define HSZ9 ROCE_IETH_LEN

/* Bytes of the headers of mask M that come before header H. */
#define HAS(m, i) (((m) >> (i)) & 1u)
#define PART(m, h, i) ((i) < (h) ? HAS(m, i) * HSZ##i : 0u)
#define BEFORE(m, h)                                                                            \
	(PART(m, h, 0) + PART(m, h, 1) + PART(m, h, 2) + PART(m, h, 3) + PART(m, h, 4) +       \
	 PART(m, h, 5) + PART(m, h, 6) + PART(m, h, 7) + PART(m, h, 8) + PART(m, h, 9))
#define OFF(m, h) (HAS(m, h) ? ROCE_BTH_LEN + BEFORE(m, h) : 0u)

#define ROW(op, nm, m, fl, fixed)                                                               \
	[op] = { .name = (nm),                                                                  \
		 .opcode = (op),                                                                \
		 .transport = (op) & ROCE_OP_TRANSPORT_MASK,                                    \
		 .hdr_len = ROCE_BTH_LEN + BEFORE(m, ROCE_HDR__COUNT),                          \
		 .fixed_payload = (fixed),                                                      \
		 .hdrs = (m),                                                                   \
		 .flags = (fl),                                                                 \
		 .offset = { OFF(m, 0), OFF(m, 1), OFF(m, 2), OFF(m, 3), OFF(m, 4), OFF(m, 5), \
			     OFF(m, 6), OFF(m, 7), OFF(m, 8), OFF(m, 9) } }

#define H(x) ROCE_HDR_BIT(ROCE_HDR_##x)
#define F(x) ROCE_OPF_##x
#define ONLY (F(FIRST) | F(LAST))
#define RQ_SEND (F(PAYLOAD) | F(REQUEST) | F(RWQE) | F(SEND))
#define RQ_WRITE (F(PAYLOAD) | F(REQUEST) | F(WRITE))
#define RS_READ (F(RESPONSE) | F(READ))

/* SEND and WRITE: every connected transport.  RQ = headers a request of this
 * transport carries first (RD: RDETH+DETH, XRC: XRCETH); XF = extra flags. */
#define SEND_WRITE_ROWS(b, T, RQ, XF)                                                               \
	ROW((b) | 0x00, T "_SEND_FIRST", (RQ), F(FIRST) | RQ_SEND | (XF), -1),                     \
	ROW((b) | 0x01, T "_SEND_MIDDLE", (RQ), F(MIDDLE) | RQ_SEND | (XF), -1),                   \
	ROW((b) | 0x02, T "_SEND_LAST", (RQ), F(LAST) | RQ_SEND | (XF), -1),                       \
	ROW((b) | 0x03, T "_SEND_LAST_IMM", (RQ) | H(IMMDT), F(LAST) | RQ_SEND | F(IMM) | (XF), -1), \
	ROW((b) | 0x04, T "_SEND_ONLY", (RQ), ONLY | RQ_SEND | (XF), -1),                          \
	ROW((b) | 0x05, T "_SEND_ONLY_IMM", (RQ) | H(IMMDT), ONLY | RQ_SEND | F(IMM) | (XF), -1),   \
	ROW((b) | 0x06, T "_RDMA_WRITE_FIRST", (RQ) | H(RETH), F(FIRST) | RQ_WRITE | (XF), -1),     \
	ROW((b) | 0x07, T "_RDMA_WRITE_MIDDLE", (RQ), F(MIDDLE) | RQ_WRITE | (XF), -1),             \
	ROW((b) | 0x08, T "_RDMA_WRITE_LAST", (RQ), F(LAST) | RQ_WRITE | (XF), -1),                 \
	ROW((b) | 0x09, T "_RDMA_WRITE_LAST_IMM", (RQ) | H(IMMDT),                                  \
	    F(LAST) | RQ_WRITE | F(RWQE) | F(IMM) | (XF), -1),                                      \
	ROW((b) | 0x0A, T "_RDMA_WRITE_ONLY", (RQ) | H(RETH), ONLY | RQ_WRITE | (XF), -1),          \
	ROW((b) | 0x0B, T "_RDMA_WRITE_ONLY_IMM", (RQ) | H(RETH) | H(IMMDT),                        \
	    ONLY | RQ_WRITE | F(RWQE) | F(IMM) | (XF), -1)

/* READ, ACK and atomics: RC, RD, XRC.  RS = headers a response carries first
 * (RD: RDETH; responses of XRC carry no XRCETH). */
#define READ_ATOMIC_ROWS(b, T, RQ, RS, XF)                                                          \
	ROW((b) | 0x0C, T "_RDMA_READ_REQUEST", (RQ) | H(RETH), ONLY | F(REQUEST) | F(READ) | (XF), 0), \
	ROW((b) | 0x0D, T "_RDMA_READ_RESPONSE_FIRST", (RS) | H(AETH),                               \
	    F(FIRST) | F(PAYLOAD) | RS_READ | (XF), -1),                                             \
	ROW((b) | 0x0E, T "_RDMA_READ_RESPONSE_MIDDLE", (RS), F(MIDDLE) | F(PAYLOAD) | RS_READ | (XF), -1), \
	ROW((b) | 0x0F, T "_RDMA_READ_RESPONSE_LAST", (RS) | H(AETH),                                \
	    F(LAST) | F(PAYLOAD) | RS_READ | (XF), -1),                                              \
	ROW((b) | 0x10, T "_RDMA_READ_RESPONSE_ONLY", (RS) | H(AETH),                                \
	    ONLY | F(PAYLOAD) | RS_READ | (XF), -1),                                                 \
	ROW((b) | 0x11, T "_ACKNOWLEDGE", (RS) | H(AETH), ONLY | F(RESPONSE) | (XF), 0),             \
	ROW((b) | 0x12, T "_ATOMIC_ACKNOWLEDGE", (RS) | H(AETH) | H(ATOMICACKETH),                   \
	    ONLY | F(RESPONSE) | F(ATOMIC) | (XF), 0),                                               \
	ROW((b) | 0x13, T "_COMPARE_SWAP", (RQ) | H(ATOMICETH), ONLY | F(REQUEST) | F(ATOMIC) | (XF), 0), \
	ROW((b) | 0x14, T "_FETCH_ADD", (RQ) | H(ATOMICETH), ONLY | F(REQUEST) | F(ATOMIC) | (XF), 0)

/* SEND with invalidate: RC, XRC. */
#define INV_ROWS(b, T, RQ, XF)                                                                      \
	ROW((b) | 0x16, T "_SEND_LAST_INVALIDATE", (RQ) | H(IETH),                                   \
	    F(LAST) | RQ_SEND | F(INV) | (XF), -1),                                                  \
	ROW((b) | 0x17, T "_SEND_ONLY_INVALIDATE", (RQ) | H(IETH), ONLY | RQ_SEND | F(INV) | (XF), -1)

#define UNSUP F(UNSUPPORTED)

static const struct roce_opcode_info opcode_table[256] = {
	SEND_WRITE_ROWS(ROCE_TRANSPORT_RC, "RC", 0, 0),
	READ_ATOMIC_ROWS(ROCE_TRANSPORT_RC, "RC", 0, 0, 0),
	INV_ROWS(ROCE_TRANSPORT_RC, "RC", 0, 0),
	ROW(ROCE_OP_RC_FLUSH, "RC_FLUSH", H(FETH) | H(RETH), ONLY | F(REQUEST), 0),
	ROW(ROCE_OP_RC_ATOMIC_WRITE, "RC_ATOMIC_WRITE", H(RETH),
	    ONLY | F(PAYLOAD) | F(REQUEST) | F(ATOMIC), 8),

	SEND_WRITE_ROWS(ROCE_TRANSPORT_UC, "UC", 0, 0),

	SEND_WRITE_ROWS(ROCE_TRANSPORT_RD, "RD", H(RDETH) | H(DETH), UNSUP),
	READ_ATOMIC_ROWS(ROCE_TRANSPORT_RD, "RD", H(RDETH) | H(DETH), H(RDETH), UNSUP),
	ROW(ROCE_TRANSPORT_RD | ROCE_OPN_RESYNC, "RD_RESYNC", H(RDETH) | H(DETH),
	    ONLY | F(REQUEST) | UNSUP, 0),

	ROW(ROCE_OP_UD_SEND_ONLY, "UD_SEND_ONLY", H(DETH), ONLY | RQ_SEND, -1),
	ROW(ROCE_OP_UD_SEND_ONLY_IMM, "UD_SEND_ONLY_IMM", H(DETH) | H(IMMDT), ONLY | RQ_SEND | F(IMM), -1),

	ROW(ROCE_OP_CNP, "CNP", 0, ONLY | F(CNP), ROCE_CNP_PAD_LEN),

	SEND_WRITE_ROWS(ROCE_TRANSPORT_XRC, "XRC", H(XRCETH), 0),
	READ_ATOMIC_ROWS(ROCE_TRANSPORT_XRC, "XRC", H(XRCETH), 0, 0),
	INV_ROWS(ROCE_TRANSPORT_XRC, "XRC", H(XRCETH), 0),
};

const struct roce_opcode_info *roce_opcode_info(uint8_t opcode)
{
	const struct roce_opcode_info *op = &opcode_table[opcode];

	return op->name ? op : NULL;
}

const char *roce_opcode_name(uint8_t opcode)
{
	const struct roce_opcode_info *op = roce_opcode_info(opcode);

	return op ? op->name : "UNKNOWN";
}

unsigned roce_opcode_count(void)
{
	unsigned n = 0;

	for (unsigned i = 0; i < 256; i++)
		n += opcode_table[i].name != NULL;
	return n;
}

const struct roce_opcode_info *roce_opcode_at(unsigned i)
{
	for (unsigned op = 0; op < 256; op++) {
		if (!opcode_table[op].name)
			continue;
		if (i-- == 0)
			return &opcode_table[op];
	}
	return NULL;
}

const char *roce_transport_name(uint8_t opcode)
{
	static const char *const names[8] = { "RC", "UC", "RD", "UD", "CNP", "XRC", "RSVD", "VENDOR" };

	return names[opcode >> 5];
}
