/*
 * mcast.h - UD multicast of one device (IBTA 10.5; docs/multicast.md): the
 * groups and the QPs attached to them (table.c), the ATTACH_MCAST and
 * DETACH_MCAST control ops (ops.c), and the path of a packet sent to a
 * group (path.c): to every attached QP of this device, and as an Ethernet
 * frame (01:00:5e:.. / 33:33:..) on the device's VXLAN segment to the other
 * devices (docs/raw-packet.md), which deliver it to theirs.
 */
#ifndef UROCE_EMU_MCAST_H
#define UROCE_EMU_MCAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <ev.h>

/* Limits reported in ibv_query_device (max_mcast_grp, max_mcast_qp_attach,
 * max_total_mcast_qp_attach). 240 QPs per group is a ConnectX's value. */
#define MCAST_MAX_GROUPS 1024u
#define MCAST_MAX_QP_ATTACH 240u
#define MCAST_MAX_TOTAL_ATTACH 4096u
/* Datagrams sent to a group held for delivery to this device's QPs (each
 * in a buffer of its own length): room for a burst of sends as deep as a
 * large send queue, as a NIC's loopback would take it. */
#define MCAST_QUEUE_SLOTS 8192u

struct uroce_dev;
struct ctl_client;
struct ctl_call;
union ibv_gid;

struct mcast_group {
	uint8_t mgid[16];
	uint16_t mlid;                 /* as the first attach gave it (RoCE: unused) */
	uint32_t n;                    /* attached QPs */
	uint32_t qpn[MCAST_MAX_QP_ATTACH];
};

/* Counters shown on the `mcast` line of `uroce status`. */
struct mcast_stats {
	uint64_t tx;            /* datagrams this device's QPs sent to a group */
	uint64_t tx_segment;    /* of those, sent on the segment as frames */
	uint64_t rx_local;      /* datagrams of this device delivered to its QPs */
	uint64_t rx_segment;    /* frames from the segment delivered to a group */
	uint64_t rx_no_group;   /* datagrams for a group no QP here is attached to */
	uint64_t rx_dropped;    /* the delivery queue was full, or the engine refused it */
};

struct mcast_slot {
	uint8_t sgid[16], dgid[16];
	uint16_t sport;
	uint32_t len;
	uint8_t *pkt;
};

struct mcast_dev {
	struct mcast_group *groups[MCAST_MAX_GROUPS];
	uint32_t n_groups;
	uint32_t n_attach;             /* attachments of all groups */
	struct mcast_stats st;
	struct mcast_slot *q;          /* MCAST_QUEUE_SLOTS, allocated at first use */
	unsigned int q_head, q_n;
	ev_idle drain;
	struct uroce_dev *dev;
};

/* rdma_is_multicast_addr: GID (16 bytes) is ff00::/8, or IPv4-mapped 224.0.0.0/4. */
bool mcast_gid_is_multicast(const uint8_t gid[16]);

/* Create / free a device's multicast state (dev_init / dev_fini). ENOMEM. */
int mcast_dev_init(struct uroce_dev *d);
void mcast_dev_fini(struct uroce_dev *d);

/* Attach QPN to MGID (MLID kept): 0 (also when already attached), ENOMEM
 * at a limit above. Detach: 0, EINVAL when not attached. */
int mcast_attach(struct mcast_dev *m, const uint8_t mgid[16], uint16_t mlid, uint32_t qpn);
int mcast_detach(struct mcast_dev *m, const uint8_t mgid[16], uint32_t qpn);
/* Groups QPN is attached to. */
unsigned int mcast_qp_groups(const struct mcast_dev *m, uint32_t qpn);
/* Detach QPN from every group (its QP is going away). */
void mcast_qp_gone(struct mcast_dev *m, uint32_t qpn);
/* The group MGID, or NULL. */
const struct mcast_group *mcast_group_find(const struct mcast_dev *m, const uint8_t mgid[16]);

/* Control ops (include/uroce/abi.h ATTACH_MCAST / DETACH_MCAST). */
int op_attach_mcast(struct ctl_client *c, struct ctl_call *call);
int op_detach_mcast(struct ctl_client *c, struct ctl_call *call);

/*
 * mcast_xmit - a UD datagram (BTH .. ICRC, LEN bytes) a QP of D sends to the
 * group DGID from UDP source port SPORT with TCLASS: its ICRC computed for
 * (ME, this device's GID -> the group), recorded by a capture, queued for
 * this device's attached QPs (delivered from the event loop, never inside
 * the engine), and sent on the segment as an Ethernet frame. 0, or
 * EAFNOSUPPORT (a group of the other address family), EMSGSIZE.
 */
int mcast_xmit(struct uroce_dev *d, const union ibv_gid *me, const uint8_t dgid[16],
	       uint16_t sport, uint8_t tclass, const void *pkt, size_t len);

/*
 * mcast_deliver - one datagram (BTH .. ICRC) from SGID to group DGID, to the
 * group's QPs on D, counted in *OK when taken (rx.c). VERIFIED: its ICRC is
 * the one this device computed.
 */
void mcast_deliver(struct uroce_dev *d, const uint8_t sgid[16], const uint8_t dgid[16],
		   uint16_t sport, const uint8_t *pkt, size_t len, bool verified, uint64_t *ok);

/*
 * mcast_frame_rx - FRAME (LEN bytes, from the segment) if it is a RoCEv2
 * datagram to a multicast group (IPv4 or IPv6, UDP to the device's port):
 * delivered to the group's QPs here; returns true (the raw QPs never see
 * it, as a ConnectX steers RoCE traffic to its RoCE engine). Else false.
 */
bool mcast_frame_rx(struct uroce_dev *d, const uint8_t *frame, size_t len);

/* The `mcast` status line. */
void mcast_status(const struct uroce_dev *d, FILE *fp);

#endif /* UROCE_EMU_MCAST_H */
