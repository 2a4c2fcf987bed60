/*
 * icrc_bench.c - throughput of the daemon's receive-side ICRC check, for
 * scripts/bench (docs/performance.md).  Built with the tree (noinst) and
 * linked with the netstack; never installed.
 *
 *   icrc_bench [SECONDS]   (per case and size, default 1)
 *
 * For RC SEND ONLY packets with 0, 1024 and 4096 payload bytes over IPv4,
 * prints one line per case and size:
 *   "icrc PAYLOAD CASE ns_per_pkt MB_per_s"
 * Each is the best of 10 rounds of SECONDS/10 of thread CPU time, the cases
 * interleaved, so that a machine shared with other work disturbs them alike.
 * CASE is
 *   id0_exact  roce_parse_udp as it was before the IP ID was recovered
 *              (clear, parse the BTH, ICRC with ID 0, compare) on the ID-0
 *              packet;
 *   id0        roce_parse_udp on the ID-0 packet (what uroce sends);
 *   id_nonzero roce_parse_udp on the same packet sent with IP ID 0x3cc7 (as
 *              kernel rxe and ConnectX send): ICRC + solving for the ID.
 * MB/s counts the UDP payload (BTH..ICRC), 1 MB = 10^6 bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "netstack/icrc.h"
#include "netstack/packet.h"

enum bench_case { ID0_EXACT, ID0, ID_NONZERO };
static const char *const case_name[] = { "id0_exact", "id0", "id_nonzero" };

static double now_s(void)
{
	struct timespec ts;

	/* CPU time of this thread: on a machine shared with other work the time
	 * spent descheduled is not the check's */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One check of case C; returns 1 if the packet was accepted. */
static int check_once(enum bench_case c, const uint8_t *udp, size_t len, const struct roce_l3 *l3)
{
	struct roce_pkt pkt;
	uint32_t crc;

	if (c != ID0_EXACT)
		return roce_parse_udp(udp, len, l3, &pkt) == ROCE_OK;
	/* roce_parse_udp as it was: clear, parse the BTH, ICRC for ID 0, compare */
	memset(&pkt, 0, sizeof(pkt));
	pkt.l3 = *l3;
	if (roce_parse_bth(udp, len, &pkt) != ROCE_OK || roce_icrc_udp(udp, len, l3, &crc) != ROCE_OK)
		return 0;
	return crc == roce_icrc_get(udp + len - ROCE_ICRC_LEN);
}

/* Nanoseconds per check of case C over SECONDS. */
static double measure(enum bench_case c, const uint8_t *udp, size_t len, const struct roce_l3 *l3,
		      double seconds)
{
	unsigned long n = 0, ok = 0;
	double t0 = now_s(), t;

	do {
		for (int i = 0; i < 256; i++)
			ok += (unsigned long)check_once(c, udp, len, l3);
		n += 256;
		t = now_s() - t0;
	} while (t < seconds);
	if (ok != n) {
		fprintf(stderr, "icrc_bench: %s rejected %lu of %lu packets\n", case_name[c], n - ok, n);
		exit(1);
	}
	return t * 1e9 / (double)n;
}

int main(int argc, char **argv)
{
	static const uint32_t sizes[] = { 0, 1024, 4096 };
	static uint8_t data[4096], ip[4096 + 128];
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	struct roce_l3 l3 = { .kind = ROCE_L3_IPV4, .sport = 0xc121, .dport = ROCE_UDP_PORT };
	struct roce_hdrs h = { .opcode = ROCE_OP_RC_SEND_ONLY, .pkey = 0xffff, .dqpn = 0x11, .psn = 1 };

	if (seconds <= 0) {
		fprintf(stderr, "usage: icrc_bench [SECONDS]\n");
		return 2;
	}
	roce_addr_from_ipv4(l3.src, 0x0a4d0002);
	roce_addr_from_ipv4(l3.dst, 0x0a4d0001);
	memset(data, 0x7b, sizeof(data));
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n;
		uint8_t *udp = ip + ROCE_IPV4_HLEN + ROCE_UDP_HLEN, other[4096 + 64];
		double best[3] = { 1e30, 1e30, 1e30 };
		uint32_t crc;

		if (roce_build_ip(ip, sizeof(ip), &l3, &h, data, sizes[i], &n) != ROCE_OK)
			return 1;
		n -= ROCE_IPV4_HLEN + ROCE_UDP_HLEN;
		/* the same packet sent with IP ID 0x3cc7: its ICRC as the sender computes it */
		ip[4] = 0x3c;
		ip[5] = 0xc7;
		if (roce_icrc_ipv4(ip, ROCE_IPV4_HLEN + ROCE_UDP_HLEN + n, &crc) != ROCE_OK)
			return 1;
		memcpy(other, udp, n);
		roce_icrc_put(other + n - ROCE_ICRC_LEN, crc);
		for (int round = 0; round < 10; round++) {
			for (int c = ID0_EXACT; c <= ID_NONZERO; c++) {
				double ns = measure((enum bench_case)c, c == ID_NONZERO ? other : udp, n, &l3,
						    seconds / 10);

				if (ns < best[c])
					best[c] = ns;
			}
		}
		for (int c = ID0_EXACT; c <= ID_NONZERO; c++)
			printf("icrc %u %s %.1f %.0f\n", sizes[i], case_name[c], best[c],
			       (double)n * 1e3 / best[c]);
	}
	return 0;
}
