/*
 * roce.h - RoCEv2 wire format: constants and header layouts.
 *
 * Byte-exact facts of the InfiniBand transport as carried over UDP (RoCEv2,
 * IBA Vol.1 Annex A17) and over Ethernet with a GRH (RoCEv1): opcodes, the
 * Base and Extended Transport Headers, AETH syndromes, well-known ports,
 * keys and sizes.  Every multi-byte field on the wire is big-endian except
 * the ICRC, which goes out least-significant byte first.
 *
 * The structs below are the wire layouts (packed, fields in network order);
 * the codec in netstack/ reads and writes them by byte offset and hands out
 * host-order values (netstack/packet.h).  Source for every number:
 * docs/wire-format.md §1 (IBA §9.2 BTH, §9.3 ETHs, Annex A14 XRC, A17
 * RoCEv2; Linux include/rdma/ib_pack.h and rxe_hdr.h as read).
 */
#ifndef UROCE_ROCE_H
#define UROCE_ROCE_H

#include <stdint.h>

/* ---- Encapsulation ------------------------------------------------------ */

/* UDP destination port of RoCEv2 (IANA "roce"; Annex A17.2.4). */
#define ROCE_UDP_PORT 4791u
/* Ethertype of RoCEv1 (IBTA Annex A16): a GRH follows the Ethernet header. */
#define ROCE_ETHERTYPE_V1 0x8915u
/* IPv6 next-header value a RoCEv1 GRH carries when a BTH follows (IBA §8.3: 0x1B). */
#define ROCE_GRH_NXTHDR_BTH 0x1Bu

/* Header sizes in bytes. */
#define ROCE_ETH_HLEN 14u /* Ethernet II, untagged, no FCS */
#define ROCE_IPV4_HLEN 20u /* IPv4 without options (the ICRC rule assumes it) */
#define ROCE_IPV6_HLEN 40u
#define ROCE_GRH_LEN 40u /* RoCEv1 GRH = IPv6 header layout */
#define ROCE_UDP_HLEN 8u
#define ROCE_BTH_LEN 12u
#define ROCE_RDETH_LEN 4u
#define ROCE_DETH_LEN 8u
#define ROCE_RETH_LEN 16u
#define ROCE_ATOMICETH_LEN 28u
#define ROCE_AETH_LEN 4u
#define ROCE_ATOMICACKETH_LEN 8u
#define ROCE_IMMDT_LEN 4u
#define ROCE_IETH_LEN 4u
#define ROCE_XRCETH_LEN 4u
#define ROCE_FETH_LEN 4u
#define ROCE_ICRC_LEN 4u
/* A CNP carries 16 reserved zero bytes after the BTH (Annex A17.9.3). */
#define ROCE_CNP_PAD_LEN 16u

/* Largest path MTU (IBV_MTU_4096), in payload bytes per packet. */
#define ROCE_MAX_MTU 4096u
/* Largest payload + pad the codec accepts in one packet (bytes): one max MTU.
 * The QP's own path MTU is checked by the transport, not the codec. */
#define ROCE_MAX_PAYLOAD ROCE_MAX_MTU

/* Default (full-membership) partition key: rxe always sends it. */
#define ROCE_DEFAULT_PKEY 0xFFFFu
/* Q_Key of the General Services Interface, QP1 (IBA §13.5.1). */
#define ROCE_GSI_QKEY 0x80010000u
/* A Q_Key with this bit set in a send WR is "controlled": the QP's own
 * Q_Key is sent instead (IBA §10.2.4; ibv_post_send(3) remote_qkey). */
#define ROCE_QKEY_CONTROLLED_BIT 0x80000000u
/* QP numbers are 24 bits; QP1 is the GSI QP. */
#define ROCE_QPN_MASK 0x00FFFFFFu
#define ROCE_GSI_QPN 1u

/* ---- BTH (IBA §9.2) ----------------------------------------------------- */

/* Byte 1: SE | M | PadCnt(2) | TVer(4). */
#define ROCE_BTH_SE 0x80u
#define ROCE_BTH_MIG 0x40u
#define ROCE_BTH_PAD_MASK 0x30u
#define ROCE_BTH_PAD_SHIFT 4
#define ROCE_BTH_TVER_MASK 0x0Fu
#define ROCE_BTH_TVER 0u /* the only transport version defined */
/* Byte 4: F(ECN) | B(ECN) | Resv6; whole byte masked to 0xFF by the ICRC. */
#define ROCE_BTH_FECN 0x80u
#define ROCE_BTH_BECN 0x40u
/* Byte 8: A(ckReq) | Resv7 (Resv7 is included in the ICRC). */
#define ROCE_BTH_ACKREQ 0x80u
#define ROCE_BTH_RESV7_MASK 0x7Fu
/* PSNs are 24 bits (netstack/psn.h has the arithmetic). */
#define ROCE_PSN_MASK 0x00FFFFFFu

/* Opcode = transport prefix (bits 7:5) | operation (bits 4:0). */
#define ROCE_OP_TRANSPORT_MASK 0xE0u
#define ROCE_OP_OPERATION_MASK 0x1Fu

