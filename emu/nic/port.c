/*
 * port.c - the device's network port: source-port sockets, transmit and
 * receive (see port.h).
 */
#include "config.h"
#include "emu/nic/port.h"
#include "emu/nic/capture.h"
#include "emu/nic/device.h"
#include "emu/nic/fault_queue.h"
#include "emu/nic/loopback.h"
#include "emu/nic/mem_wb.h"
#include "emu/nic/nic_time.h"
#include "emu/log.h"
#include "emu/mcast/mcast.h"
#include "emu/xport/xport.h"
#include "netstack/icrc.h"
#include "netstack/packet.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPORT_COUNT 65536

/* The device's own address as a GID (IPv4 v4-mapped). */
static void local_gid(const struct uroce_dev *d, uint8_t me[16])
{
	memset(me, 0, 16);
	if (d->addr.ss_family == AF_INET) {
		me[10] = me[11] = 0xff;
		memcpy(me + 12, &((const struct sockaddr_in *)&d->addr)->sin_addr, 4);
	} else {
		memcpy(me, &((const struct sockaddr_in6 *)&d->addr)->sin6_addr, 16);
	}
}

/* IP/UDP facts of a packet between this device and PEER. */
static void local_l3(const struct uroce_dev *d, struct roce_l3 *l3, const union ibv_gid *peer,
		     uint16_t sport, uint16_t dport, bool outgoing)
{
	uint8_t me[16];

	local_gid(d, me);
	memset(l3, 0, sizeof(*l3));
	l3->kind = roce_addr_is_v4mapped(peer->raw) ? ROCE_L3_IPV4 : ROCE_L3_IPV6;
	memcpy(outgoing ? l3->src : l3->dst, me, 16);
	memcpy(outgoing ? l3->dst : l3->src, peer->raw, 16);
	l3->sport = sport;
	l3->dport = dport;
}

void port_local_gid(const struct uroce_dev *d, union ibv_gid *gid)
{
	local_gid(d, gid->raw);
}

/* At most this many source-port sockets, and at most a quarter of the
 * descriptor limit: 16,384 QPs hash to nearly as many source ports, and
 * without a bound their sockets would fill the descriptor table that clients
 * need (quota.h). Past the bound packets leave from the device socket. */
#define SPORT_SOCKETS_MAX 1024u

static unsigned int sport_budget(const struct uroce_dev *d)
{
	unsigned int q = d->quota.fd_limit > 0 ? (unsigned int)d->quota.fd_limit / 4 : SPORT_SOCKETS_MAX;

	return q < SPORT_SOCKETS_MAX ? q : SPORT_SOCKETS_MAX;
}

/* Socket to send from with source port SPORT, or -1 (use the device's).
 * Deterministic mode sends everything from the device's port: whether
 * SPORT can be bound depends on the other sockets of the host (another
 * process, another user's daemon with the same QPNs), and a trace that
 * changes with them is no replay (docs/fault-injection.md). */
