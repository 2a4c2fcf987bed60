/*
 * loopback.h - the device's internal loopback: a datagram the device sends
 * to its own address and UDP port (two QPs of one device) is handed to its
 * receive path inside the daemon instead of through the kernel's UDP
 * loopback, as a ConnectX port loops back traffic between its own QPs and
 * kernel rxe hands such packets from rxe_xmit_packet to rxe_rcv without the
 * network stack. The datagram is the same bytes with the same ICRC: it is
 * recorded by a capture when sent, passes the receive-side fault injector,
 * and its ICRC is checked on receipt like any other (port.c).
 *
 * Order: datagrams are delivered in the order sent. When the ring is full a
 * datagram goes through the kernel's socket instead, and so do all later
 * ones until the socket holds none of ours (spill), so a datagram that
 * waits in the socket is never overtaken.
 *
 * Off with `uroce up --kernel-loopback` (the device's own traffic then shows
 * on `tcpdump -i lo`) and in deterministic mode (docs/daemon.md).
 */
#ifndef UROCE_EMU_NIC_LOOPBACK_H
#define UROCE_EMU_NIC_LOOPBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct udp_port;

/* Datagrams the ring holds: four loop turns of XPORT_REQ_BUDGET (128)
 * packets; the ring is allocated at the first datagram to self. */
#define LOOPBACK_SLOTS 512

/* Datagrams delivered between two rx_done calls (as one recvmmsg batch). */
#define LOOPBACK_BATCH 32

struct loopback_slot {
	uint32_t len;
	uint16_t sport;     /* the UDP source port the datagram carries (host order) */
	bool verified;      /* its ICRC is the one the device computed (no fault since) */
	uint8_t *pkt;       /* UDP payload, BTH .. ICRC */
};

struct loopback {
	bool off;                   /* --kernel-loopback or deterministic mode */
	bool spill;                 /* datagrams to self go through the socket for now */
	struct loopback_slot *ring; /* LOOPBACK_SLOTS */
	uint8_t *bytes;             /* their packet storage */
	unsigned int head, n;       /* oldest slot, slots in use */
	uint64_t packets;           /* datagrams delivered inside the daemon */
	uint64_t spilled;           /* datagrams to self sent through the socket instead */
};

/*
 * loopback_take - hold LEN bytes at PKT, a datagram from this device's
 * address and UDP source port SPORT to its own address and port, for
 * delivery by loopback_drain. VERIFIED: its ICRC is the one the device
 * computed over these bytes (no fault injected into it), so the receive
 * side need not compute it again (passed to U's rx callback).
 * Counted in U's tx_packets/tx_bytes.
 * Returns 0, or ENOBUFS (ring full, or spilling: the caller sends it
 * through the socket; counted in spilled), EMSGSIZE (longer than
 * UDP_PORT_TX_MAX), ENOMEM (no ring), EPERM (off).
 */
int loopback_take(struct udp_port *u, const void *pkt, size_t len, uint16_t sport, bool verified);

/*
 * loopback_drain - deliver the datagrams held when called, oldest first, at
 * most MAX, to U's rx callback (counted in rx_packets/rx_bytes), calling
 * rx_done after every LOOPBACK_BATCH and after the last. Datagrams the
 * deliveries send to self join the ring behind them and wait for the next
 * call, as datagrams sent during one read of a socket wait for the next.
 * Returns the number delivered.
 */
unsigned int loopback_drain(struct udp_port *u, unsigned int max);

/* loopback_socket_idle - the socket and the transmit queue hold none of
 * U's datagrams to self any more: new ones may use the ring again. */
void loopback_socket_idle(struct udp_port *u);

/* Free the ring; datagrams still held are dropped (device going down). */
void loopback_fini(struct udp_port *u);

#endif