/* Transport prefixes (IBA Table 38). */
enum roce_transport {
	ROCE_TRANSPORT_RC = 0x00,
	ROCE_TRANSPORT_UC = 0x20,
	ROCE_TRANSPORT_RD = 0x40,
	ROCE_TRANSPORT_UD = 0x60,
	ROCE_TRANSPORT_CNP = 0x80,
	ROCE_TRANSPORT_XRC = 0xA0,
	ROCE_TRANSPORT_VENDOR = 0xE0,
};

/* Operations: the low 5 bits of the opcode (IBA Table 38; ib_pack.h). */
enum roce_operation {
	ROCE_OPN_SEND_FIRST = 0x00,
	ROCE_OPN_SEND_MIDDLE = 0x01,
	ROCE_OPN_SEND_LAST = 0x02,
	ROCE_OPN_SEND_LAST_IMM = 0x03,
	ROCE_OPN_SEND_ONLY = 0x04,
	ROCE_OPN_SEND_ONLY_IMM = 0x05,
	ROCE_OPN_WRITE_FIRST = 0x06,
	ROCE_OPN_WRITE_MIDDLE = 0x07,
	ROCE_OPN_WRITE_LAST = 0x08,
	ROCE_OPN_WRITE_LAST_IMM = 0x09,
	ROCE_OPN_WRITE_ONLY = 0x0A,
	ROCE_OPN_WRITE_ONLY_IMM = 0x0B,
	ROCE_OPN_READ_REQUEST = 0x0C,
	ROCE_OPN_READ_RESP_FIRST = 0x0D,
	ROCE_OPN_READ_RESP_MIDDLE = 0x0E,
	ROCE_OPN_READ_RESP_LAST = 0x0F,
	ROCE_OPN_READ_RESP_ONLY = 0x10,
	ROCE_OPN_ACK = 0x11,
	ROCE_OPN_ATOMIC_ACK = 0x12,
	ROCE_OPN_CMP_SWAP = 0x13,
	ROCE_OPN_FETCH_ADD = 0x14,
	ROCE_OPN_RESYNC = 0x15, /* RD only */
	ROCE_OPN_SEND_LAST_INV = 0x16,
	ROCE_OPN_SEND_ONLY_INV = 0x17,
	ROCE_OPN_FLUSH = 0x1C, /* IBA 1.5 */
	ROCE_OPN_ATOMIC_WRITE = 0x1D, /* IBA 1.5 */
};

/* Full opcodes the codec supports (RC, UC, UD, CNP), plus the XRC and RD
 * ones it names but rejects (ROCE_E_OPCODE_UNSUPPORTED). */
enum roce_opcode {
	ROCE_OP_RC_SEND_FIRST = 0x00,
	ROCE_OP_RC_SEND_MIDDLE = 0x01,
	ROCE_OP_RC_SEND_LAST = 0x02,
	ROCE_OP_RC_SEND_LAST_IMM = 0x03,
	ROCE_OP_RC_SEND_ONLY = 0x04,
	ROCE_OP_RC_SEND_ONLY_IMM = 0x05,
	ROCE_OP_RC_WRITE_FIRST = 0x06,
	ROCE_OP_RC_WRITE_MIDDLE = 0x07,
	ROCE_OP_RC_WRITE_LAST = 0x08,
	ROCE_OP_RC_WRITE_LAST_IMM = 0x09,
	ROCE_OP_RC_WRITE_ONLY = 0x0A,
	ROCE_OP_RC_WRITE_ONLY_IMM = 0x0B,
	ROCE_OP_RC_READ_REQUEST = 0x0C,
	ROCE_OP_RC_READ_RESP_FIRST = 0x0D,
	ROCE_OP_RC_READ_RESP_MIDDLE = 0x0E,
	ROCE_OP_RC_READ_RESP_LAST = 0x0F,
	ROCE_OP_RC_READ_RESP_ONLY = 0x10,
	ROCE_OP_RC_ACK = 0x11,
	ROCE_OP_RC_ATOMIC_ACK = 0x12,
	ROCE_OP_RC_CMP_SWAP = 0x13,
	ROCE_OP_RC_FETCH_ADD = 0x14,
	ROCE_OP_RC_SEND_LAST_INV = 0x16,
	ROCE_OP_RC_SEND_ONLY_INV = 0x17,
	ROCE_OP_RC_FLUSH = 0x1C,
	ROCE_OP_RC_ATOMIC_WRITE = 0x1D,

	ROCE_OP_UC_SEND_FIRST = 0x20,
	ROCE_OP_UC_SEND_MIDDLE = 0x21,
	ROCE_OP_UC_SEND_LAST = 0x22,
	ROCE_OP_UC_SEND_LAST_IMM = 0x23,
	ROCE_OP_UC_SEND_ONLY = 0x24,
	ROCE_OP_UC_SEND_ONLY_IMM = 0x25,
	ROCE_OP_UC_WRITE_FIRST = 0x26,
	ROCE_OP_UC_WRITE_MIDDLE = 0x27,
	ROCE_OP_UC_WRITE_LAST = 0x28,
	ROCE_OP_UC_WRITE_LAST_IMM = 0x29,
	ROCE_OP_UC_WRITE_ONLY = 0x2A,
	ROCE_OP_UC_WRITE_ONLY_IMM = 0x2B,

