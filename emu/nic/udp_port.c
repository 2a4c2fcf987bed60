/*
 * udp_port.c - the device's UDP socket (see udp_port.h).
 */
#include "config.h"
#include "emu/nic/udp_port.h"

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
	char b[CMSG_SPACE(sizeof(uint32_t))];
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

/* The drop count of one datagram's SO_RXQ_OVFL control message (socket(7):
 * datagrams the kernel dropped since the socket was created, before this
 * one) into u->rx_ovfl. */
static void rx_ovfl_of(struct udp_port *u, struct msghdr *m)
{
	struct cmsghdr *cm;

	for (cm = CMSG_FIRSTHDR(m); cm; cm = CMSG_NXTHDR(m, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SO_RXQ_OVFL) {
			uint32_t v;

			memcpy(&v, CMSG_DATA(cm), sizeof(v));
			u->rx_ovfl = v;
		}
	}
}

/* Reads what waits in U's socket, at most UDP_PORT_RX_BATCH datagrams, and
 * hands each to the rx callback. Returns the number read (0: none waited). */
static unsigned int udp_rx_batch(struct udp_port *u)
{
	int i, n;
	unsigned int done;

	if (!rx_mh_ready)
		rx_mh_init();
	/* Bounded batch so one busy socket cannot starve the control socket;
	 * recvmmsg(2): up to UDP_PORT_RX_MMSG datagrams per system call. */
	for (done = 0; done < UDP_PORT_RX_BATCH; done += (unsigned int)n) {
		n = recvmmsg(u->fd, rx_mh, UDP_PORT_RX_MMSG, MSG_DONTWAIT, NULL);
		if (n <= 0) {
			if (n == 0 || errno == EAGAIN)
				loopback_socket_idle(u);
			return done;
		}
		for (i = 0; i < n; i++) {
			rx_ovfl_of(u, &rx_mh[i].msg_hdr);
			u->rx_packets++;
			u->rx_bytes += rx_mh[i].msg_len;
			if (u->rx)
				u->rx(u->rx_ctx, rx_buf[i], rx_mh[i].msg_len, &rx_from[i], false);
			rx_mh_reset(i);
		}
		if (u->rx_done)
			u->rx_done(u->rx_ctx);
		if (n < UDP_PORT_RX_MMSG) {
			/* the socket is empty: no call that would say EAGAIN */
			loopback_socket_idle(u);
			return done + (unsigned int)n;
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

/* Ancillary data of one datagram: its IP TOS / IPv6 traffic class. */
union tx_cmsg {
	struct cmsghdr h;
	char b[CMSG_SPACE(sizeof(int))];
};

/* M describes LEN bytes at PKT to TO with TCLASS (IOV and C: its storage). */
static void tx_msghdr(struct msghdr *m, struct iovec *iov, union tx_cmsg *c, const void *pkt,
		      size_t len, const struct sockaddr *to, socklen_t tolen, uint8_t tclass)
{
	int v = tclass;

	iov->iov_base = (void *)pkt;
	iov->iov_len = len;
	memset(m, 0, sizeof(*m));
	m->msg_name = (void *)to;
	m->msg_namelen = tolen;
	m->msg_iov = iov;
	m->msg_iovlen = 1;
	if (tclass) {
		memset(c, 0, sizeof(*c));
		m->msg_control = c->b;
		m->msg_controllen = sizeof(c->b);
		c->h.cmsg_level = to->sa_family == AF_INET ? IPPROTO_IP : IPPROTO_IPV6;
		c->h.cmsg_type = to->sa_family == AF_INET ? IP_TOS : IPV6_TCLASS;
		c->h.cmsg_len = CMSG_LEN(sizeof(v));
		memcpy(CMSG_DATA(&c->h), &v, sizeof(v));
	}
}

ssize_t udp_port_send(int fd, const void *pkt, size_t len, const struct sockaddr *to, socklen_t tolen,
		      uint8_t tclass)
{
	union tx_cmsg c;
	struct iovec iov;
	struct msghdr m;

	tx_msghdr(&m, &iov, &c, pkt, len, to, tolen, tclass);
	return sendmsg(fd, &m, MSG_DONTWAIT);
}

void udp_port_flush(struct udp_port *u)
{
	struct mmsghdr mh[UDP_PORT_TX_MMSG];
	struct iovec iov[UDP_PORT_TX_MMSG];
	union tx_cmsg c[UDP_PORT_TX_MMSG];
	unsigned int i, n = u->txq_n;

	if (!n)
		return;
	u->txq_n = 0;
	for (i = 0; i < n; i++) {
		struct udp_tx_slot *t = &u->txq[i];

		tx_msghdr(&mh[i].msg_hdr, &iov[i], &c[i], t->pkt, t->len,
			  (const struct sockaddr *)&t->to, t->tolen, t->tclass);
		mh[i].msg_len = 0;
	}
	/* sendmmsg(2): a datagram the kernel refuses ends the call; its
	 * error comes with the next call if some were sent before it */
	for (i = 0; i < n;) {
		int r = sendmmsg(u->txq[0].fd, mh + i, n - i, MSG_DONTWAIT);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			udp_port_send_failed(u, errno, u->txq[i].len, (const struct sockaddr *)&u->txq[i].to);
			i++;
			continue;
		}
		for (; r > 0; r--, i++) {
			u->tx_packets++;
			u->tx_bytes += u->txq[i].len;
			if (udp_port_is_own(u, (const struct sockaddr *)&u->txq[i].to))
				u->tx_self++;
		}
	}
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
