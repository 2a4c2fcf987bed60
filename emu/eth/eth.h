/*
 * eth.h - the device's Ethernet side: raw packet QPs (IBV_QPT_RAW_PACKET),
 * the flow steering rules that pick which of them receive a frame
 * (ibv_create_flow(3)), and the virtual Ethernet segment that carries
 * frames between devices in VXLAN (RFC 7348). docs/raw-packet.md has the
 * frame path, the rules and the limits.
 *
 * The RoCE transport (emu/xport, emu/nic/port.c) never sees these frames
 * and raw QPs never see RoCE packets: the two share only the device, its
 * address and its objects (PDs, MRs, CQs).
 */
#ifndef UROCE_EMU_ETH_ETH_H
#define UROCE_EMU_ETH_ETH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>

struct uroce_dev;
struct ctl_qp;
struct ctl_client;
struct ctl_call;

#define ETH_PEERS_MAX 16
#define ETH_VXLAN_PORT_DEFAULT 4789 /* IANA, RFC 7348 §5 */
#define ETH_VNI_DEFAULT 1
#define ETH_MTU_DEFAULT 1500
#define ETH_MTU_MAX 9000

/* What `uroced --vxlan-*` / `--eth-mtu` ask for. vxlan_port 0: no segment
 * (frames only between the raw QPs of this device). */
struct eth_cfg {
	uint16_t vxlan_port;          /* UDP port, host order */
	uint32_t vni;                 /* 24-bit VXLAN network identifier */
	uint32_t mtu;                 /* bytes of a frame after its Ethernet header (68..9000) */
	unsigned int n_peers;
	struct sockaddr_storage peers[ETH_PEERS_MAX]; /* --vxlan-peer: port filled in */
	socklen_t peer_len[ETH_PEERS_MAX];
};

/*
 * eth_port_open - the device's MAC (from its node GUID), its steering table
 * and, unless cfg->vxlan_port is 0, the VXLAN socket bound to the device
 * address at cfg->vxlan_port. A socket that cannot be bound (the port is
 * taken) is logged and the segment stays down: raw QPs then reach the raw
 * QPs of this device only. Returns 0 or ENOMEM.
 */
int eth_port_open(struct uroce_dev *d, const struct eth_cfg *cfg);
void eth_port_close(struct uroce_dev *d);

/* The device MAC: 02:00 then the last four bytes of its address (the
 * EUI-48 inside uroce_node_guid's EUI-64). */
void eth_port_mac(const struct uroce_dev *d, uint8_t mac[6]);

/* One status line per device ("eth ...") and per raw QP ("  qp ..."). */
void eth_status(const struct uroce_dev *d, FILE *fp);
void eth_qp_status(const struct ctl_qp *qp, FILE *fp);

/*
 * Raw packet QPs. raw_qp_create sets qp->raw (the QP in RESET); 0 or
 * ENOMEM. raw_qp_destroy drops its rules and queued WQEs (no completions).
 * raw_qp_modify applies a transition qp_modify_check allowed (ERR flushes
 * every WQE: IBV_WC_WR_FLUSH_ERR; RESET discards them). raw_qp_doorbell
 * takes the new receive WQEs and at most RAW_SEND_BATCH send WQEs and no
 * more than MAX (the owner's doorbell budget left in this loop turn,
 * emu/nic/doorbell.h), whose frames go out at once; *TAKEN: how many.
 * Returns whether send WQEs are left (the caller rings the doorbell again,
 * so other clients run in between).
 */
#define RAW_SEND_BATCH 64
int raw_qp_create(struct ctl_qp *qp);
void raw_qp_destroy(struct ctl_qp *qp);
void raw_qp_modify(struct ctl_qp *qp, enum ibv_qp_state next);
enum ibv_qp_state raw_qp_state(const struct ctl_qp *qp);
bool raw_qp_doorbell(struct ctl_qp *qp, uint32_t max, uint32_t *taken);

/* What DESTROY_QP / MODIFY_QP / QUERY_QP answer for QP before anything else:
 * EINVAL for a WQ (its own messages), EBUSY (destroy: rules attached, or a
 * WQ in an indirection table) and EOPNOTSUPP (modify of an RSS QP: it has
 * no states); 0 to go on. OP: UROCE_OP_DESTROY_QP, _MODIFY_QP, _QUERY_QP. */
int raw_qp_op_check(const struct ctl_qp *qp, unsigned int op);

/*
 * The raw half of CREATE_WQ, DESTROY_WQ and CREATE_RSS_QP (rss.c; the QP
 * objects are emu/ctl/obj_wq.c's). raw_wq_check: REQ's sizes, flags and
 * strides against the device (0, EINVAL, or EOPNOTSUPP for
 * IBV_WQ_FLAGS_PCI_WRITE_END_PADDING). raw_wq_init makes the new raw QP a
 * WQ as REQ asks. raw_wq_get: C's WQ of HANDLE, or NULL. raw_wq_in_table:
 * an indirection table holds it (destroy: EBUSY). raw_rss_prepare: C's
 * table of REQ, the Toeplitz key and IBV_RX_HASH_* fields checked (EINVAL;
 * EOPNOTSUPP for IBV_RX_HASH_IPSEC_SPI) into a new *OUT (ENOMEM), which
 * raw_rss_attach gives to the new raw QP (then in RTR: a TIR has no states)
 * or the caller frees.
 */
struct uroce_create_wq_req;
struct uroce_create_rss_qp_req;
struct raw_rss;
int raw_wq_check(const struct ctl_client *c, const struct uroce_create_wq_req *req);
void raw_wq_init(struct ctl_qp *qp, const struct uroce_create_wq_req *req);
struct ctl_qp *raw_wq_get(struct ctl_client *c, uint32_t handle);
bool raw_wq_in_table(const struct ctl_qp *qp);
int raw_rss_prepare(struct ctl_client *c, const struct uroce_create_rss_qp_req *req, struct raw_rss **out);
void raw_rss_attach(struct ctl_qp *qp, struct raw_rss *rss);

/* Handlers (uroce/abi_flow.h; objects.h contract): steer.c, rss.c,
 * counters.c; CREATE_WQ, DESTROY_WQ and CREATE_RSS_QP in emu/ctl/obj_wq.c. */
int op_create_flow(struct ctl_client *c, struct ctl_call *call);
int op_destroy_flow(struct ctl_client *c, struct ctl_call *call);
int op_create_wq(struct ctl_client *c, struct ctl_call *call);
int op_modify_wq(struct ctl_client *c, struct ctl_call *call);
int op_destroy_wq(struct ctl_client *c, struct ctl_call *call);
int op_create_ind_table(struct ctl_client *c, struct ctl_call *call);
int op_destroy_ind_table(struct ctl_client *c, struct ctl_call *call);
int op_create_rss_qp(struct ctl_client *c, struct ctl_call *call);
int op_create_counters(struct ctl_client *c, struct ctl_call *call);
int op_destroy_counters(struct ctl_client *c, struct ctl_call *call);
int op_read_counters(struct ctl_client *c, struct ctl_call *call);

/* C is going: its indirection tables and counters go (after its QPs and
 * WQs, whose rules held them). */
void eth_client_gone(struct ctl_client *c);

#endif
