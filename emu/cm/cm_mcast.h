/*
 * cm_mcast.h - rdma_cm multicast joins of a RoCEv2 device (cm_mcast.c).
 * Each command takes the zero-padded command struct IN and writes its
 * answer to OUT (*N_OUT bytes).
 */
#ifndef UROCE_EMU_CM_MCAST_H
#define UROCE_EMU_CM_MCAST_H

#include <stdint.h>

struct cm_conn;
struct cm_id;

/* JOIN_IP_MCAST / JOIN_MCAST: a membership of the id for an IPv4 group
 * (224.0.0.0/4), answered with its handle (struct rdma_ucm_create_id_resp)
 * and followed by RDMA_CM_EVENT_MULTICAST_JOIN (uid: the command's; id: the
 * membership's handle; param.ud: qp_num 0xFFFFFF, qkey 0x01234567, AH to
 * MGID ::ffff:<group> with hop limit 64). ENOENT (no such id), EINVAL (id
 * not bound / address-resolved, not UD, join_flags, address size, not an
 * IPv4 group), EOPNOTSUPP (IPv6 group: the kernel's RoCEv2 answer), ENOMEM
 * (1024 memberships per id, or the event queue is full). */
int cm_cmd_join_ip_mcast(struct cm_conn *c, const uint8_t *in, uint8_t *out, uint32_t *n_out);
int cm_cmd_join_mcast(struct cm_conn *c, const uint8_t *in, uint8_t *out, uint32_t *n_out);
/* LEAVE_MCAST (struct rdma_ucm_destroy_id naming a membership): forgets
 * it; answers struct rdma_ucm_destroy_id_resp. ENOENT: no membership of
 * this connection. The QP was detached by librdmacm before. */
int cm_cmd_leave_mcast(struct cm_conn *c, const uint8_t *in, uint8_t *out, uint32_t *n_out);
/* One membership of an id (struct cm_id's mcs list); cm_id_free frees them. */
struct cm_mc {
	struct cm_mc *next;
	uint32_t handle;    /* the name LEAVE_MCAST uses; from the id handle space */
	uint64_t uid;       /* librdmacm's struct cma_multicast, copied into the event */
	uint8_t mgid[16];
	uint32_t events_reported;
};

#endif /* UROCE_EMU_CM_MCAST_H */