	ROCE_OP_UD_SEND_ONLY = 0x64,
	ROCE_OP_UD_SEND_ONLY_IMM = 0x65,

	/* Congestion Notification Packet (Annex A17.9.3). */
	ROCE_OP_CNP = 0x81,
};

/* BTH wire layout (12 bytes). */
struct roce_bth {
	uint8_t opcode;
	uint8_t flags; /* SE | M | PadCnt | TVer */
	uint16_t pkey; /* big-endian */
	uint32_t fb_dqpn; /* big-endian: F | B | Resv6 | DestQP(24) */
	uint32_t a_psn; /* big-endian: A | Resv7 | PSN(24) */
} __attribute__((packed));

/* ---- Extended transport headers (IBA §9.3) ------------------------------ */

/* RETH (16 bytes): remote VA, R_Key, DMA length of the whole message. */
struct roce_reth {
	uint64_t va; /* big-endian */
	uint32_t rkey; /* big-endian */
	uint32_t dma_len; /* big-endian, bytes */
} __attribute__((packed));

/* AtomicETH (28 bytes): VA (8-byte aligned), R_Key, Swap/Add, Compare. */
struct roce_atomiceth {
	uint64_t va;
	uint32_t rkey;
	uint64_t swap_add;
	uint64_t compare;
} __attribute__((packed));

/* AETH (4 bytes): syndrome (8) | MSN (24). */
struct roce_aeth {
	uint32_t syn_msn; /* big-endian */
} __attribute__((packed));

/* AtomicAckETH (8 bytes): original remote data. */
struct roce_atomicacketh {
	uint64_t orig;
} __attribute__((packed));

/* DETH (8 bytes): Q_Key | resv8 | SrcQP (24). */
struct roce_deth {
	uint32_t qkey;
	uint32_t sqpn; /* big-endian: resv8 | SrcQP(24) */
} __attribute__((packed));

/* ImmDt and IETH are one 32-bit word each; XRCETH is resv8 | XRCSRQ(24);
 * FETH is resv(26) | selectivity level(2, bits 5:4) | placement type(4). */
#define ROCE_FETH_SEL_MASK 0x30u
#define ROCE_FETH_SEL_SHIFT 4
#define ROCE_FETH_PLT_MASK 0x0Fu

_Static_assert(sizeof(struct roce_bth) == ROCE_BTH_LEN, "BTH is 12 bytes");
_Static_assert(sizeof(struct roce_reth) == ROCE_RETH_LEN, "RETH is 16 bytes");
_Static_assert(sizeof(struct roce_atomiceth) == ROCE_ATOMICETH_LEN, "AtomicETH is 28 bytes");
_Static_assert(sizeof(struct roce_aeth) == ROCE_AETH_LEN, "AETH is 4 bytes");
_Static_assert(sizeof(struct roce_atomicacketh) == ROCE_ATOMICACKETH_LEN, "AtomicAckETH is 8 bytes");
_Static_assert(sizeof(struct roce_deth) == ROCE_DETH_LEN, "DETH is 8 bytes");

/* ---- AETH syndrome (IBA §9.3.5; rxe_hdr.h; Wireshark tables) ------------ */

/* Bits 6:5 = type, bits 4:0 = value; bit 7 reserved. */
#define ROCE_AETH_TYPE_MASK 0x60u
#define ROCE_AETH_VALUE_MASK 0x1Fu
#define ROCE_AETH_MSN_MASK 0x00FFFFFFu
enum roce_aeth_type {
	ROCE_AETH_ACK = 0x00, /* value = credit code 0..30, 31 = invalid/none */
	ROCE_AETH_RNR_NAK = 0x20, /* value = RNR timer code (IBA Table 45) */
	ROCE_AETH_RESERVED = 0x40,
	ROCE_AETH_NAK = 0x60, /* value = enum roce_nak_code */
};
/* ACK credit code meaning "no credit information" (rxe AETH_ACK_UNLIMITED). */
#define ROCE_AETH_CREDIT_INVALID 0x1Fu
/* NAK codes (the value of a NAK syndrome). */
enum roce_nak_code {
	ROCE_NAK_PSN_SEQ_ERR = 0,
	ROCE_NAK_INVALID_REQ = 1,
	ROCE_NAK_REM_ACCESS_ERR = 2,
	ROCE_NAK_REM_OP_ERR = 3,
	ROCE_NAK_INVALID_RD_REQ = 4,
};
/* Full syndrome bytes. */
#define ROCE_AETH_SYN_ACK(credit) ((uint8_t)(ROCE_AETH_ACK | ((credit) & 0x1F)))
#define ROCE_AETH_SYN_RNR(timer) ((uint8_t)(ROCE_AETH_RNR_NAK | ((timer) & 0x1F)))
#define ROCE_AETH_SYN_NAK(code) ((uint8_t)(ROCE_AETH_NAK | ((code) & 0x1F)))

#endif /* UROCE_ROCE_H */
