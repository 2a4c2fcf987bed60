/*
 * datapath.c - the transport engine inside uroced (see datapath.h).
 *
 * Source ports: the engine builds each packet's ICRC for the QP's UDP source
 * port (flow-label convention, netstack/udp_sport.h). The packet leaves from
 * a send-only socket bound to addr:sport (SO_REUSEPORT, shared by every
 * daemon of the same uid); if that port cannot be bound, it leaves from the
 * device socket and the ICRC is recomputed for the device port, so the
 * receiver's check (over the ports it actually sees) always holds.
 */
#include "config.h"
#include "emu/nic/datapath.h"
#include "emu/ctl/client.h"
#include "emu/nic/cqe_writer.h"
#include "emu/nic/device.h"
#include "emu/log.h"
#include "emu/nic/mem_access.h"
#include "emu/ctl/objects.h"
#include "emu/nic/wqe_reader.h"
#include "emu/xport/xport.h"
#include "netstack/icrc.h"
#include "netstack/packet.h"
#include "netstack/pcap_writer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* send-only sockets per UDP source port (0 = not tried, -1 = unusable) */
static int sport_fd[65536];

static uint64_t dp_now_ns(void *ctx)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static enum xport_mem_status dp_mem(void *ctx, struct xport_qp *xqp, uint32_t pd, bool is_rkey,
				    uint32_t key, uint64_t addr, void *buf, uint32_t len,
				    unsigned int access, enum xport_mem_op op)
{
	return mem_access(ctx, pd, is_rkey, key, addr, buf, len, access, op);
}

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

/* Record one packet (UDP payload PKT) with its IP/UDP headers. */
static void capture(struct uroce_dev *d, const struct roce_l3 *l3, const void *pkt, size_t len)
{
	uint8_t frame[4224 + 64];
	size_t n;

	if (!d->capture)
		return;
	if (roce_wrap_ip(frame, sizeof(frame), l3, pkt, len, &n) == 0)
		pcapw_write(d->capture, frame, n, NULL);
}

/* Socket to send from with source port SPORT, or -1 (use the device's). */
static int sport_socket(struct uroce_dev *d, uint16_t sport)
{
	struct sockaddr_storage a = d->addr;
	int fd, one = 1, pmtu = IP_PMTUDISC_DO;

	if (sport == d->port)
		return -1;
	if (sport_fd[sport])
		return sport_fd[sport];
	fd = socket(a.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (a.ss_family == AF_INET)
		((struct sockaddr_in *)&a)->sin_port = htons(sport);
	else
		((struct sockaddr_in6 *)&a)->sin6_port = htons(sport);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
	    (a.ss_family == AF_INET && setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)) < 0) ||
	    bind(fd, (struct sockaddr *)&a, d->addr_len) < 0) {
		ulog(ULOG_DEBUG, "UDP source port %u not available (%s): sending from %u", sport,
		     strerror(errno), d->port);
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	sport_fd[sport] = fd;
	return fd;
}

/* Seeded loss (--loss P --seed N): xorshift64*, deterministic per daemon. */
static int lose_packet(struct uroce_dev *d)
{
	static uint64_t s;
	uint64_t x;

	if (d->loss_percent <= 0)
		return 0;
	if (!s)
		s = d->seed * 0x9E3779B97F4A7C15ull + 1;
	s ^= s >> 12;
	s ^= s << 25;
	s ^= s >> 27;
	x = (s * 0x2545F4914F6CDD1Dull) >> 11;
	return (double)x / (double)(1ull << 53) * 100.0 < d->loss_percent;
}

static int dp_xmit(void *ctx, struct xport_qp *xqp, const union ibv_gid *dgid, uint16_t sport,
		   const void *pkt, size_t len)
{
	struct uroce_dev *d = ctx;
	struct sockaddr_storage to;
	socklen_t tolen;
	uint8_t buf[4224];
	struct roce_l3 l3;
	int fd = sport_socket(d, sport);
	uint32_t crc;

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
	if (lose_packet(d)) {
		d->udp.tx_dropped++;
		return 0;
	}
	if (sendto(fd, pkt, len, MSG_DONTWAIT, (struct sockaddr *)&to, tolen) != (ssize_t)len)
		return errno;
	d->udp.tx_packets++;
	d->udp.tx_bytes += len;
	capture(d, &l3, pkt, len);
	return 0;
}

