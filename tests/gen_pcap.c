/*
 * gen_pcap.c - write RoCE captures with the netstack builders and the pcap
 * writer, for `uroce inspect`'s tests and sample.
 *
 *   gen_pcap sample  OUT.pcap ICRC.tsv   the shipped tests/data/sample.pcap:
 *        an RC exchange (SEND, WRITE, READ, atomics, ACK, NAK, RNR NAK), UC,
 *        UD with DETH, a CNP, IPv6, then the real frames R1..R3 and S0 of
 *        ICRC.tsv (copied byte for byte; R2/R3 are RoCEv1)
 *   gen_pcap opcodes OUT.pcap            every opcode the codec speaks, over
 *        IPv4 and IPv6, with varied QPNs, PSNs, payload lengths and ETH values
 *
 * Both write Ethernet frames with fixed timestamps, so the output is
 * byte-for-byte reproducible.  On stdout: a manifest, one line per frame,
 * "frame<TAB>opcode<TAB>dqpn<TAB>psn" (decimal; "-" for copied frames),
 * which the tshark test holds tshark's decode against.
 * Exit status 0, or 1 with a message on stderr.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/packet.h"
#include "netstack/pcap_writer.h"
#include "netstack/udp_sport.h"

#define FRAME_MAX 9000
/* 2026-01-01T00:00:00Z; frames follow 10 us apart. */
#define TS_BASE 1767225600

struct gen {
	struct pcapw *w;
	unsigned frame;
};

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "gen_pcap: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(1);
}

static void write_frame(struct gen *g, const uint8_t *f, size_t len)
{
	struct timespec ts;

	ts.tv_sec = TS_BASE + g->frame / 100000;
	ts.tv_nsec = (long)(g->frame % 100000) * 10000;
	if (pcapw_write(g->w, f, len, &ts) != 0)
		die("%s", pcapw_error(g->w));
	g->frame++;
}

/* Ethernet II header: MAC 02:00:00:00:00:xx with xx = the IP address's last byte. */
static size_t eth_header(uint8_t *f, const struct roce_l3 *l3)
{
	static const uint8_t mac[5] = { 0x02, 0, 0, 0, 0 };
	uint16_t type = l3->kind == ROCE_L3_IPV6 ? 0x86DD : 0x0800;

	memcpy(f, mac, 5);
	f[5] = l3->dst[15];
	memcpy(f + 6, mac, 5);
	f[11] = l3->src[15];
	f[12] = (uint8_t)(type >> 8);
	f[13] = (uint8_t)type;
	return ROCE_ETH_HLEN;
}

/* Build one RoCEv2 packet with the netstack and write it as an Ethernet frame. */
static void emit(struct gen *g, const struct roce_l3 *l3, const struct roce_hdrs *h,
		 const void *payload, uint32_t len)
{
	uint8_t f[FRAME_MAX];
	size_t off = eth_header(f, l3), n = 0;
	int rc = roce_build_ip(f + off, sizeof(f) - off, l3, h, payload, len, &n);

	if (rc != ROCE_OK)
		die("roce_build_ip: %s", roce_err_name(rc));
	write_frame(g, f, off + n);
	printf("%u\t%u\t%u\t%u\n", g->frame, h->opcode, h->dqpn, h->psn);
}

/* ---- sample ------------------------------------------------------------- */

struct peer {
	struct roce_l3 l3;	/* as sent by this side */
	uint32_t qpn;
};

static void peers(struct peer *a, struct peer *b, int v6, uint32_t qa, uint32_t qb, int ud)
{
	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	if (v6) {
		static const uint8_t pfx[15] = { 0xfd, 0x00 };	/* fd00::/8, ULA */

		a->l3.kind = b->l3.kind = ROCE_L3_IPV6;
		memcpy(a->l3.src, pfx, 15);
		a->l3.src[15] = 1;
		memcpy(a->l3.dst, pfx, 15);
		a->l3.dst[15] = 2;
		a->l3.flow_label = b->l3.flow_label = roce_calc_flow_label(qa, qb);
	} else {
		a->l3.kind = b->l3.kind = ROCE_L3_IPV4;
		roce_addr_from_ipv4(a->l3.src, 0xC0A80001);	/* 192.168.0.1 */
		roce_addr_from_ipv4(a->l3.dst, 0xC0A80002);
	}
	memcpy(b->l3.src, a->l3.dst, 16);
	memcpy(b->l3.dst, a->l3.src, 16);
	a->l3.dport = b->l3.dport = ROCE_UDP_PORT;
	a->l3.sport = ud ? roce_qpn_udp_sport(qa) : roce_get_udp_sport(0, qa, qb);
	b->l3.sport = ud ? roce_qpn_udp_sport(qb) : a->l3.sport;
	a->l3.hop_limit = b->l3.hop_limit = 64;
	a->qpn = qa;
	b->qpn = qb;
}

