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
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static void udp_readable(struct ev_loop *loop, ev_io *w, int revents)
{
	struct udp_port *u = w->data;
	uint8_t buf[65536];
	struct sockaddr_storage from;
	socklen_t flen;
	ssize_t n;
	int i;

	/* Bounded batch so one busy socket cannot starve the control socket. */
	for (i = 0; i < 64; i++) {
		flen = sizeof(from);
		n = recvfrom(u->fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &flen);
		if (n < 0)
			return;
		u->rx_packets++;
		u->rx_bytes += (uint64_t)n;
		if (u->rx)
			u->rx(u->rx_ctx, buf, (size_t)n, &from);
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

ssize_t udp_port_send(int fd, const void *pkt, size_t len, const struct sockaddr *to, socklen_t tolen,
		      uint8_t tclass)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} c;
	struct iovec iov = { .iov_base = (void *)pkt, .iov_len = len };
	struct msghdr m = { .msg_name = (void *)to, .msg_namelen = tolen, .msg_iov = &iov, .msg_iovlen = 1 };
	int v = tclass;

	if (tclass) {
		memset(&c, 0, sizeof(c));
		m.msg_control = c.b;
		m.msg_controllen = sizeof(c.b);
		c.h.cmsg_level = to->sa_family == AF_INET ? IPPROTO_IP : IPPROTO_IPV6;
		c.h.cmsg_type = to->sa_family == AF_INET ? IP_TOS : IPV6_TCLASS;
		c.h.cmsg_len = CMSG_LEN(sizeof(v));
		memcpy(CMSG_DATA(&c.h), &v, sizeof(v));
	}
	return sendmsg(fd, &m, MSG_DONTWAIT);
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
	{
		/* A QP may have 128 packets of up to 4 KiB in flight and every
		 * QP of the device shares this socket: make room for bursts so
		 * they are not dropped (and retransmitted after a timeout).
		 * FORCE needs CAP_NET_ADMIN; otherwise net.core.rmem_max caps it. */
		int sz = UDP_PORT_BUF_BYTES;

		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
			setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
		if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)) < 0)
			setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	}
	if (bind(fd, addr, len) < 0) {
		e = errno;
		close(fd);
		return e;
	}
	u->fd = fd;
	u->rx_packets = u->rx_bytes = u->tx_packets = u->tx_bytes = u->tx_dropped = 0;
	u->tx_errors = u->tx_too_big = u->tx_errors_logged = 0;
	u->tx_error_log_at = 0;
	ev_io_init(&u->io, udp_readable, fd, EV_READ);
	u->io.data = u;
	ev_io_start(loop, &u->io);
	return 0;
}

void udp_port_close(struct udp_port *u, struct ev_loop *loop)
{
	if (u->fd < 0)
		return;
	ev_io_stop(loop, &u->io);
	close(u->fd);
	u->fd = -1;
}
