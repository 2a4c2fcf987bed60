/*
 * udp_port.h - the device's one UDP socket, bound to its address and RoCEv2
 * port (4791 unless --port says otherwise). Every received datagram goes to
 * the rx callback (port.c hands it to the transport engine); without one it
 * is counted and dropped.
 */
#ifndef UROCE_EMU_UDP_PORT_H
#define UROCE_EMU_UDP_PORT_H

#include <stdint.h>
#include <sys/socket.h>
#include <ev.h>

/* Socket buffer size asked for (bytes, each direction). */
#define UDP_PORT_BUF_BYTES (16 * 1024 * 1024)

struct udp_port {
	int fd;
	ev_io io;
	uint64_t rx_packets, rx_bytes;  /* datagrams and bytes received */
	uint64_t tx_packets, tx_bytes;  /* datagrams and bytes sent */
	uint64_t tx_dropped;            /* dropped on purpose (--loss) */
	/* Called for every received datagram (NULL = drop); set by the data path. */
	void (*rx)(void *ctx, const uint8_t *buf, size_t len, const struct sockaddr_storage *from);
	void *rx_ctx;
};

/*
 * udp_port_open - bind a non-blocking UDP socket to ADDR (struct sockaddr_in or
 * sockaddr_in6 with the port set) and watch it on LOOP. IPv4: IP_PMTUDISC_DO
 * (DF set, IP ID 0), the header the RoCEv2 ICRC of received packets is
 * checked against.
 * Returns 0 or the errno of socket/bind (EADDRINUSE, EADDRNOTAVAIL, EACCES...).
 */
int udp_port_open(struct udp_port *u, struct ev_loop *loop, const struct sockaddr *addr,
		  socklen_t len);

/* Stop watching and close. */
void udp_port_close(struct udp_port *u, struct ev_loop *loop);

#endif