/* Header values for a packet from FROM to TO. */
static struct roce_hdrs hdrs(uint8_t opcode, const struct peer *to, uint32_t psn, int ackreq)
{
	struct roce_hdrs h;

	memset(&h, 0, sizeof(h));
	h.opcode = opcode;
	h.pkey = ROCE_DEFAULT_PKEY;
	h.dqpn = to->qpn;
	h.psn = psn;
	h.ackreq = ackreq != 0;
	return h;
}

static struct roce_hdrs ack(uint8_t opcode, const struct peer *to, uint32_t psn, uint8_t syn, uint32_t msn)
{
	struct roce_hdrs h = hdrs(opcode, to, psn, 0);

	h.aeth.syndrome = syn;
	h.aeth.msn = msn;
	return h;
}

static void reth(struct roce_hdrs *h, uint64_t va, uint32_t rkey, uint32_t len)
{
	h->reth.va = va;
	h->reth.rkey = rkey;
	h->reth.dma_len = len;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

/* The RC exchange between A (requester, QPN qa) and B (responder), MTU 256. */
static void sample_rc(struct gen *g, int v6)
{
	struct peer a, b;
	struct roce_hdrs h;
	uint8_t buf[600];
	const char hello[] = "hello uroce";	/* 11 bytes: pad 1 */

	if (v6) {
		peers(&a, &b, 1, 0x000123, 0x000456, 0);
		h = hdrs(ROCE_OP_RC_SEND_ONLY, &b, 77, 1);
		h.se = true;
		emit(g, &a.l3, &h, hello, 11);
		h = ack(ROCE_OP_RC_ACK, &a, 77, ROCE_AETH_SYN_ACK(ROCE_AETH_CREDIT_INVALID), 1);
		emit(g, &b.l3, &h, NULL, 0);
		h = hdrs(ROCE_OP_RC_WRITE_ONLY, &b, 78, 1);
		reth(&h, 0x00007f0000010000ull, 0x00000a0b, 8);
		emit(g, &a.l3, &h, "12345678", 8);
		h = ack(ROCE_OP_RC_ACK, &a, 78, ROCE_AETH_SYN_ACK(ROCE_AETH_CREDIT_INVALID), 2);
		emit(g, &b.l3, &h, NULL, 0);
		return;
	}

	peers(&a, &b, 0, 0x000011, 0x000022, 0);
	/* SEND ONLY, solicited, and its ACK (rxe's credit code 31). */
	h = hdrs(ROCE_OP_RC_SEND_ONLY, &b, 1000, 1);
	h.se = true;
	emit(g, &a.l3, &h, hello, 11);
	h = ack(ROCE_OP_RC_ACK, &a, 1000, ROCE_AETH_SYN_ACK(31), 1);
	emit(g, &b.l3, &h, NULL, 0);
	/* A 612-byte SEND with immediate in three packets. */
	fill(buf, 256, 1);
	h = hdrs(ROCE_OP_RC_SEND_FIRST, &b, 1001, 0);
	emit(g, &a.l3, &h, buf, 256);
	fill(buf, 256, 2);
	h = hdrs(ROCE_OP_RC_SEND_MIDDLE, &b, 1002, 0);
	emit(g, &a.l3, &h, buf, 256);
	fill(buf, 100, 3);
	h = hdrs(ROCE_OP_RC_SEND_LAST_IMM, &b, 1003, 1);
	h.imm = 0x12345678;
	emit(g, &a.l3, &h, buf, 100);
	h = ack(ROCE_OP_RC_ACK, &a, 1003, ROCE_AETH_SYN_ACK(31), 2);
	emit(g, &b.l3, &h, NULL, 0);
	/* A 300-byte WRITE (FIRST carries the RETH), then WRITE ONLY with immediate. */
	fill(buf, 256, 4);
	h = hdrs(ROCE_OP_RC_WRITE_FIRST, &b, 1004, 0);
	reth(&h, 0x00007f0000001000ull, 0x00001234, 300);
	emit(g, &a.l3, &h, buf, 256);
	fill(buf, 44, 5);
	h = hdrs(ROCE_OP_RC_WRITE_LAST, &b, 1005, 1);
	emit(g, &a.l3, &h, buf, 44);
	h = hdrs(ROCE_OP_RC_WRITE_ONLY_IMM, &b, 1006, 1);
	reth(&h, 0x00007f0000002000ull, 0x00001234, 8);
	h.imm = 0x0000cafe;
	emit(g, &a.l3, &h, "abcdefgh", 8);
	h = ack(ROCE_OP_RC_ACK, &a, 1006, ROCE_AETH_SYN_ACK(31), 4);
	emit(g, &b.l3, &h, NULL, 0);
	/* READ of 600 bytes: three PSNs of response. */
	h = hdrs(ROCE_OP_RC_READ_REQUEST, &b, 1007, 1);
	reth(&h, 0x00007f0000003000ull, 0x00005678, 600);
	emit(g, &a.l3, &h, NULL, 0);
	fill(buf, 600, 6);
	h = ack(ROCE_OP_RC_READ_RESP_FIRST, &a, 1007, ROCE_AETH_SYN_ACK(31), 5);
	emit(g, &b.l3, &h, buf, 256);
	h = hdrs(ROCE_OP_RC_READ_RESP_MIDDLE, &a, 1008, 0);
	emit(g, &b.l3, &h, buf + 256, 256);
	h = ack(ROCE_OP_RC_READ_RESP_LAST, &a, 1009, ROCE_AETH_SYN_ACK(31), 5);
	emit(g, &b.l3, &h, buf + 512, 88);
	/* Atomics and their ATOMIC ACKs. */
	h = hdrs(ROCE_OP_RC_CMP_SWAP, &b, 1010, 1);
	h.atomic.va = 0x00007f0000004000ull;
	h.atomic.rkey = 0x00005678;
	h.atomic.swap_add = 2;
	h.atomic.compare = 1;
	emit(g, &a.l3, &h, NULL, 0);
	h = ack(ROCE_OP_RC_ATOMIC_ACK, &a, 1010, ROCE_AETH_SYN_ACK(31), 6);
	h.atomic_ack_orig = 1;
	emit(g, &b.l3, &h, NULL, 0);
	h = hdrs(ROCE_OP_RC_FETCH_ADD, &b, 1011, 1);
	h.atomic.va = 0x00007f0000004000ull;
	h.atomic.rkey = 0x00005678;
	h.atomic.swap_add = 10;
	emit(g, &a.l3, &h, NULL, 0);
	h = ack(ROCE_OP_RC_ATOMIC_ACK, &a, 1011, ROCE_AETH_SYN_ACK(31), 7);
	h.atomic_ack_orig = 2;
	emit(g, &b.l3, &h, NULL, 0);
	/* A small READ answered by READ RESPONSE ONLY. */
	h = hdrs(ROCE_OP_RC_READ_REQUEST, &b, 1012, 1);
	reth(&h, 0x00007f0000005000ull, 0x00005678, 64);
	emit(g, &a.l3, &h, NULL, 0);
	fill(buf, 64, 7);
	h = ack(ROCE_OP_RC_READ_RESP_ONLY, &a, 1012, ROCE_AETH_SYN_ACK(31), 8);
	emit(g, &b.l3, &h, buf, 64);
	/* SEND with invalidate finds no receive WQE: RNR NAK (timer 1 = 0.01 ms, the 10 us until the next frame), retry, ACK. */
	h = hdrs(ROCE_OP_RC_SEND_ONLY_INV, &b, 1013, 1);
	h.ieth_rkey = 0x00001234;
	emit(g, &a.l3, &h, "inv", 3);
	h = ack(ROCE_OP_RC_ACK, &a, 1013, ROCE_AETH_SYN_RNR(1), 8);
	emit(g, &b.l3, &h, NULL, 0);
	h = hdrs(ROCE_OP_RC_SEND_ONLY_INV, &b, 1013, 1);
	h.ieth_rkey = 0x00001234;
	emit(g, &a.l3, &h, "inv", 3);
	h = ack(ROCE_OP_RC_ACK, &a, 1013, ROCE_AETH_SYN_ACK(31), 9);
	emit(g, &b.l3, &h, NULL, 0);
	/* PSN 1014 is lost: B answers 1015 with a PSN sequence error NAK for 1014. */
	h = hdrs(ROCE_OP_RC_SEND_ONLY, &b, 1015, 1);
	emit(g, &a.l3, &h, "late", 4);
	h = ack(ROCE_OP_RC_ACK, &a, 1014, ROCE_AETH_SYN_NAK(ROCE_NAK_PSN_SEQ_ERR), 9);
	emit(g, &b.l3, &h, NULL, 0);
	/* A WRITE with a bad R_Key: remote access error NAK. */
	h = hdrs(ROCE_OP_RC_WRITE_ONLY, &b, 1014, 1);
	reth(&h, 0x00007f0000006000ull, 0x00000bad, 16);
	fill(buf, 16, 8);
	emit(g, &a.l3, &h, buf, 16);
	h = ack(ROCE_OP_RC_ACK, &a, 1014, ROCE_AETH_SYN_NAK(ROCE_NAK_REM_ACCESS_ERR), 9);
	emit(g, &b.l3, &h, NULL, 0);
}

static void sample_uc_ud_cnp(struct gen *g)
{
	static const uint8_t cnp_zero[ROCE_CNP_PAD_LEN];
	struct peer a, b;
	struct roce_hdrs h;

	peers(&a, &b, 0, 0x000055, 0x000066, 0);
	h = hdrs(ROCE_OP_UC_SEND_ONLY, &b, 200, 0);
	emit(g, &a.l3, &h, "uc send", 7);
	h = hdrs(ROCE_OP_UC_WRITE_ONLY, &b, 201, 0);
	reth(&h, 0x00007f0000007000ull, 0x00000077, 4);
	emit(g, &a.l3, &h, "ucwr", 4);

	peers(&a, &b, 0, 0x000033, 0x000044, 1);
	h = hdrs(ROCE_OP_UD_SEND_ONLY, &b, 300, 0);
	h.deth.qkey = 0x11111111;
	h.deth.sqpn = a.qpn;
	emit(g, &a.l3, &h, "ud hello", 8);
	h = hdrs(ROCE_OP_UD_SEND_ONLY_IMM, &b, 301, 0);
	h.se = true;
	h.deth.qkey = 0x11111111;
	h.deth.sqpn = a.qpn;
	h.imm = 0x00abcdef;
	emit(g, &a.l3, &h, "ud imm", 6);

	/* B tells A's QP 0x11 to slow down (Annex A17.9.3: B=1, PSN 0, A=0). */
	peers(&a, &b, 0, 0x000011, 0x000022, 0);
	h = hdrs(ROCE_OP_CNP, &a, 0, 0);
	h.becn = true;
	emit(g, &b.l3, &h, cnp_zero, ROCE_CNP_PAD_LEN);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Copy the frames with id R1, R2, R3 and S0 from the ICRC vector table. */
static void sample_real(struct gen *g, const char *tsv)
{
	static const char *const ids[] = { "R1", "R2", "R3", "S0" };
	uint8_t f[FRAME_MAX];
	char line[8192];
	FILE *fp = fopen(tsv, "r");
	unsigned found = 0;

	if (!fp)
		die("cannot open %s", tsv);
	while (fgets(line, sizeof(line), fp)) {
		char *id = strtok(line, "\t\n"), *hex;
		size_t n = 0, i;
		int want = 0;

		if (!id || id[0] == '#')
			continue;
		for (i = 0; i < 4; i++)
			want |= strcmp(id, ids[i]) == 0;
		if (!want)
			continue;
		strtok(NULL, "\t\n");		/* description */
		strtok(NULL, "\t\n");		/* icrc_wire */
		hex = strtok(NULL, "\t\n");
		if (!hex)
			die("row %s has no frame", id);
		for (i = 0; hex[i] && hex[i + 1] && n < sizeof(f); i += 2) {
			int hi = hexval(hex[i]), lo = hexval(hex[i + 1]);

			if (hi < 0 || lo < 0)
				die("bad hex in row %s", id);
			f[n++] = (uint8_t)(hi << 4 | lo);
		}
		write_frame(g, f, n);
		printf("%u\t-\t-\t-\n", g->frame);
		found++;
	}
	fclose(fp);
	if (found != 4)
		die("%s: expected rows R1, R2, R3, S0", tsv);
}

/* ---- every opcode ------------------------------------------------------- */

static void all_opcodes(struct gen *g)
{
	static const uint8_t syns[] = {
		ROCE_AETH_SYN_ACK(31), ROCE_AETH_SYN_ACK(0), ROCE_AETH_SYN_ACK(12),
		ROCE_AETH_SYN_RNR(14), ROCE_AETH_SYN_NAK(ROCE_NAK_PSN_SEQ_ERR),
		ROCE_AETH_SYN_NAK(ROCE_NAK_REM_ACCESS_ERR),
	};
	uint8_t buf[512];
	unsigned i, n = roce_opcode_count(), k = 0;
	int v6;

	for (v6 = 0; v6 <= 1; v6++) {
		for (i = 0; i < n; i++) {
			const struct roce_opcode_info *op = roce_opcode_at(i);
			struct peer a, b;
			struct roce_hdrs h;
			uint32_t len;

			if (op->flags & ROCE_OPF_UNSUPPORTED)
				continue;
			k++;
			/* QPNs from 0x10 up (0 and 1 are special to tshark: MADs). */
			peers(&a, &b, v6, 0x000010 + k * 0x1011, 0x000020 + k * 0x3303, op->transport == ROCE_TRANSPORT_UD);
			/* odd k: just below the 2^24 wrap; even k: just above it */
			h = hdrs(op->opcode, &b, (k & 1) ? ROCE_PSN_MASK - k : k * 0x1357u,
				 (op->flags & ROCE_OPF_LAST) && (op->flags & ROCE_OPF_REQUEST));
			h.se = (op->flags & ROCE_OPF_LAST) && (op->flags & ROCE_OPF_SEND) && (k & 1);
			h.pkey = (k % 3 == 0) ? 0x8001 : ROCE_DEFAULT_PKEY;
			reth(&h, 0x00007f0000000000ull + k * 0x10008ull, 0x100 * k + 3, 1000 + k);
			h.atomic.va = 0x00007f0000100000ull + k * 8;
			h.atomic.rkey = 0x200 * k + 5;
			h.atomic.swap_add = 0x1111111111111111ull * (k % 15);
			h.atomic.compare = 0x0123456789abcdefull + k;
			h.aeth.syndrome = (op->flags & ROCE_OPF_READ) ? ROCE_AETH_SYN_ACK(31)
								     : syns[k % sizeof(syns)];
			h.aeth.msn = 0xFFFF00 + k;
			h.atomic_ack_orig = 0xfedcba9876543210ull - k;
			h.imm = 0xa5a50000u + k;
			h.ieth_rkey = 0x5500 + k;
			h.deth.qkey = 0x11110000u + k;
			h.deth.sqpn = a.qpn;
			h.feth.sel = 1;
			h.feth.plt = 1;
			if (op->opcode == ROCE_OP_CNP) {
				h.becn = true;
				h.psn = 0;
			}
			if (op->fixed_payload >= 0)
				len = (uint32_t)op->fixed_payload;
			else if (op->flags & (ROCE_OPF_MIDDLE | ROCE_OPF_FIRST)) {
				len = (op->flags & ROCE_OPF_LAST) ? 1 + k % 61 : 256;
			} else {
				len = 1 + k % 61;
			}
			fill(buf, len, k);
			emit(g, &a.l3, &h, buf, len);
		}
	}
}

int main(int argc, char **argv)
{
	char err[PCAPW_ERRBUF_SIZE];
	struct gen g = { 0 };
	int sample;

	if (argc < 3 || (strcmp(argv[1], "sample") && strcmp(argv[1], "opcodes")) ||
	    (strcmp(argv[1], "sample") == 0) != (argc == 4) || argc > 4) {
		fprintf(stderr, "usage: gen_pcap sample OUT.pcap ICRC.tsv | gen_pcap opcodes OUT.pcap\n");
		return 2;
	}
	sample = strcmp(argv[1], "sample") == 0;
	g.w = pcapw_open(argv[2], PCAPW_LINK_ETHERNET, 0, err, sizeof(err));
	if (!g.w)
		die("%s", err);
	if (sample) {
		sample_rc(&g, 0);
		sample_uc_ud_cnp(&g);
		sample_rc(&g, 1);
		sample_real(&g, argv[3]);
	} else {
		all_opcodes(&g);
	}
	if (pcapw_close(g.w) != 0)
		die("closing the file: %s", strerror(errno));
	return fflush(stdout) == 0 ? 0 : 1;
}