static int sport_socket(struct uroce_dev *d, uint16_t sport)
{
	struct sockaddr_storage a = d->addr;
	int fd, one = 1;

	if (sport == d->port || d->vt.on)
		return -1;
	if (d->sport_fd[sport])
		return d->sport_fd[sport];
	if (d->sport_open >= sport_budget(d))
		return -1;
	fd = socket(a.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (a.ss_family == AF_INET)
		((struct sockaddr_in *)&a)->sin_port = htons(sport);
	else
		((struct sockaddr_in6 *)&a)->sin6_port = htons(sport);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
	    (errno = udp_port_sockopts(fd, a.ss_family)) != 0 ||
	    bind(fd, (struct sockaddr *)&a, d->addr_len) < 0) {
		ulog(ULOG_DEBUG, "UDP source port %u not available (%s): sending from %u", sport,
		     strerror(errno), d->port);
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	d->sport_fd[sport] = fd;
	if (fd >= 0)
		d->sport_open++;
	return fd;
}

static int wire_send(struct uroce_dev *d, const struct fault_meta *m, const uint8_t *pkt, size_t len);

/*
 * Whether the packet PKT (from the BTH, LEN bytes) tells its peer that
 * data written here is in memory: an ACKNOWLEDGE (an ACK or NAK covers
 * every earlier request of the QP, IBTA 9.7) or an ATOMIC ACKNOWLEDGE
 * (after the responder's staged atomic write). The pending run is written
 * before those leave. Requests announce nothing written here (a READ
 * request must not cut the run of earlier READs' responses arriving
 * meanwhile); their payload and a READ response's are read through
 * mem_access, which writes the pending run first, and a READ response
 * implicitly acknowledges only whole messages, each written at its last
 * packet (the engine's mem_sync). An unknown opcode counts as announcing.
 */
static bool xmit_announces(const void *pkt, size_t len)
{
	const struct roce_opcode_info *op = len ? roce_opcode_info(*(const uint8_t *)pkt) : NULL;

	return !op || ((op->flags & ROCE_OPF_RESPONSE) && !(op->flags & ROCE_OPF_READ));
}

int port_xmit(struct uroce_dev *d, const union ibv_gid *dgid, uint16_t sport, uint8_t tclass,
	      const void *pkt, size_t len, bool now)
{
	struct sockaddr_storage to;
	socklen_t tolen;
	uint8_t buf[4224];
	struct roce_l3 l3;
	int fd;
	uint32_t crc;

	if (xmit_announces(pkt, len))
		mem_wb_flush(d);
	if (mcast_gid_is_multicast(dgid->raw)) {
		union ibv_gid me;

		local_gid(d, me.raw);
		return mcast_xmit(d, &me, dgid->raw, sport, tclass, pkt, len);
	}
	fd = sport_socket(d, sport);

	memset(&to, 0, sizeof(to));
	if (roce_addr_is_v4mapped(dgid->raw)) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&to;

		if (d->addr.ss_family != AF_INET)
			return EAFNOSUPPORT;
		s4->sin_family = AF_INET;
		s4->sin_port = htons(d->port);
		memcpy(&s4->sin_addr, dgid->raw + 12, 4);
		tolen = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&to;

		if (d->addr.ss_family != AF_INET6)
			return EAFNOSUPPORT;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(d->port);
		memcpy(&s6->sin6_addr, dgid->raw, 16);
		tolen = sizeof(*s6);
	}
	if (fd < 0) {
		/* leaves from the device port: ICRC for that port */
		if (len > sizeof(buf) || len < 16)
			return EMSGSIZE;
		memcpy(buf, pkt, len);
		local_l3(d, &l3, dgid, d->port, d->port, true);
		if (roce_icrc_udp(buf, len, &l3, &crc))
			return EINVAL;
		roce_icrc_put(buf + len - 4, crc);
		pkt = buf;
		fd = d->udp.fd;
	} else {
		local_l3(d, &l3, dgid, sport, d->port, true);
	}
	l3.tclass = tclass;
	{
		struct fault_meta m;
		unsigned int copies;
		int rc;

		m.fd = fd;
		m.now = now;
		m.tclass = tclass;
		m.tolen = tolen;
		memcpy(&m.addr, &to, sizeof(to));
		m.l3 = l3;
		/* a packet the injector decides on may be corrupted, and one it
		 * holds leaves later, when the fault may be cleared already */
		m.verified = !fault_active(d->fault, FAULT_TX);
		if (m.verified)
			return wire_send(d, &m, pkt, len);
		rc = fault_apply(d, FAULT_TX, &m, pkt, len, &copies);
		if (!copies)
			d->udp.tx_dropped++;
		return rc;
	}
}

/* Whether GID (16 bytes) is this device's own address. */
static bool is_self(const struct uroce_dev *d, const uint8_t gid[16])
{
	uint8_t me[16];

	local_gid(d, me);
	return !memcmp(me, gid, 16);
}

/* The wire: one datagram leaves (after the fault injector), through the
 * transmit queue, or, addressed to this device's own address and port,
 * through the internal loopback (loopback.h). It is recorded when queued,
 * so the capture keeps the order (and, in deterministic mode, the virtual
 * times) of transmission; one the kernel then refuses is counted in
 * tx_errors. */
static int wire_send(struct uroce_dev *d, const struct fault_meta *m, const uint8_t *pkt, size_t len)
{
	int e = 1;

	if (!d->udp.lb.off && udp_port_is_own(&d->udp, (const struct sockaddr *)&m->addr))
		e = loopback_take(&d->udp, pkt, len, m->l3.sport, m->verified);
	if (e)
		e = udp_port_queue(&d->udp, m->fd, pkt, len, (const struct sockaddr *)&m->addr, m->tolen,
				   m->tclass, m->now);
	if (e)
		return e;
	nic_vtime_packet(d, true, is_self(d, m->l3.dst));
	capture_packet(d, &m->l3, pkt, len);
	return 0;
}

