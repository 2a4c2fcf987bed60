/*
 * udp_port.h - the device's one UDP socket, bound to its address and RoCEv2
 * port (4791 unless --port says otherwise). Every received datagram goes to
 * the rx callback (port.c hands it to the transport engine); without one it
 * is counted and dropped.
 */
#ifndef UROCE_EMU_UDP_PORT_H
#define UROCE_EMU_UDP_PORT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <ev.h>

#include "emu/nic/loopback.h"

/* Socket buffer size asked for (bytes, each direction). */
#define UDP_PORT_BUF_BYTES (16 * 1024 * 1024)

/* Datagrams read per readiness callback: more than one loop turn of every
 * sending QP (XPORT_REQ_BUDGET, 128) puts on the wire, so traffic of the
 * device to itself (loopback) cannot outpace reception. */
#define UDP_PORT_RX_BATCH 512

/* Datagrams per recvmmsg(2) call (UDP_PORT_RX_BATCH is a multiple). */
#define UDP_PORT_RX_MMSG 32

/* Rounds of udp_port_settle: a request and its response (an ACK, a READ
 * response) between two QPs of the device take two. */
#define UDP_PORT_SELF_ROUNDS 4

/* Datagrams queued for one sendmmsg(2) call, and the largest one queued
 * (a RoCEv2 UDP payload at IB MTU 4096 with every extension header). */
#define UDP_PORT_TX_MMSG 32
#define UDP_PORT_TX_MAX 4224

/* One queued datagram: sent from FD to TO with TCLASS. */
struct udp_tx_slot {
	int fd;
	socklen_t tolen;
	uint8_t tclass;
	uint32_t len;
	struct sockaddr_storage to;
	uint8_t pkt[UDP_PORT_TX_MAX];
};

struct udp_port {
	int fd;
	ev_io io;
	ev_prepare tx_flush;            /* sends the queue before the loop polls */
	struct udp_tx_slot *txq;        /* UDP_PORT_TX_MMSG slots, one socket's */
	unsigned int txq_n;             /* datagrams queued */
	uint64_t rx_packets, rx_bytes;  /* datagrams and bytes received */
	uint64_t tx_packets, tx_bytes;  /* datagrams and bytes sent */
	uint64_t tx_dropped;            /* dropped on purpose (--loss) */
	uint64_t tx_errors;             /* refused by the kernel (sendto failed) */
	uint64_t tx_too_big;            /* of which EMSGSIZE: larger than the path MTU */
	uint64_t tx_errors_logged;      /* tx_errors at the last log line */
	uint64_t rx_ovfl;               /* dropped by the kernel: receive buffer full (SO_RXQ_OVFL) */
	bool gso, gro;                  /* UDP_SEGMENT / UDP_GRO in use (udp_gso.h) */
	int gso_refused, gro_refused;   /* errno with which the kernel refused each (0: it did not) */
	uint64_t tx_gso_sends;          /* sends with UDP_SEGMENT ... */
	uint64_t tx_gso_packets;        /* ... and the datagrams they carried */
	uint64_t tx_gso_fallbacks;      /* runs the kernel refused, then sent one by one */
	uint64_t rx_gro_reads;          /* reads that returned several datagrams (UDP_GRO) ... */
	uint64_t rx_gro_packets;        /* ... and those datagrams */
	int rcvbuf, sndbuf;             /* socket buffer sizes as getsockopt reports them (bytes) */
	struct sockaddr_storage self;   /* the socket's bound address (getsockname) */
	socklen_t self_len;
	unsigned int tx_self;           /* datagrams sent to self since the last such read */
	uint64_t rx_self_reads;         /* those reads (recvmmsg calls without a wake-up) ... */
	uint64_t rx_self_empty;         /* ... and those that found nothing */
	bool no_self_read;              /* deterministic mode: read only after the poll */
	struct loopback lb;             /* datagrams to self, delivered inside the daemon */
	ev_idle lb_idle;                /* keeps the loop from sleeping while lb holds some */
	struct ev_loop *loop;
	double tx_error_log_at;         /* CLOCK_MONOTONIC seconds of that line */
	/* Called for every received datagram (NULL = drop); set by the data path.
	 * VERIFIED: its ICRC is the one this device computed over these bytes
	 * (an internal loopback datagram taken as verified, loopback.h); false
	 * for every datagram read from the socket. */
	void (*rx)(void *ctx, const uint8_t *buf, size_t len, const struct sockaddr_storage *from,
		   bool verified);
	/* Called after each batch of rx calls (one recvmmsg) and before the
	 * queue is sent as the loop goes to poll (NULL = none): what the data
	 * path holds for a batch (coalesced ACKs) goes out then. */
	void (*rx_done)(void *ctx);
	void *rx_ctx;
};

/*
 * udp_port_sockopts - the options of every socket a device sends RoCEv2
 * from, FAMILY AF_INET or AF_INET6 (docs/transport.md, "What uroce sends"):
 * IP_MTU_DISCOVER / IPV6_MTU_DISCOVER = PMTUDISC_DO, so a datagram larger
 * than the path MTU fails with EMSGSIZE instead of leaving in fragments (and
 * IPv4 gets DF and IP ID 0); IPv6: UDP_NO_CHECK6_RX, so datagrams with UDP
 * checksum 0 (as kernel rxe sends them; the ICRC covers the packet) are
 * accepted (udp(7), RFC 6936).  Returns 0 or the errno of setsockopt.
 */
