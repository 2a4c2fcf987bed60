/*
 * segment.c - the device's Ethernet port: its MAC, and the virtual
 * Ethernet segment that joins the devices, carried in VXLAN (RFC 7348:
 * an 8-byte header, flags 0x08 = "VNI valid", a 24-bit VNI, over UDP to
 * port 4789) so tshark decodes it and a Linux vxlan interface with the
 * same VNI and port can be a member. Who gets a frame: the peer learned
 * for its destination MAC (flood and learn, as Linux vxlan's FDB), else
 * every static peer (--vxlan-peer); broadcast and multicast always go to
 * every static peer. docs/raw-packet.md explains the choice.
 */
#include "config.h"
#include "emu/eth/eth_int.h"
#include "emu/obj/objects.h"
#include "emu/log.h"
#include "emu/mcast/mcast.h"
#include "emu/nic/device.h"
#include "emu/nic/nic_time.h"
#include "emu/nic/udp_port.h"
#include "netstack/packet.h"
#include "netstack/pcap_writer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Datagrams read per readable event: other work (the RoCE socket, control
 * requests) runs in between. */
#define RX_BUDGET 64

void eth_port_mac(const struct uroce_dev *d, uint8_t mac[6])
{
	uint64_t g = d->node_guid;

	/* EUI-64 02 00 a ff fe b c d -> EUI-48 02 00 a b c d */
	mac[0] = (uint8_t)(g >> 56);
	mac[1] = (uint8_t)(g >> 48);
	mac[2] = (uint8_t)(g >> 40);
	mac[3] = (uint8_t)(g >> 16);
	mac[4] = (uint8_t)(g >> 8);
	mac[5] = (uint8_t)g;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct eth_fdb_entry *fdb_slot(struct eth_port *p, const uint8_t mac[6])
{
	uint32_t h = 2166136261u;

	for (int i = 0; i < 6; i++)
		h = (h ^ mac[i]) * 16777619u;
	return &p->fdb[h % ETH_FDB_SIZE];
}

static void fdb_learn(struct eth_port *p, const uint8_t mac[6], const struct sockaddr_storage *from,
		      socklen_t len)
{
	struct eth_fdb_entry *e;

	if (mac[0] & 1)
		return; /* a group address is never a source */
	e = fdb_slot(p, mac);
	memcpy(e->mac, mac, 6);
	e->used = true;
	e->seen_ns = now_ns();
	e->addr = *from;
	e->addr_len = len;
	/* the peer's address, at the segment's port: VXLAN senders pick their
	 * source port per flow (RFC 7348 §5, as Linux does), and listen on the
	 * VXLAN port */
	if (from->ss_family == AF_INET)
		((struct sockaddr_in *)&e->addr)->sin_port = htons(p->vxlan_port);
	else
		((struct sockaddr_in6 *)&e->addr)->sin6_port = htons(p->vxlan_port);
}

static const struct eth_fdb_entry *fdb_find(struct eth_port *p, const uint8_t mac[6])
{
	const struct eth_fdb_entry *e = fdb_slot(p, mac);

	if (!e->used || memcmp(e->mac, mac, 6) || now_ns() - e->seen_ns > ETH_FDB_AGE_NS)
		return NULL;
	return e;
}

void eth_deliver(struct eth_port *p, const uint8_t *frame, size_t len, const struct ctl_qp *from_qp)
{
	struct steer_hit hits[64];
	struct frame_info fi;
	unsigned int n;
	bool drop, for_us;

	if (!frame_parse(frame, len, &fi))
		return;
	for_us = !from_qp || !memcmp(frame, p->mac, 6);
	/* a frame sent here to another station's MAC reaches a local QP only
	 * through a rule naming it (or a sniffer), never a default rule */
	n = steer_lookup(p, frame, len, &fi, for_us || (frame[0] & 1), hits, 64, &drop);
	if (drop && for_us)
		p->st.rx_rule_drop++;
	else if (!n && for_us)
		p->st.rx_no_rule++;
	for (unsigned int i = 0; i < n; i++) {
		struct ctl_qp *qp = hits[i].qp;

		if (qp == from_qp)
			continue;
		/* an RSS QP: the WQ its hash picks receives */
		if (qp->raw->rss && !(qp = rss_pick(qp, frame, &fi)))
			continue;
		raw_qp_receive(qp, frame, len, &fi, &hits[i]);
	}
}

/* The address of SS (v4-mapped for IPv4) and its port (host order). */
static void l3_addr(const struct sockaddr_storage *ss, uint8_t a16[16], uint16_t *port)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

		roce_addr_from_ipv4(a16, ntohl(s4->sin_addr.s_addr));
		*port = ntohs(s4->sin_port);
	} else {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

		memcpy(a16, &s6->sin6_addr, 16);
		*port = ntohs(s6->sin6_port);
	}
}

/* A VXLAN datagram (DLEN bytes in p->buf) sent to / received from PEER into
 * the device's capture (`uroce capture`), with the IP and UDP headers the
 * kernel puts around it. */
