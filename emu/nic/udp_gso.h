/*
 * udp_gso.h - UDP segmentation offload for the device's datagrams
 * (docs/gso.md): a run of queued datagrams to one peer leaves in one send
 * with UDP_SEGMENT, and the device socket takes several datagrams of one
 * flow in one read with UDP_GRO (udp(7)).  On the wire nothing changes:
 * every RoCEv2 packet is still one IP datagram, each with its own ICRC.
 *
 * The IPv4 identification is the catch: the ICRC covers it, and Linux gives
 * the segments of one UDP_SEGMENT send consecutive IDs counted from the
 * first's (inet_gso_segment; the first has ID 0 from an unconnected socket
 * with DF set, ip_select_ident_segs).  Segment k therefore needs the ICRC
 * for ID k, not the ID-0 ICRC the packet was built with (udp_gso_fix_icrc).
 */
#ifndef UROCE_EMU_UDP_GSO_H
#define UROCE_EMU_UDP_GSO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct udp_port;
struct udp_tx_slot;

/* Most segments in one UDP_SEGMENT send: the kernel's UDP_MAX_SEGMENTS
 * (64 before Linux 6.9, 128 since); more fail with EINVAL. */
#define UDP_GSO_SEGS_MAX 64

/*
 * udp_gso_setup - turn offload on for U's socket unless OFF (--no-gso):
 * UDP_SEGMENT is probed with getsockopt (ENOPROTOOPT before Linux 4.18),
 * UDP_GRO set with setsockopt (Linux 5.0).  Sets u->gso and u->gro and, when
 * the kernel refuses one, u->gso_refused / u->gro_refused (its errno); logs
 * one line saying what is in use.
 */
void udp_gso_setup(struct udp_port *u, bool off);

/*
 * udp_gso_run - how many queued datagrams from slot I on (at least 1) can
 * leave in one UDP_SEGMENT send: same socket address and traffic class,
 * each as long as the first except the last, which may be shorter (the
 * kernel cuts the payload into gso_size pieces, udp(7)), at most
 * UDP_GSO_SEGS_MAX and a total an IP datagram can carry.  1 when u->gso is
 * off.
 */
unsigned int udp_gso_run(const struct udp_port *u, unsigned int i);

/*
 * udp_gso_fix_icrc - for the N datagrams from slot I on, sent as one
 * UDP_SEGMENT run over IPv4: the ICRC of the k-th (k = 1..N-1) changed
 * between ID 0 and ID k (roce_icrc_ipv4_id_delta).  Applied twice it
 * restores the ID-0 ICRCs (before sending the run's datagrams one by one).
 * IPv6 has no ID: nothing to do.
 */
void udp_gso_fix_icrc(struct udp_port *u, unsigned int i, unsigned int n);

/*
 * udp_gso_refused - the kernel refused run I..I+N-1 with errno ERR.  EIO
 * (the route's device cannot checksum, udp_send_skb), ENOPROTOOPT and
 * EOPNOTSUPP turn GSO off for good (logged, shown by status); EINVAL (a
 * segment larger than the path MTU) does not.  The ICRCs are restored; the
 * caller then sends the datagrams one by one, so each gets its own error.
 */
void udp_gso_refused(struct udp_port *u, unsigned int i, unsigned int n, int err);

/* Ancillary data of one send: IP_TOS / IPV6_TCLASS and UDP_SEGMENT. */
union udp_gso_cmsg {
	struct cmsghdr h;
	char b[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(uint16_t))];
};

/*
 * udp_gso_segment_cmsg - append a UDP_SEGMENT control message (segment size
 * SEG bytes) to M, whose msg_control is C and holds MSG_CONTROLLEN bytes
 * already (0 or one IP_TOS message).
 */
void udp_gso_segment_cmsg(struct msghdr *m, union udp_gso_cmsg *c, uint16_t seg);

/*
 * udp_gso_rx_size - the segment size of a received datagram (its UDP_GRO
 * control message: the kernel coalesced several datagrams of one flow, each
 * that long but the last), or 0 when it holds one datagram.  Also stores the
 * SO_RXQ_OVFL drop count, when present, in *OVFL.
 */
size_t udp_gso_rx_size(struct msghdr *m, uint64_t *ovfl);

#endif