int udp_port_sockopts(int fd, int family);

/* udp_port_rx_pending - whether a received datagram waits in U's socket
 * (SIOCINQ, udp(7)). */
bool udp_port_rx_pending(const struct udp_port *u);

/*
 * udp_port_size_buffers - asks for UDP_PORT_BUF_BYTES of receive and send
 * buffer on FD (SO_RCVBUFFORCE/SO_SNDBUFFORCE when the process has
 * CAP_NET_ADMIN, else SO_RCVBUF/SO_SNDBUF, which net.core.rmem_max and
 * wmem_max cap; socket(7)), stores what getsockopt reports in u->rcvbuf and
 * u->sndbuf (logged; shown by `uroce status`) and turns on SO_RXQ_OVFL so
 * that receive-buffer drops are counted in u->rx_ovfl.
 */
void udp_port_size_buffers(struct udp_port *u, int fd);

/*
 * udp_port_rx_drops - datagrams the kernel dropped on the device socket
 * because its receive buffer was full: SO_MEMINFO's SK_MEMINFO_DROPS now
 * (socket(7)), or the last SO_RXQ_OVFL count seen if that is larger.
 */
uint64_t udp_port_rx_drops(const struct udp_port *u);

/*
 * udp_port_open - bind a non-blocking UDP socket to ADDR (struct sockaddr_in or
 * sockaddr_in6 with the port set), set udp_port_sockopts and watch it on
 * LOOP.
 * Returns 0 or the errno of socket/setsockopt/bind (EADDRINUSE,
 * EADDRNOTAVAIL, EACCES...).
 */
int udp_port_open(struct udp_port *u, struct ev_loop *loop, const struct sockaddr *addr,
		  socklen_t len);

/*
 * udp_port_send - sendmsg(2) of one datagram (LEN bytes at PKT) on FD to TO,
 * non-blocking, with IP TOS (IPv4) or IPv6 traffic class TCLASS (DSCP +
 * ECN) as ancillary data when it is not 0 (ip(7) IP_TOS, ipv6(7)
 * IPV6_TCLASS).  Returns sendmsg's result (errno set on -1).
 */
ssize_t udp_port_send(int fd, const void *pkt, size_t len, const struct sockaddr *to, socklen_t tolen,
		      uint8_t tclass);

/*
 * udp_port_queue - transmit one datagram (LEN bytes at PKT) on FD to TO
 * with TCLASS (as udp_port_send) through U's queue: copied, and sent with
 * the other queued ones of the same socket in one sendmmsg(2) call when the
 * queue is full, when a datagram for another socket comes, and before the
 * event loop polls (ev_prepare), so nothing waits past one loop turn. With
 * NOW (the caller needs the result), or a datagram longer than
 * UDP_PORT_TX_MAX, the queue is sent and then this datagram alone.
 * Sent datagrams count in tx_packets/tx_bytes, refused ones go to
 * udp_port_send_failed (from the queue: when it is sent).
 * Returns 0 (queued or sent) or, sent at once, the errno of the send.
 */
int udp_port_queue(struct udp_port *u, int fd, const void *pkt, size_t len,
		   const struct sockaddr *to, socklen_t tolen, uint8_t tclass, bool now);

/* udp_port_is_own - whether TO is U's own bound address and port. */
bool udp_port_is_own(const struct udp_port *u, const struct sockaddr *to);

/* udp_port_flush - send U's queued datagrams now (sendmmsg(2)). */
void udp_port_flush(struct udp_port *u);

/*
 * udp_port_settle - run by the loop before it polls (and after work done
 * there): the rx_done callback, then udp_port_flush, then the datagrams the
 * device sent to itself: those held by the internal loopback are delivered
 * (loopback_drain); those sent through the socket (--kernel-loopback, or a
 * spill) are read at once, as its readiness callback would read them after
 * the next epoll_wait. The round repeats (what was received may be
 * answered: an ACK, a READ response), at most UDP_PORT_SELF_ROUNDS times;
 * datagrams still held then keep the loop from sleeping (lb_idle), so the
 * next turn delivers them after the loop has looked at every other event.
 * Loopback UDP queues a datagram on the receiving socket before
 * sendmmsg(2) returns, so the read finds it; a read that finds nothing
 * (counted in rx_self_empty) ends the rounds and the datagram is read after
 * the poll as before. With no_self_read set (deterministic mode) the socket
 * is read only after the poll: whether the kernel has queued a datagram yet
 * depends on its softirq timing under load, and the order of reads and
 * sends must be the same from run to run.
 */
void udp_port_settle(struct udp_port *u);

/*
 * udp_port_send_failed - account a datagram of LEN bytes to TO that the
 * kernel refused with errno ERR (from any of the device's sockets): counted
 * in tx_errors (EMSGSIZE also in tx_too_big, both shown by `uroce status`)
 * and logged at warning level at most once a second, with the count.
 */
void udp_port_send_failed(struct udp_port *u, int err, size_t len, const struct sockaddr *to);

/* Send what is queued, stop watching and close. */
void udp_port_close(struct udp_port *u, struct ev_loop *loop);

#endif
