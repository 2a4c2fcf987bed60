/*
 * inspect_live_send.c - send real RoCEv2 packets through the kernel's UDP
 * stack on loopback, for tests/inspect_live.py to capture with tshark and
 * check with `uroce inspect`.
 *
 *   inspect_live_send --count   print how many packets a run sends
 *   inspect_live_send --serve   bind a free UDP port P on 127.0.0.1 and ::1,
 *                               print P, wait for a line on stdin (the
 *                               capture is running), then send the packets
 *                               to 127.0.0.1:P and [::1]:P
 *
 * One packet per opcode the codec speaks, per IP version, built by
 * roce_build_udp (BTH..ICRC) and sent with sendto() from an unconnected
 * socket with IP_PMTUDISC_DO, as the daemon sends: Linux then writes DF and
 * IP ID 0, which the ICRC of a UDP payload assumes (netstack/packet.h).
 * The sockets bound to P take the packets in, so no ICMP error is caused;
 * choosing P by bind() avoids any port in use (e.g. a running uroced).
 * Exit status 0, or 1 with a message.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netstack/packet.h"

static unsigned n_opcodes(void)
{
	unsigned i, n = 0;

	for (i = 0; i < roce_opcode_count(); i++)
		n += !(roce_opcode_at(i)->flags & ROCE_OPF_UNSUPPORTED);
	return n;
}

static int fail(const char *what)
{
	fprintf(stderr, "inspect_live_send: %s: %s\n", what, strerror(errno));
	return 1;
}

/* Bind a UDP socket of family AF to the loopback address and PORT (0 = any). */
static int udp_socket(int af, uint16_t port, struct sockaddr_storage *ss, socklen_t *len)
{
	int fd = socket(af, SOCK_DGRAM, 0), v;

	if (fd < 0)
		return -1;
	memset(ss, 0, sizeof(*ss));
	if (af == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*len = sizeof(*in);
		v = IP_PMTUDISC_DO;
		setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &v, sizeof(v));
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		in6->sin6_addr = in6addr_loopback;
		*len = sizeof(*in6);
		v = IPV6_PMTUDISC_DO;
		setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &v, sizeof(v));
		v = 1;
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v, sizeof(v));
	}
	if (bind(fd, (struct sockaddr *)ss, *len) != 0 ||
	    getsockname(fd, (struct sockaddr *)ss, len) != 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Send one packet per opcode to DST (bound to socket RX) from a new socket. */
static int send_all(int af, int rx, const struct sockaddr_storage *dst, socklen_t dlen, uint16_t port)
{
	struct sockaddr_storage src;
	socklen_t slen;
	struct roce_l3 l3;
	uint8_t pkt[8192], payload[256], drain[8192];
	unsigned i, k = 0;
	int tx;

	tx = udp_socket(af, 0, &src, &slen);
	if (tx < 0)
		return fail("bind the sending socket");
	memset(&l3, 0, sizeof(l3));
	l3.dport = port;
	if (af == AF_INET) {
		l3.kind = ROCE_L3_IPV4;
		roce_addr_from_ipv4(l3.src, INADDR_LOOPBACK);
		roce_addr_from_ipv4(l3.dst, INADDR_LOOPBACK);
		l3.sport = ntohs(((struct sockaddr_in *)&src)->sin_port);
	} else {
		l3.kind = ROCE_L3_IPV6;
		memcpy(l3.src, &in6addr_loopback, 16);
		memcpy(l3.dst, &in6addr_loopback, 16);
		l3.sport = ntohs(((struct sockaddr_in6 *)&src)->sin6_port);
	}

	for (i = 0; i < roce_opcode_count(); i++) {
		const struct roce_opcode_info *op = roce_opcode_at(i);
		struct roce_hdrs h;
		uint32_t len;
		size_t n = 0;
		int rc;

		if (op->flags & ROCE_OPF_UNSUPPORTED)
			continue;
		k++;
		memset(&h, 0, sizeof(h));
		h.opcode = op->opcode;
		h.pkey = ROCE_DEFAULT_PKEY;
		h.dqpn = 0x100 + k;
		h.psn = 0x1000 * k;
		h.ackreq = (op->flags & ROCE_OPF_LAST) && (op->flags & ROCE_OPF_REQUEST);
		h.reth.va = 0x10000 * k;
		h.reth.rkey = 0x42;
		h.reth.dma_len = 1000;
		h.atomic.va = 0x8000;
		h.atomic.rkey = 0x43;
		h.aeth.syndrome = ROCE_AETH_SYN_ACK(31);
		h.aeth.msn = k;
		h.deth.qkey = 0x11111111;
		h.deth.sqpn = 0x200 + k;
		if (op->opcode == ROCE_OP_CNP) {
			h.becn = true;
			h.psn = 0;
		}
		if (op->fixed_payload >= 0)
			len = (uint32_t)op->fixed_payload;
		else if ((op->flags & (ROCE_OPF_FIRST | ROCE_OPF_MIDDLE)) && !(op->flags & ROCE_OPF_LAST))
			len = 256;
		else
			len = k % 13;
		memset(payload, (int)k, sizeof(payload));
		if (op->opcode == ROCE_OP_CNP)
			memset(payload, 0, sizeof(payload));
		rc = roce_build_udp(pkt, sizeof(pkt), &l3, &h, payload, len, &n);
		if (rc != ROCE_OK) {
			fprintf(stderr, "inspect_live_send: build %s: %s\n", op->name, roce_err_name(rc));
			return 1;
		}
		if (sendto(tx, pkt, n, 0, (const struct sockaddr *)dst, dlen) != (ssize_t)n)
			return fail("sendto");
		if (recv(rx, drain, sizeof(drain), 0) < 0)
			return fail("recv");
	}
	close(tx);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage d4, d6;
	socklen_t l4, l6;
	char line[16];
	int rx4, rx6 = -1, tries;
	uint16_t port = 0;

	if (argc == 2 && strcmp(argv[1], "--count") == 0) {
		printf("%u\n", 2 * n_opcodes());
		return 0;
	}
	if (argc != 2 || strcmp(argv[1], "--serve") != 0) {
		fprintf(stderr, "usage: inspect_live_send --count | --serve\n");
		return 2;
	}
	/* A free port on both loopbacks: let the kernel pick it for IPv4. */
	for (tries = 0; tries < 20 && rx6 < 0; tries++) {
		rx4 = udp_socket(AF_INET, 0, &d4, &l4);
		if (rx4 < 0)
			return fail("bind 127.0.0.1");
		port = ntohs(((struct sockaddr_in *)&d4)->sin_port);
		rx6 = udp_socket(AF_INET6, port, &d6, &l6);
		if (rx6 < 0)
			close(rx4);
	}
	if (rx6 < 0)
		return fail("bind [::1] on the same port");
	printf("%u\n", port);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return fail("wait for the go line");
	if (send_all(AF_INET, rx4, &d4, l4, port) || send_all(AF_INET6, rx6, &d6, l6, port))
		return 1;
	close(rx4);
	close(rx6);
	return 0;
}
