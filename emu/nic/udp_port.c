/*
 * udp_port.c - the device's UDP socket (see udp_port.h).
 */
#include "config.h"
#include "emu/nic/udp_port.h"
#include "emu/nic/udp_gso.h"

#include "emu/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <linux/sockios.h>
#include <netinet/udp.h>
#include <stdlib.h>
#include <linux/sock_diag.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* Receive buffers of one recvmmsg call: whole datagrams of any size, so a
 * hostile oversized one reaches the parser (and its counter) untruncated.
 * One set for the process, with the message headers that point into it: the
 * callback is not re-entered. */
static uint8_t rx_buf[UDP_PORT_RX_MMSG][65536];
static struct mmsghdr rx_mh[UDP_PORT_RX_MMSG];
static struct iovec rx_iov[UDP_PORT_RX_MMSG];
static struct sockaddr_storage rx_from[UDP_PORT_RX_MMSG];
static union {
	struct cmsghdr h;
	char b[CMSG_SPACE(sizeof(uint32_t)) + CMSG_SPACE(sizeof(int))]; /* SO_RXQ_OVFL, UDP_GRO */
} rx_c[UDP_PORT_RX_MMSG];
static bool rx_mh_ready;

/* Entry I of the receive headers as recvmmsg(2) wants it; the kernel
 * changes only msg_len, msg_namelen, msg_controllen and msg_flags of the
 * entries it filled, so only those are set again after a call. */
static void rx_mh_reset(int i)
{
	rx_mh[i].msg_hdr.msg_namelen = sizeof(rx_from[i]);
	rx_mh[i].msg_hdr.msg_controllen = sizeof(rx_c[i].b);
	rx_mh[i].msg_hdr.msg_flags = 0;
	rx_mh[i].msg_len = 0;
}

static void rx_mh_init(void)
{
	int i;

	for (i = 0; i < UDP_PORT_RX_MMSG; i++) {
		rx_iov[i].iov_base = rx_buf[i];
		rx_iov[i].iov_len = sizeof(rx_buf[i]);
		memset(&rx_mh[i], 0, sizeof(rx_mh[i]));
		rx_mh[i].msg_hdr.msg_name = &rx_from[i];
		rx_mh[i].msg_hdr.msg_iov = &rx_iov[i];
		rx_mh[i].msg_hdr.msg_iovlen = 1;
		rx_mh[i].msg_hdr.msg_control = rx_c[i].b;
		rx_mh_reset(i);
	}
	rx_mh_ready = true;
}

/* The LEN bytes of one received datagram at BUF to the rx callback, cut into
 * the datagrams the kernel coalesced (UDP_GRO: each SEG bytes but the last);
 * returns how many. */
static unsigned int rx_deliver(struct udp_port *u, const uint8_t *buf, size_t len, size_t seg,
			       const struct sockaddr_storage *from)
{
	unsigned int k = 0;
	size_t off = 0;

	if (!seg || seg >= len)
		seg = len;
	do {
		size_t l = len - off < seg ? len - off : seg;

		u->rx_packets++;
		u->rx_bytes += l;
		if (u->rx)
			u->rx(u->rx_ctx, buf + off, l, from, false);
		off += l;
		k++;
	} while (off < len);
	if (k > 1) {
		u->rx_gro_reads++;
		u->rx_gro_packets += k;
	}
	return k;
}

/* Reads what waits in U's socket, at most UDP_PORT_RX_BATCH datagrams, and
 * hands each to the rx callback. Returns the number read (0: none waited). */