/* A datagram that passed the receive-side fault injector. */
static int port_deliver(struct uroce_dev *d, const struct fault_meta *m, const uint8_t *buf, size_t len)
{
	const struct sockaddr_storage *from = &m->addr;
	union ibv_gid peer;
	struct roce_l3 l3;
	uint16_t sport;
	int rc;

	memset(&peer, 0, sizeof(peer));
	if (from->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)from;

		peer.raw[10] = peer.raw[11] = 0xff;
		memcpy(peer.raw + 12, &s4->sin_addr, 4);
		sport = ntohs(s4->sin_port);
	} else {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)from;

		memcpy(peer.raw, &s6->sin6_addr, 16);
		sport = ntohs(s6->sin6_port);
	}
	local_l3(d, &l3, &peer, sport, d->port, false);
	/* traffic of this device to itself was recorded when it was sent; a
	 * peer's IPv4 ID is recorded as its ICRC names it (docs/icrc.md) */
	if (d->capture && memcmp(l3.src, l3.dst, 16)) {
		roce_icrc_udp_check(buf, len, &l3, NULL, &l3.ip_id);
		capture_packet(d, &l3, buf, len);
	}
	{
		union ibv_gid sgid, dgid;
		char ab[INET6_ADDRSTRLEN] = "?";

		memcpy(sgid.raw, l3.src, 16);
		memcpy(dgid.raw, l3.dst, 16);
		/* QP1 (the GSI: CM MADs) is the connection manager's, not the
		 * engine's; BTH bytes 5..7 are the destination QPN */
		if (len >= 12 && buf[5] == 0 && buf[6] == 0 && buf[7] == 1) {
			if (d->qp1_rx)
				d->qp1_rx(d, buf, len, &sgid, &dgid, sport, m->verified);
			return 0;
		}
		rc = m->verified ? xport_input_verified(d->xdev, buf, len, &sgid, &dgid, sport, d->port)
				 : xport_input(d->xdev, buf, len, &sgid, &dgid, sport, d->port);
		if (rc == 0)
			d->rx_taken++;
		if (rc != EACCES)
			return 0;
		inet_ntop(from->ss_family,
			  from->ss_family == AF_INET ? (const void *)&((const struct sockaddr_in *)from)->sin_addr
						     : (const void *)&((const struct sockaddr_in6 *)from)->sin6_addr,
			  ab, sizeof(ab));
		ulog_limited(ULOG_LIMIT_RX_SRC, ULOG_WARN,
			     "packet from %s port %u for a connected QP with another remote address: dropped",
			     ab, sport);
	}
	return 0;
}

static void port_rx(void *ctx, const uint8_t *buf, size_t len, const struct sockaddr_storage *from,
		    bool verified)
{
	struct uroce_dev *d = ctx;
	struct fault_meta m;
	const uint8_t *a = from->ss_family == AF_INET
				   ? (const uint8_t *)&((const struct sockaddr_in *)from)->sin_addr
				   : (const uint8_t *)&((const struct sockaddr_in6 *)from)->sin6_addr;
	uint8_t gid[16] = { [10] = 0xff, [11] = 0xff };

	if (from->ss_family == AF_INET)
		memcpy(gid + 12, a, 4);
	else
		memcpy(gid, a, 16);
	nic_vtime_packet(d, false, is_self(d, gid));
	memset(&m, 0, sizeof(m));
	m.fd = -1;
	memcpy(&m.addr, from, sizeof(*from));
	if (!fault_active(d->fault, FAULT_RX)) {
		m.verified = verified;
		port_deliver(d, &m, buf, len);
	}
	else
		fault_apply(d, FAULT_RX, &m, buf, len, NULL);
}

/* End of a receive batch: the ACKs the engine held for it (xport_ack_flush),
 * each written after the pending run (port_xmit); the run itself may go on
 * into the next batch. */
static void port_rx_done(void *ctx)
{
	struct uroce_dev *d = ctx;

	if (d->xdev)
		xport_ack_flush(d->xdev);
}

int port_init(struct uroce_dev *d)
{
	int rc;

	/* 0 = not tried yet, -1 = unusable, else the socket */
	d->sport_fd = calloc(SPORT_COUNT, sizeof(*d->sport_fd));
	if (!d->sport_fd)
		return ENOMEM;
	rc = fault_dev_init(d, d->seed, wire_send, port_deliver);
	if (rc) {
		free(d->sport_fd);
		d->sport_fd = NULL;
		return rc;
	}
	d->udp.rx = port_rx;
	d->udp.rx_done = port_rx_done;
	d->udp.rx_ctx = d;
	return 0;
}

void port_fini(struct uroce_dev *d)
{
	unsigned int i;

	d->udp.rx = NULL;
	d->udp.rx_done = NULL;
	fault_dev_fini(d);
	udp_port_flush(&d->udp); /* before the source-port sockets close */
	nic_vtime_fini(d);
	if (!d->sport_fd)
		return;
	for (i = 0; i < SPORT_COUNT; i++)
		if (d->sport_fd[i] > 0)
			close(d->sport_fd[i]);
	d->sport_open = 0;
	free(d->sport_fd);
	d->sport_fd = NULL;
}
