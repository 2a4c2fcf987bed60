/*
 * udp_gso.c - UDP_SEGMENT and UDP_GRO for the device socket (see udp_gso.h,
 * docs/gso.md).
 */
#include "config.h"
#include "emu/nic/udp_gso.h"
#include "emu/nic/udp_port.h"

#include "emu/log.h"
#include "netstack/icrc.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <string.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103 /* linux/udp.h */
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#ifndef SOL_UDP
#define SOL_UDP 17
#endif

void udp_gso_setup(struct udp_port *u, bool off)
{
	int one = 1, seg = 0;
	socklen_t l = sizeof(seg);

	u->gso = u->gro = false;
	u->gso_refused = u->gro_refused = 0;
	if (off) {
		ulog(ULOG_INFO, "UDP offload off (--no-gso): one send and one read per datagram");
		return;
	}
	if (getsockopt(u->fd, SOL_UDP, UDP_SEGMENT, &seg, &l) == 0)
		u->gso = true;
	else
		u->gso_refused = errno;
	if (setsockopt(u->fd, SOL_UDP, UDP_GRO, &one, sizeof(one)) == 0)
		u->gro = true;
	else
		u->gro_refused = errno;
	ulog(u->gso && u->gro ? ULOG_INFO : ULOG_WARN, "UDP offload: GSO %s%s%s, GRO %s%s%s",
	     u->gso ? "on (UDP_SEGMENT)" : "off: the kernel refused UDP_SEGMENT (",
	     u->gso ? "" : strerror(u->gso_refused), u->gso ? "" : ")",
	     u->gro ? "on (UDP_GRO)" : "off: the kernel refused UDP_GRO (",
	     u->gro ? "" : strerror(u->gro_refused), u->gro ? "" : ")");
}

/* Largest UDP payload of one IP datagram: IPv4 total length and IPv6
 * payload length are 16 bits. */
static size_t run_bytes_max(const struct udp_tx_slot *t)
{
	return t->to.ss_family == AF_INET ? 65535u - 20 - 8 : 65535u - 8;
}

unsigned int udp_gso_run(const struct udp_port *u, unsigned int i)
{
	const struct udp_tx_slot *a = &u->txq[i];
	size_t total = a->len, max = run_bytes_max(a);
	unsigned int n = 1;

	if (!u->gso)
		return 1;
	while (i + n < u->txq_n && n < UDP_GSO_SEGS_MAX) {
		const struct udp_tx_slot *b = &u->txq[i + n];

		if (b->len > a->len || b->tclass != a->tclass || b->tolen != a->tolen ||
		    memcmp(&b->to, &a->to, a->tolen) || total + b->len > max)
			break;
		total += b->len;
		n++;
		if (b->len < a->len) /* only the last segment may be shorter */
			break;
	}
	return n;
}

void udp_gso_fix_icrc(struct udp_port *u, unsigned int i, unsigned int n)
{
	unsigned int k;

	if (u->txq[i].to.ss_family != AF_INET)
		return;
	for (k = 1; k < n; k++) {
		struct udp_tx_slot *t = &u->txq[i + k];
		uint8_t *icrc = t->pkt + t->len - 4;

		roce_icrc_put(icrc, roce_icrc_get(icrc) ^ roce_icrc_ipv4_id_delta(20 + 8 + t->len, (uint16_t)k));
	}
}

void udp_gso_refused(struct udp_port *u, unsigned int i, unsigned int n, int err)
{
	udp_gso_fix_icrc(u, i, n);
	u->tx_gso_fallbacks++;
	if (err != EIO && err != ENOPROTOOPT && err != EOPNOTSUPP)
		return;
	u->gso = false;
	u->gso_refused = err;
	ulog(ULOG_WARN, "UDP offload: the kernel refused a UDP_SEGMENT send of %u datagrams (%s): GSO off, "
			"one datagram per send from now on", n, strerror(err));
}

void udp_gso_segment_cmsg(struct msghdr *m, union udp_gso_cmsg *c, uint16_t seg)
{
	struct cmsghdr *h = (struct cmsghdr *)(c->b + m->msg_controllen);

	memset(h, 0, CMSG_SPACE(sizeof(seg)));
	h->cmsg_level = SOL_UDP;
	h->cmsg_type = UDP_SEGMENT;
	h->cmsg_len = CMSG_LEN(sizeof(seg));
	memcpy(CMSG_DATA(h), &seg, sizeof(seg));
	m->msg_control = c->b;
	m->msg_controllen += CMSG_SPACE(sizeof(seg));
}

size_t udp_gso_rx_size(struct msghdr *m, uint64_t *ovfl)
{
	struct cmsghdr *cm;
	size_t seg = 0;

	for (cm = CMSG_FIRSTHDR(m); cm; cm = CMSG_NXTHDR(m, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SO_RXQ_OVFL) {
			uint32_t v;

			memcpy(&v, CMSG_DATA(cm), sizeof(v));
			*ovfl = v;
		} else if (cm->cmsg_level == SOL_UDP && cm->cmsg_type == UDP_GRO) {
			int v;

			memcpy(&v, CMSG_DATA(cm), sizeof(v));
			seg = v > 0 ? (size_t)v : 0;
		}
	}
	return seg;
}