static unsigned int udp_rx_batch(struct udp_port *u)
{
	int i, n;
	unsigned int done = 0;

	if (!rx_mh_ready)
		rx_mh_init();
	/* Bounded batch so one busy socket cannot starve the control socket;
	 * recvmmsg(2): up to UDP_PORT_RX_MMSG datagrams per system call (with
	 * UDP_GRO each may hold several: they count one by one). */
	while (done < UDP_PORT_RX_BATCH) {
		n = recvmmsg(u->fd, rx_mh, UDP_PORT_RX_MMSG, MSG_DONTWAIT, NULL);
		if (n <= 0) {
			if (n == 0 || errno == EAGAIN)
				loopback_socket_idle(u);
			return done;
		}
		for (i = 0; i < n; i++) {
			size_t seg = udp_gso_rx_size(&rx_mh[i].msg_hdr, &u->rx_ovfl);

			done += rx_deliver(u, rx_buf[i], rx_mh[i].msg_len, seg, &rx_from[i]);
			rx_mh_reset(i);
		}
		if (u->rx_done)
			u->rx_done(u->rx_ctx);
		if (n < UDP_PORT_RX_MMSG) {
			/* the socket is empty: no call that would say EAGAIN */
			loopback_socket_idle(u);
			return done;
		}
	}
	return done;
}

static void udp_readable(struct ev_loop *loop, ev_io *w, int revents)
{
	struct udp_port *u = w->data;

	(void)loop;
	(void)revents;
	/* a settle that ran out of rounds may leave datagrams held while later
	 * ones spilled into the socket: the held ones are older */
	if (u->lb.spill && u->lb.n)
		loopback_drain(u, u->lb.n);
	udp_rx_batch(u);
}

bool udp_port_is_own(const struct udp_port *u, const struct sockaddr *to)
{
	if (to->sa_family != u->self.ss_family)
		return false;
	if (to->sa_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)to;
		const struct sockaddr_in *b = (const struct sockaddr_in *)&u->self;

		return a->sin_port == b->sin_port && a->sin_addr.s_addr == b->sin_addr.s_addr;
	}
	{
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)to;
		const struct sockaddr_in6 *b = (const struct sockaddr_in6 *)&u->self;

		return a->sin6_port == b->sin6_port && !memcmp(&a->sin6_addr, &b->sin6_addr, 16);
	}
}

int udp_port_sockopts(int fd, int family)
{
	int rc, one = 1;

	if (family == AF_INET) {
		int pmtu = IP_PMTUDISC_DO;

		rc = setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	} else {
		int pmtu = IPV6_PMTUDISC_DO;

		rc = setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof(pmtu));
		if (rc == 0)
			rc = setsockopt(fd, IPPROTO_UDP, UDP_NO_CHECK6_RX, &one, sizeof(one));
	}
	return rc < 0 ? errno : 0;
}

/* M describes the N datagrams of IOV (each its own iovec) to TO with TCLASS:
 * IP TOS / IPv6 traffic class as ancillary data when not 0 (C: its
 * storage); SEG, when not 0, makes it one UDP_SEGMENT send (udp_gso.h). */
static void tx_msghdr(struct msghdr *m, struct iovec *iov, unsigned int n, union udp_gso_cmsg *c,
		      const struct sockaddr *to, socklen_t tolen, uint8_t tclass, uint16_t seg)
{
	int v = tclass;

	memset(m, 0, sizeof(*m));
	m->msg_name = (void *)to;
	m->msg_namelen = tolen;
	m->msg_iov = iov;
	m->msg_iovlen = n;
	if (tclass) {
		memset(c, 0, CMSG_SPACE(sizeof(v)));
		m->msg_control = c->b;
		m->msg_controllen = CMSG_SPACE(sizeof(v));
		c->h.cmsg_level = to->sa_family == AF_INET ? IPPROTO_IP : IPPROTO_IPV6;
		c->h.cmsg_type = to->sa_family == AF_INET ? IP_TOS : IPV6_TCLASS;
		c->h.cmsg_len = CMSG_LEN(sizeof(v));
		memcpy(CMSG_DATA(&c->h), &v, sizeof(v));
	}
	if (seg)
		udp_gso_segment_cmsg(m, c, seg);
}

ssize_t udp_port_send(int fd, const void *pkt, size_t len, const struct sockaddr *to, socklen_t tolen,
		      uint8_t tclass)
{
	union udp_gso_cmsg c;
	struct iovec iov = { .iov_base = (void *)pkt, .iov_len = len };
	struct msghdr m;

	tx_msghdr(&m, &iov, 1, &c, to, tolen, tclass, 0);
	return sendmsg(fd, &m, MSG_DONTWAIT);
}