static void seg_capture(struct eth_port *p, const struct sockaddr_storage *peer, size_t dlen, bool out)
{
	static uint8_t pkt[VXLAN_HLEN + ETH_FRAME_MAX + 64];
	struct roce_l3 l3 = { .kind = p->dev->addr.ss_family == AF_INET ? ROCE_L3_IPV4 : ROCE_L3_IPV6 };
	uint8_t me[16], them[16];
	uint16_t myport, theirport;
	size_t n;

	if (!p->dev->capture)
		return;
	l3_addr(&p->dev->addr, me, &myport);
	myport = p->vxlan_port;
	l3_addr(peer, them, &theirport);
	memcpy(out ? l3.src : l3.dst, me, 16);
	memcpy(out ? l3.dst : l3.src, them, 16);
	l3.sport = out ? myport : theirport;
	l3.dport = out ? theirport : myport;
	if (roce_wrap_ip(pkt, sizeof(pkt), &l3, p->buf, dlen, &n) == 0)
		pcapw_write(p->dev->capture, pkt, n, NULL);
}

static void send_to(struct eth_port *p, const struct sockaddr_storage *to, socklen_t len, size_t dlen)
{
	if (sendto(p->fd, p->buf, dlen, 0, (const struct sockaddr *)to, len) < 0) {
		p->st.tx_errors++;
		ulog_limited(ULOG_LIMIT_REFUSED, ULOG_WARN, "%s: VXLAN send failed: %s", p->dev->name,
			     strerror(errno));
		return;
	}
	p->st.tx_vxlan++;
	seg_capture(p, to, dlen, true);
}

void eth_segment_xmit(struct eth_port *p, const uint8_t *frame, size_t len)
{
	const struct eth_fdb_entry *e;

	if (p->fd < 0 || len > ETH_FRAME_MAX)
		return;
	/* RFC 7348 §5: flags (I = 0x08), 24 reserved bits, VNI, 8 reserved bits */
	memset(p->buf, 0, VXLAN_HLEN);
	p->buf[0] = 0x08;
	p->buf[4] = (uint8_t)(p->vni >> 16);
	p->buf[5] = (uint8_t)(p->vni >> 8);
	p->buf[6] = (uint8_t)p->vni;
	memcpy(p->buf + VXLAN_HLEN, frame, len);
	if (!(frame[0] & 1) && (e = fdb_find(p, frame))) {
		send_to(p, &e->addr, e->addr_len, VXLAN_HLEN + len);
		return;
	}
	for (unsigned int i = 0; i < p->n_peers; i++)
		send_to(p, &p->peers[i], p->peer_len[i], VXLAN_HLEN + len);
}

/* One datagram from the segment. */
static void segment_rx(struct eth_port *p, size_t dlen, const struct sockaddr_storage *from, socklen_t flen)
{
	const uint8_t *v = p->buf;
	uint32_t vni;

	p->st.rx_vxlan++;
	seg_capture(p, from, dlen, false);
	if (dlen < VXLAN_HLEN + 14 || !(v[0] & 0x08) || dlen > VXLAN_HLEN + (size_t)p->mtu + 18) {
		p->st.rx_bad_vxlan++;
		ulog_limited(ULOG_LIMIT_RX_SRC, ULOG_DEBUG, "%s: malformed VXLAN datagram (%zu bytes) dropped",
			     p->dev->name, dlen);
		return;
	}
	vni = (uint32_t)v[4] << 16 | (uint32_t)v[5] << 8 | v[6];
	if (vni != p->vni) {
		p->st.rx_wrong_vni++;
		return;
	}
	p->st.rx_frames++;
	fdb_learn(p, v + VXLAN_HLEN + 6, from, flen);
	if (mcast_frame_rx(p->dev, v + VXLAN_HLEN, dlen - VXLAN_HLEN))
		return;
	eth_deliver(p, v + VXLAN_HLEN, dlen - VXLAN_HLEN, NULL);
}

static void segment_readable(struct ev_loop *loop, ev_io *w, int revents)
{
	struct eth_port *p = w->data;

	(void)loop;
	(void)revents;
	for (int i = 0; i < RX_BUDGET; i++) {
		struct sockaddr_storage from;
		socklen_t flen = sizeof(from);
		ssize_t n = recvfrom(p->fd, p->buf, sizeof(p->buf), MSG_DONTWAIT | MSG_TRUNC,
				     (struct sockaddr *)&from, &flen);

		if (n < 0)
			return;
		if ((size_t)n > sizeof(p->buf)) {
			p->st.rx_vxlan++;
			p->st.rx_bad_vxlan++;
			continue;
		}
		segment_rx(p, (size_t)n, &from, flen);
	}
}

static bool same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr &&
		       ((const struct sockaddr_in *)a)->sin_port == ((const struct sockaddr_in *)b)->sin_port;
	return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr, 16) &&
	       ((const struct sockaddr_in6 *)a)->sin6_port == ((const struct sockaddr_in6 *)b)->sin6_port;
}