static void dp_complete(void *ctx, struct xport_qp *xqp, const struct xport_cqe *c)
{
	struct uroce_dev *d = ctx;
	struct qp *qp = xport_qp_user(xqp);
	struct uroce_qp_ring_hdr *h = qp->ring;
	struct mlx5_cqe64 cqe;
	int rc;

	/* the slot of this WQE (and of unsignaled ones before it) is free */
	if (h)
		__atomic_store_n(c->is_recv ? &h->rq_ci : &h->sq_ci, c->wr_index + 1, __ATOMIC_RELEASE);
	if (!c->signaled && c->status == IBV_WC_SUCCESS)
		return;
	cqe_build(c, hca_clock_now(&d->clock), d->addr.ss_family == AF_INET6, &cqe);
	rc = cq_push(c->is_recv ? qp->recv_cq : qp->send_cq, &cqe);
	if (rc)
		ulog(ULOG_WARN, "client#%u qpn 0x%x: completion lost: %s", qp->owner->id, qp->qpn,
		     strerror(rc));
}

static void qp_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct qp *qp = w->data;

	xport_timer_expired(qp->xqp);
}

static void dp_timer_arm(void *ctx, struct xport_qp *xqp, uint64_t when_ns)
{
	struct uroce_dev *d = ctx;
	struct qp *qp = xport_qp_user(xqp);
	uint64_t now = dp_now_ns(ctx);

	ev_timer_stop(d->loop, &qp->timer);
	if (!when_ns)
		return;
	ev_timer_set(&qp->timer, when_ns > now ? (double)(when_ns - now) / 1e9 : 0., 0.);
	ev_timer_start(d->loop, &qp->timer);
}

static void dp_qp_event(void *ctx, struct xport_qp *xqp, enum ibv_event_type event)
{
	struct qp *qp = xport_qp_user(xqp);

	if (event != IBV_EVENT_SQ_DRAINED)
		ulog(ULOG_INFO, "client#%u qpn 0x%x -> ERR (event %d)", qp->owner->id, qp->qpn, event);
	if (!client_async_event(qp->owner, qp->user_handle, event))
		qp->async_events++;
}

/* The engine's next turn for a QP that spent its budget: run after this
 * loop iteration's I/O (ev_check), with an ev_idle so that poll does not
 * block meanwhile. Control requests and other QPs get their turn between. */
static void dp_schedule(void *ctx, struct xport_qp *xqp)
{
	struct uroce_dev *d = ctx;
	struct qp *qp = xport_qp_user(xqp);

	ev_check_start(d->loop, &qp->run_check);
	ev_idle_start(d->loop, &qp->run_idle);
}

static void qp_run_cb(struct ev_loop *loop, ev_check *w, int revents)
{
	struct qp *qp = w->data;

	ev_check_stop(loop, &qp->run_check);
	ev_idle_stop(loop, &qp->run_idle);
	xport_run(qp->xqp);
}

static void qp_idle_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
}

static const struct xport_ops dp_ops = {
	.now_ns = dp_now_ns,
	.mem = dp_mem,
	.xmit = dp_xmit,
	.complete = dp_complete,
	.timer_arm = dp_timer_arm,
	.qp_event = dp_qp_event,
	.schedule = dp_schedule,
};

static void dp_rx(void *ctx, const uint8_t *buf, size_t len, const struct sockaddr_storage *from)
{
	struct uroce_dev *d = ctx;
	union ibv_gid peer;
	struct roce_l3 l3;
	uint16_t sport;

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
	/* traffic of this device to itself was recorded when it was sent */
	if (memcmp(l3.src, l3.dst, 16))
		capture(d, &l3, buf, len);
	{
		union ibv_gid sgid, dgid;

		memcpy(sgid.raw, l3.src, 16);
		memcpy(dgid.raw, l3.dst, 16);
		xport_input(d->xdev, buf, len, &sgid, &dgid, sport, d->port);
	}
}