/* Queue slot T was sent (or, OK false, refused with ERR). */
static void tx_done(struct udp_port *u, const struct udp_tx_slot *t, bool ok, int err)
{
	if (!ok) {
		udp_port_send_failed(u, err, t->len, (const struct sockaddr *)&t->to);
		return;
	}
	u->tx_packets++;
	u->tx_bytes += t->len;
	if (udp_port_is_own(u, (const struct sockaddr *)&t->to))
		u->tx_self++;
}

/* The N queued datagrams from slot I, after the kernel refused them as one
 * UDP_SEGMENT send with ERR: one sendmsg each. */
static void tx_run_one_by_one(struct udp_port *u, unsigned int i, unsigned int n, int err)
{
	unsigned int k;

	udp_gso_refused(u, i, n, err);
	for (k = i; k < i + n; k++) {
		struct udp_tx_slot *t = &u->txq[k];
		bool ok = udp_port_send(t->fd, t->pkt, t->len, (const struct sockaddr *)&t->to, t->tolen,
					t->tclass) == (ssize_t)t->len;

		tx_done(u, t, ok, errno);
	}
}

void udp_port_flush(struct udp_port *u)
{
	struct mmsghdr mh[UDP_PORT_TX_MMSG];
	struct iovec iov[UDP_PORT_TX_MMSG];
	union udp_gso_cmsg c[UDP_PORT_TX_MMSG];
	unsigned int first[UDP_PORT_TX_MMSG], segs[UDP_PORT_TX_MMSG];
	unsigned int i, j, k, nm = 0, n = u->txq_n;

	if (!n)
		return;
	/* one message per run of datagrams that can leave as one UDP_SEGMENT
	 * send (udp_gso_run; a run of one without it) */
	for (i = 0; i < n; i += segs[nm++]) {
		struct udp_tx_slot *t = &u->txq[i];

		segs[nm] = udp_gso_run(u, i);
		first[nm] = i;
		for (k = 0; k < segs[nm]; k++) {
			iov[i + k].iov_base = u->txq[i + k].pkt;
			iov[i + k].iov_len = u->txq[i + k].len;
		}
		if (segs[nm] > 1)
			udp_gso_fix_icrc(u, i, segs[nm]);
		tx_msghdr(&mh[nm].msg_hdr, &iov[i], segs[nm], &c[nm], (const struct sockaddr *)&t->to,
			  t->tolen, t->tclass, segs[nm] > 1 ? (uint16_t)t->len : 0);
		mh[nm].msg_len = 0;
	}
	/* sendmmsg(2): a message the kernel refuses ends the call; its
	 * error comes with the next call if some were sent before it */
	for (j = 0; j < nm;) {
		int r = sendmmsg(u->txq[0].fd, mh + j, nm - j, MSG_DONTWAIT);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (segs[j] > 1)
				tx_run_one_by_one(u, first[j], segs[j], errno);
			else
				tx_done(u, &u->txq[first[j]], false, errno);
			j++;
			continue;
		}
		for (; r > 0; r--, j++) {
			if (segs[j] > 1) {
				u->tx_gso_sends++;
				u->tx_gso_packets += segs[j];
			}
			for (k = first[j]; k < first[j] + segs[j]; k++)
				tx_done(u, &u->txq[k], true, 0);
		}
	}
	u->txq_n = 0;
}

int udp_port_queue(struct udp_port *u, int fd, const void *pkt, size_t len,
		   const struct sockaddr *to, socklen_t tolen, uint8_t tclass, bool now)
{
	struct udp_tx_slot *t;

	if (now || len > UDP_PORT_TX_MAX || !u->txq) {
		udp_port_flush(u);
		if (udp_port_send(fd, pkt, len, to, tolen, tclass) != (ssize_t)len) {
			int e = errno;

			udp_port_send_failed(u, e, len, to);
			return e;
		}
		u->tx_packets++;
		u->tx_bytes += len;
		if (udp_port_is_own(u, to))
			u->tx_self++;
		return 0;
	}
	if (u->txq_n && u->txq[0].fd != fd)
		udp_port_flush(u);
	t = &u->txq[u->txq_n++];
	t->fd = fd;
	t->tolen = tolen;
	t->tclass = tclass;
	t->len = (uint32_t)len;
	memcpy(&t->to, to, tolen);
	memcpy(t->pkt, pkt, len);
	if (u->txq_n == UDP_PORT_TX_MMSG)
		udp_port_flush(u);
	return 0;
}

