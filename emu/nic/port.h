/*
 * port.h - the device's network port as the transport engine sees it:
 * transmitting RoCEv2 UDP payloads from the QP's UDP source port, and
 * handing received datagrams to the engine (xport_input). The device's own
 * UDP socket is udp_port.c; this adds the per-device pool of send-only
 * sockets, one per source port in use.
 *
 * Source ports: the engine builds each packet's ICRC for the QP's UDP source
 * port (flow-label convention, netstack/udp_sport.h). The packet leaves from
 * a send-only socket bound to addr:sport (SO_REUSEPORT, shared by every
 * daemon of the same uid); if that port cannot be bound, it leaves from the
 * device socket and the ICRC is recomputed for the device port, so the
 * receiver's check (over the ports it actually sees) always holds.
 */
#ifndef UROCE_EMU_NIC_PORT_H
#define UROCE_EMU_NIC_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

struct uroce_dev;

/* Set up the source-port socket pool and take over the device socket's
 * receive path (received datagrams go to d->xdev). Returns 0 or ENOMEM. */
int port_init(struct uroce_dev *d);
/* Close every source-port socket and free the pool. */
void port_fini(struct uroce_dev *d);

/* The device's own address as a GID (IPv4: v4-mapped). */
void port_local_gid(const struct uroce_dev *d, union ibv_gid *gid);

/*
 * port_xmit - send one RoCEv2 UDP payload (BTH .. ICRC, LEN bytes) to DGID
 * at the device's UDP port from source port SPORT with IP TOS / IPv6 traffic
 * class TCLASS, subject to --loss
 * (fault.c) and recorded by a running capture (capture.c).
 * The datagram is queued and leaves with others in one sendmmsg(2)
 * (udp_port_queue), unless NOW: then it is sent before port_xmit returns
 * and its send's errno is returned (a UD WQE fails on it, ibv_post_send(3)).
 * Returns 0 (sent or queued, or dropped on purpose), EAFNOSUPPORT (DGID of
 * the other address family), EMSGSIZE, EINVAL (ICRC recomputation
 * refused), or, with NOW, the errno of the send (counted and logged by
 * udp_port_send_failed, as the errors of queued datagrams are).
 */
int port_xmit(struct uroce_dev *d, const union ibv_gid *dgid, uint16_t sport, uint8_t tclass,
	      const void *pkt, size_t len, bool now);

#endif