int eth_port_open(struct uroce_dev *d, const struct eth_cfg *cfg)
{
	struct eth_port *p = calloc(1, sizeof(*p));
	struct sockaddr_storage me = d->addr;
	int fd;

	if (!p)
		return ENOMEM;
	p->dev = d;
	p->fd = -1;
	p->mtu = cfg->mtu;
	p->vni = cfg->vni & 0xFFFFFF;
	p->vxlan_port = cfg->vxlan_port;
	eth_port_mac(d, p->mac);
	d->eth = p;
	if (!cfg->vxlan_port)
		return 0;
	if (me.ss_family == AF_INET)
		((struct sockaddr_in *)&me)->sin_port = htons(cfg->vxlan_port);
	else
		((struct sockaddr_in6 *)&me)->sin6_port = htons(cfg->vxlan_port);
	for (unsigned int i = 0; i < cfg->n_peers; i++) {
		if (cfg->peers[i].ss_family != me.ss_family || same_host(&cfg->peers[i], &me))
			continue;
		p->peers[p->n_peers] = cfg->peers[i];
		p->peer_len[p->n_peers++] = cfg->peer_len[i];
	}
	fd = socket(me.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&me, d->addr_len) < 0) {
		ulog(ULOG_WARN, "%s: VXLAN segment off: cannot bind UDP port %u: %s", d->name,
		     cfg->vxlan_port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 0;
	}
	/* the buffers of the device's RoCE socket: a burst of multicast
	 * datagrams (docs/multicast.md) arrives here as frames; FORCE needs
	 * CAP_NET_ADMIN, else net.core.rmem_max caps it */
	{
		int want = UDP_PORT_BUF_BYTES;

		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof(want)) < 0)
			setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof(want));
	}
	p->fd = fd;
	ev_io_init(&p->io, segment_readable, fd, EV_READ);
	p->io.data = p;
	ev_io_start(d->loop, &p->io);
	ulog(ULOG_INFO, "%s: Ethernet %02x:%02x:%02x:%02x:%02x:%02x mtu %u, VXLAN vni %u udp port %u, %u peers",
	     d->name, p->mac[0], p->mac[1], p->mac[2], p->mac[3], p->mac[4], p->mac[5], p->mtu, p->vni,
	     cfg->vxlan_port, p->n_peers);
	return 0;
}

void eth_port_close(struct uroce_dev *d)
{
	struct eth_port *p = d->eth;

	if (!p)
		return;
	if (p->fd >= 0) {
		ev_io_stop(d->loop, &p->io);
		close(p->fd);
	}
	free(p);
	d->eth = NULL;
}

void eth_status(const struct uroce_dev *d, FILE *fp)
{
	const struct eth_port *p = d->eth;
	const struct eth_stats *s;

	if (!p)
		return;
	s = &p->st;
	fprintf(fp, "eth mac=%02x:%02x:%02x:%02x:%02x:%02x mtu=%u vxlan=%s vxlan_port=%u vni=%u peers=%u "
		    "rules=%u tx_frames=%llu tx_bytes=%llu tx_vxlan=%llu tx_errors=%llu rx_vxlan=%llu "
		    "rx_frames=%llu rx_bad_vxlan=%llu rx_wrong_vni=%llu rx_no_rule=%llu rx_rule_drop=%llu "
		    "rx_no_wqe=%llu rx_delivered=%llu\n",
		p->mac[0], p->mac[1], p->mac[2], p->mac[3], p->mac[4], p->mac[5], p->mtu,
		p->fd >= 0 ? "on" : "off", p->vxlan_port, p->vni, p->n_peers, p->n_rules,
		(unsigned long long)s->tx_frames, (unsigned long long)s->tx_bytes,
		(unsigned long long)s->tx_vxlan, (unsigned long long)s->tx_errors,
		(unsigned long long)s->rx_vxlan, (unsigned long long)s->rx_frames,
		(unsigned long long)s->rx_bad_vxlan, (unsigned long long)s->rx_wrong_vni,
		(unsigned long long)s->rx_no_rule, (unsigned long long)s->rx_rule_drop,
		(unsigned long long)s->rx_no_wqe, (unsigned long long)s->rx_delivered);
}

void eth_qp_status(const struct ctl_qp *qp, FILE *fp)
{
	static const char *const names[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };
	const struct raw_qp *r = qp->raw;

	fprintf(fp, "  qp qpn=0x%x type=RAW_PACKET state=%s rules=%u tx_frames=%llu rx_frames=%llu "
		    "rx_dropped=%llu\n",
		qp->qpn, (unsigned int)r->state <= IBV_QPS_ERR ? names[r->state] : "?", r->n_rules,
		(unsigned long long)r->tx_frames, (unsigned long long)r->rx_frames,
		(unsigned long long)r->rx_dropped);
}