int datapath_init(struct uroce_dev *d)
{
	union ibv_gid me;

	local_gid(d, me.raw);
	d->xdev = xport_dev_new(&dp_ops, d, &me, d->port, d->mtu);
	if (!d->xdev)
		return errno ? errno : ENOMEM;
	d->udp.rx = dp_rx;
	d->udp.rx_ctx = d;
	return 0;
}

void datapath_fini(struct uroce_dev *d)
{
	unsigned int i;

	if (d->xdev)
		xport_dev_free(d->xdev);
	d->xdev = NULL;
	d->udp.rx = NULL;
	for (i = 0; i < 65536; i++)
		if (sport_fd[i] > 0)
			close(sport_fd[i]);
	memset(sport_fd, 0, sizeof(sport_fd));
}

int datapath_qp_create(struct qp *qp)
{
	struct uroce_dev *d = qp->owner->dev;

	qp->xqp = xport_qp_create(d->xdev, qp->type, qp->qpn, qp->pd->pdn, qp->cap.max_send_wr,
				  qp->cap.max_recv_wr ? qp->cap.max_recv_wr : 1, qp->sq_sig_all, qp);
	if (!qp->xqp)
		return errno ? errno : ENOMEM;
	ev_timer_init(&qp->timer, qp_timer_cb, 0., 0.);
	qp->timer.data = qp;
	ev_check_init(&qp->run_check, qp_run_cb);
	qp->run_check.data = qp;
	ev_idle_init(&qp->run_idle, qp_idle_cb);
	return 0;
}

void datapath_qp_destroy(struct qp *qp)
{
	if (!qp->xqp)
		return;
	ev_timer_stop(qp->owner->dev->loop, &qp->timer);
	ev_check_stop(qp->owner->dev->loop, &qp->run_check);
	ev_idle_stop(qp->owner->dev->loop, &qp->run_idle);
	xport_qp_destroy(qp->xqp);
	qp->xqp = NULL;
}

/* A WQE the daemon cannot execute: the engine completes it with
 * LOC_QP_OP_ERR after the older ones and moves the QP to ERR. */
static void bad_wqe(struct qp *qp, uint32_t n, bool is_recv, int why)
{
	ulog(ULOG_WARN, "client#%u qpn 0x%x: %s WQE %u refused (%s): QP to ERR", qp->owner->id, qp->qpn,
	     is_recv ? "receive" : "send", n, strerror(why));
	xport_post_refused(qp->xqp, is_recv, n);
}

static void qp_doorbell(struct qp *qp)
{
	struct uroce_qp_ring_hdr *h = qp->ring;
	uint32_t pi, n, budget;
	int rc;

	pi = __atomic_load_n(&h->sq_pi, __ATOMIC_ACQUIRE);
	for (budget = qp->cap.max_send_wr; qp->sq_next != pi && budget; budget--) {
		struct xport_send_wqe w;

		n = qp->sq_next++;
		rc = wqe_read_send(qp->owner, qp, n, &w);
		if (!rc)
			rc = xport_post_send(qp->xqp, &w);
		if (rc) {
			bad_wqe(qp, n, false, rc);
			qp->sq_next = pi;
			break;
		}
	}
	if (!qp->cap.max_recv_wr)
		return;
	pi = __atomic_load_n(&h->rq_pi, __ATOMIC_ACQUIRE);
	for (budget = qp->cap.max_recv_wr; qp->rq_next != pi && budget; budget--) {
		struct xport_recv_wqe w;

		n = qp->rq_next++;
		rc = wqe_read_recv(qp, n, &w);
		if (!rc)
			rc = xport_post_recv(qp->xqp, &w);
		if (rc) {
			bad_wqe(qp, n, true, rc);
			qp->rq_next = pi;
			break;
		}
	}
}

void datapath_doorbell(struct client *c)
{
	uint32_t h;

	for (h = 1; h <= c->qps.cap; h++) {
		struct qp *qp = objtab_get(&c->qps, h);

		if (qp && qp->ring && qp->xqp)
			qp_doorbell(qp);
	}
}