void udp_port_settle(struct udp_port *u)
{
	unsigned int round;

	for (round = 0;; round++) {
		if (u->rx_done)
			u->rx_done(u->rx_ctx);
		udp_port_flush(u);
		if (round == UDP_PORT_SELF_ROUNDS)
			break;
		if (u->lb.n) {
			/* held datagrams are older than any to self the flush
			 * just sent (loopback.h, spill) */
			loopback_drain(u, UDP_PORT_RX_BATCH);
			continue;
		}
		if (!u->tx_self || u->no_self_read)
			break;
		/* loopback: sendmmsg returned after the kernel queued the
		 * datagrams on our own socket, so they are read now instead
		 * of after a wake-up from epoll_wait */
		u->tx_self = 0;
		u->rx_self_reads++;
		if (!udp_rx_batch(u)) {
			u->rx_self_empty++;
			break;
		}
	}
	u->tx_self = 0;
	if (u->lb.n && u->loop && !ev_is_active(&u->lb_idle))
		ev_idle_start(u->loop, &u->lb_idle);
}

/* Active while the internal loopback holds datagrams: the loop polls
 * without sleeping and its prepare watcher (udp_port_settle) delivers them. */
static void lb_idle_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
	struct udp_port *u = w->data;

	(void)revents;
	if (!u->lb.n)
		ev_idle_stop(loop, w);
}

static void tx_prepare(struct ev_loop *loop, ev_prepare *w, int revents)
{
	(void)loop;
	(void)revents;
	udp_port_settle(w->data);
}

void udp_port_send_failed(struct udp_port *u, int err, size_t len, const struct sockaddr *to)
{
	char host[INET6_ADDRSTRLEN] = "?";
	struct timespec ts;
	double now;

	u->tx_errors++;
	if (err == EMSGSIZE)
		u->tx_too_big++;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	if (u->tx_errors_logged && now - u->tx_error_log_at < 1.0)
		return;
	if (to->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)to)->sin_addr, host, sizeof(host));
	else
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)to)->sin6_addr, host, sizeof(host));
	ulog(ULOG_WARN, "UDP payload of %zu bytes to %s not sent: %s%s (%llu refused in all, %llu too big)",
	     len, host, strerror(err),
	     err == EMSGSIZE ? ": larger than the path MTU; use a smaller IB MTU (uroce up --mtu)" : "",
	     (unsigned long long)u->tx_errors, (unsigned long long)u->tx_too_big);
	u->tx_errors_logged = u->tx_errors;
	u->tx_error_log_at = now;
}

bool udp_port_rx_pending(const struct udp_port *u)
{
	int n = 0;

	return u->fd >= 0 && ioctl(u->fd, SIOCINQ, &n) == 0 && n > 0;
}

uint64_t udp_port_rx_drops(const struct udp_port *u)
{
	uint32_t mem[SK_MEMINFO_VARS];
	socklen_t len = sizeof(mem);

	if (u->fd >= 0 && getsockopt(u->fd, SOL_SOCKET, SO_MEMINFO, mem, &len) == 0 &&
	    len > SK_MEMINFO_DROPS * sizeof(uint32_t) && mem[SK_MEMINFO_DROPS] > u->rx_ovfl)
		return mem[SK_MEMINFO_DROPS];
	return u->rx_ovfl;
}

