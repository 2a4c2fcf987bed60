/*
 * errors.c - names and messages of the netstack error codes (enum roce_err
 * in netstack/packet.h), for logs, `uroce inspect` and test output.
 */
#include "netstack/packet.h"

struct err_text {
	const char *name;
	const char *msg;
};

static const struct err_text err_table[ROCE_E__COUNT] = {
	[ROCE_OK] = { "OK", "success" },
	[ROCE_E_INVAL] = { "INVAL", "invalid argument" },
	[ROCE_E_NOSPC] = { "NOSPC", "output buffer too small" },
	[ROCE_E_IP_TRUNC] = { "IP_TRUNC", "packet shorter than its IP header" },
	[ROCE_E_IP_VERSION] = { "IP_VERSION", "IP version is not 4 or 6 (or not the one the link layer names)" },
	[ROCE_E_IP_IHL] = { "IP_IHL", "IPv4 header length is not 20 bytes (options not allowed)" },
	[ROCE_E_IP_LEN] = { "IP_LEN", "IP length field disagrees with the packet size" },
	[ROCE_E_IP_FRAG] = { "IP_FRAG", "IPv4 fragment (RoCEv2 packets are never fragmented)" },
	[ROCE_E_IP_PROTO] = { "IP_PROTO", "IP protocol / next header is not UDP" },
	[ROCE_E_UDP_TRUNC] = { "UDP_TRUNC", "no room for the UDP header" },
	[ROCE_E_UDP_LEN] = { "UDP_LEN", "UDP length disagrees with the IP length" },
	[ROCE_E_UDP_PORT] = { "UDP_PORT", "UDP destination port is not the RoCEv2 port" },
	[ROCE_E_GRH_TRUNC] = { "GRH_TRUNC", "packet shorter than the 40-byte GRH" },
	[ROCE_E_GRH_VERSION] = { "GRH_VERSION", "GRH IP version is not 6" },
	[ROCE_E_GRH_NXTHDR] = { "GRH_NXTHDR", "GRH next header is not 0x1B (BTH)" },
	[ROCE_E_GRH_LEN] = { "GRH_LEN", "GRH payload length disagrees with the packet size" },
	[ROCE_E_TRUNC_BTH] = { "TRUNC_BTH", "truncated in the BTH" },
	[ROCE_E_TVER] = { "TVER", "BTH transport version is not 0" },
	[ROCE_E_OPCODE_UNKNOWN] = { "OPCODE_UNKNOWN", "reserved or vendor-specific opcode" },
	[ROCE_E_OPCODE_UNSUPPORTED] = { "OPCODE_UNSUPPORTED", "opcode of a transport uroce does not support (RD)" },
	[ROCE_E_TRUNC_DETH] = { "TRUNC_DETH", "truncated in the DETH" },
	[ROCE_E_TRUNC_RETH] = { "TRUNC_RETH", "truncated in the RETH" },
	[ROCE_E_TRUNC_ATOMICETH] = { "TRUNC_ATOMICETH", "truncated in the AtomicETH" },
	[ROCE_E_TRUNC_AETH] = { "TRUNC_AETH", "truncated in the AETH" },
	[ROCE_E_TRUNC_ATOMICACKETH] = { "TRUNC_ATOMICACKETH", "truncated in the AtomicAckETH" },
	[ROCE_E_TRUNC_IMMDT] = { "TRUNC_IMMDT", "truncated in the ImmDt" },
	[ROCE_E_TRUNC_IETH] = { "TRUNC_IETH", "truncated in the IETH" },
	[ROCE_E_TRUNC_FETH] = { "TRUNC_FETH", "truncated in the FETH" },
	[ROCE_E_TRUNC_XRCETH] = { "TRUNC_XRCETH", "truncated in the XRCETH" },
	[ROCE_E_TRUNC_CNP] = { "TRUNC_CNP", "CNP shorter than its 16 reserved bytes" },
	[ROCE_E_TRUNC_ICRC] = { "TRUNC_ICRC", "no room for the 4-byte ICRC" },
	[ROCE_E_PAYLOAD_UNEXPECTED] = { "PAYLOAD_UNEXPECTED", "bytes after the headers of an opcode that carries no payload" },
	[ROCE_E_PAYLOAD_TOO_BIG] = { "PAYLOAD_TOO_BIG", "payload larger than the 4096-byte maximum MTU" },
	[ROCE_E_PAYLOAD_LEN] = { "PAYLOAD_LEN", "payload length differs from the opcode's fixed length" },
	[ROCE_E_PAD_UNEXPECTED] = { "PAD_UNEXPECTED", "pad count on a packet that is not LAST/ONLY with payload" },
	[ROCE_E_PAD_TOO_BIG] = { "PAD_TOO_BIG", "pad count larger than the bytes after the headers" },
	[ROCE_E_PAD_ALIGN] = { "PAD_ALIGN", "payload plus pad is not a multiple of 4 bytes" },
	[ROCE_E_ICRC] = { "ICRC", "ICRC mismatch" },
};

const char *roce_err_name(int e)
{
	if (e < 0 || e >= ROCE_E__COUNT || !err_table[e].name)
		return "?";
	return err_table[e].name;
}

const char *roce_strerror(int e)
{
	if (e < 0 || e >= ROCE_E__COUNT || !err_table[e].msg)
		return "unknown netstack error";
	return err_table[e].msg;
}
