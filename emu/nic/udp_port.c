/*
 * udp_port.c - the device's UDP socket (see udp_port.h).
 */
#include "config.h"
#include "emu/nic/udp_port.h"

#include <errno.h>
#include <netinet/in.h>
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

int udp_port_open(struct udp_port *u, struct ev_loop *loop, const struct sockaddr *addr,
		  socklen_t len)
{
	int fd = socket(addr->sa_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int e;

	if (fd < 0)
		return errno;
	if (addr->sa_family == AF_INET) {
		/* DF set and never fragment: Linux then sends IP ID 0 from an
		 * unconnected socket, which is what the receiver's ICRC
		 * reconstruction assumes (netstack/packet.h, struct roce_l3). */
		int pmtu = IP_PMTUDISC_DO;

		if (setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)) < 0) {
			e = errno;
			close(fd);
			return e;
		}
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