/* Sets one buffer (SO_RCVBUF or SO_SNDBUF) to want bytes; returns what getsockopt reports. */
static int size_one(int fd, int opt, int force_opt, int want)
{
	int got = 0;
	socklen_t gl = sizeof(got);

	/* FORCE needs CAP_NET_ADMIN; otherwise net.core.rmem_max/wmem_max cap it */
	if (setsockopt(fd, SOL_SOCKET, force_opt, &want, sizeof(want)) < 0)
		setsockopt(fd, SOL_SOCKET, opt, &want, sizeof(want));
	getsockopt(fd, SOL_SOCKET, opt, &got, &gl);
	return got;
}

void udp_port_size_buffers(struct udp_port *u, int fd)
{
	int one = 1;

	u->rcvbuf = size_one(fd, SO_RCVBUF, SO_RCVBUFFORCE, UDP_PORT_BUF_BYTES);
	u->sndbuf = size_one(fd, SO_SNDBUF, SO_SNDBUFFORCE, UDP_PORT_BUF_BYTES);
	if (setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one)) < 0)
		ulog(ULOG_WARN, "SO_RXQ_OVFL: %s: receive-buffer drops are not counted", strerror(errno));
	/* the kernel reports twice what was asked (bookkeeping overhead, socket(7)) */
	ulog(u->rcvbuf < 2 * UDP_PORT_BUF_BYTES ? ULOG_WARN : ULOG_INFO,
	     "UDP socket buffers: receive %d bytes, send %d bytes (asked for %d each%s)", u->rcvbuf,
	     u->sndbuf, UDP_PORT_BUF_BYTES,
	     u->rcvbuf < 2 * UDP_PORT_BUF_BYTES ?
		     "; capped by net.core.rmem_max/wmem_max without CAP_NET_ADMIN" : "");
}

int udp_port_open(struct udp_port *u, struct ev_loop *loop, const struct sockaddr *addr,
		  socklen_t len)
{
	int fd = socket(addr->sa_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int e;

	if (fd < 0)
		return errno;
	e = udp_port_sockopts(fd, addr->sa_family);
	if (e) {
		close(fd);
		return e;
	}
	udp_port_size_buffers(u, fd);
	if (bind(fd, addr, len) < 0) {
		e = errno;
		close(fd);
		return e;
	}
	u->fd = fd;
	u->self_len = sizeof(u->self);
	if (getsockname(fd, (struct sockaddr *)&u->self, &u->self_len) < 0)
		u->self.ss_family = AF_UNSPEC; /* no reads without a wake-up */
	u->tx_self = 0;
	u->rx_self_reads = u->rx_self_empty = 0;
	u->rx_ovfl = 0;
	u->rx_packets = u->rx_bytes = u->tx_packets = u->tx_bytes = u->tx_dropped = 0;
	u->tx_errors = u->tx_too_big = u->tx_errors_logged = 0;
	u->gso = u->gro = false; /* udp_gso_setup turns them on */
	u->gso_refused = u->gro_refused = 0;
	u->tx_gso_sends = u->tx_gso_packets = u->tx_gso_fallbacks = 0;
	u->rx_gro_reads = u->rx_gro_packets = 0;
	u->tx_error_log_at = 0;
	u->txq_n = 0;
	u->txq = malloc(UDP_PORT_TX_MMSG * sizeof(*u->txq));
	if (!u->txq)
		ulog(ULOG_WARN, "no memory for the transmit queue: one sendmsg per datagram");
	u->loop = loop;
	ev_idle_init(&u->lb_idle, lb_idle_cb);
	u->lb_idle.data = u;
	ev_prepare_init(&u->tx_flush, tx_prepare);
	u->tx_flush.data = u;
	ev_prepare_start(loop, &u->tx_flush);
	ev_io_init(&u->io, udp_readable, fd, EV_READ);
	u->io.data = u;
	ev_io_start(loop, &u->io);
	return 0;
}

void udp_port_close(struct udp_port *u, struct ev_loop *loop)
{
	if (u->fd < 0)
		return;
	udp_port_flush(u);
	ev_prepare_stop(loop, &u->tx_flush);
	ev_idle_stop(loop, &u->lb_idle);
	loopback_fini(u);
	free(u->txq);
	u->txq = NULL;
	ev_io_stop(loop, &u->io);
	close(u->fd);
	u->fd = -1;
}
