/*
 * cm_int.h - state shared by the files of emu/cm/: the device's CM state,
 * CM connections (one per event channel and device), rdma_cm ids and their
 * connection state machine (IBTA 12.9 names), and the helpers each file
 * provides.
 *
 * Files: ucma.c (the command table and the commands of ids and addresses),
 * cm_event.c (event queue to the event socket), cm_id.c (ids, handles, port
 * spaces), cm_qp_attr.c (INIT_QP_ATTR), cm_wire.c (MADs on QP1 in and out,
 * retransmit timers), cm_conn.c (REQ/REP/RTU/REJ/DREQ/DREP/SIDR state
 * machine), cm_dup.c (MRAs and answers to duplicates), cm_status.c.
 */
#ifndef UROCE_EMU_CM_INT_H
#define UROCE_EMU_CM_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <ev.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_user_cm.h>

#include "emu/cm/cm.h"
#include "emu/obj/objtab.h"
#include "netstack/cm_mad.h"
#include "uroce/abi.h"

/* Bounds (docs/security.md "The connection manager"). */
#define CM_EVQ_MAX 256          /* events queued per CM connection */
#define CM_BACKLOG_MAX 1024     /* the kernel's ucma max_backlog */
#define CM_PENDING_DEV_MAX 1024 /* connect requests not yet accepted, per device, for
				 * listeners of uids without a quota (root, the daemon's);
				 * a uid with one is bound by its quota of ids */
#define CM_MAX_RETRIES 15       /* the kernel's CMA_MAX_CM_RETRIES */
#define CM_RESPONSE_TIMEOUT 20  /* CMA_CM_RESPONSE_TIMEOUT, 4.096 us * 2^20 */
#define CM_PACKET_LIFETIME 16   /* CMA_IBOE_PACKET_LIFETIME */
#define CM_MRA_SETTING 24       /* cm.c CM_MRA_SETTING: MRA service timeout, 4.096 us * 2^24 */
#define CM_HDR_SIZE 36          /* struct cma_hdr in front of the private data */
#define CM_UDP_QKEY 0x01234567u /* RDMA_UDP_QKEY */
#define CM_DEFAULT_HOP_LIMIT 64

/* Event numbers of struct rdma_ucm_event_resp (the kernel's enum
 * rdma_cm_event_type, include/rdma/rdma_cm.h; librdmacm's are the same).
 * Defined here: <rdma/rdma_cma.h> cannot be included with the kernel ABI
 * header (both define RDMA_PS_*). */
enum {
	RDMA_CM_EVENT_ADDR_RESOLVED = 0, RDMA_CM_EVENT_ADDR_ERROR = 1, RDMA_CM_EVENT_ROUTE_RESOLVED = 2,
	RDMA_CM_EVENT_ROUTE_ERROR = 3, RDMA_CM_EVENT_CONNECT_REQUEST = 4, RDMA_CM_EVENT_CONNECT_RESPONSE = 5,
	RDMA_CM_EVENT_CONNECT_ERROR = 6, RDMA_CM_EVENT_UNREACHABLE = 7, RDMA_CM_EVENT_REJECTED = 8,
	RDMA_CM_EVENT_ESTABLISHED = 9, RDMA_CM_EVENT_DISCONNECTED = 10, RDMA_CM_EVENT_DEVICE_REMOVAL = 11,
	RDMA_CM_EVENT_TIMEWAIT_EXIT = 15,
};

/* Connection states (IBTA 12.9.6 figures; cma's RDMA_CM_* for addresses). */
enum cm_state {
	CS_IDLE,            /* created */
	CS_BOUND,           /* address bound */
	CS_ADDR_RESOLVED,
	CS_ROUTE_RESOLVED,
	CS_LISTEN,
	CS_REQ_SENT,        /* active: REQ out, waiting for REP */
	CS_REP_RCVD,        /* active: CONNECT_RESPONSE given, waiting for ACCEPT */
	CS_REQ_RCVD,        /* passive: CONNECT_REQUEST given, waiting for ACCEPT/REJECT */
	CS_REP_SENT,        /* passive: REP out, waiting for RTU */
	CS_ESTABLISHED,
	CS_DREQ_SENT,
	CS_DREQ_RCVD,       /* DISCONNECTED given, DREP owed */
	CS_TIMEWAIT,
	CS_SIDR_REQ_SENT,
	CS_SIDR_REQ_RCVD,
	CS_DISCONNECTED,    /* after timewait, or rejected / unreachable */
};

struct cm_dev;
struct cm_conn;
struct cm_mc;

/* One rdma_cm_id. */
struct cm_id {
	struct cm_dev *cm;
	struct cm_conn *conn;       /* owner */
	struct cm_id *next, *prev;  /* the device's list */
	uint32_t handle;            /* its name for its connection (only its connection
				     * finds it by it); never reused, so an old id's unread
				     * events cannot be taken for a new one's */
	uint32_t slot;              /* its place in conn->ids */
	uint64_t uid;               /* librdmacm's, copied into events */
	uint16_t ps;                /* RDMA_PS_* */
	uint8_t qp_type;            /* IBV_QPT_RC / IBV_QPT_UD */
	enum cm_state state;
	bool bound;
	bool passive;               /* made by a connect request (not in the port space) */
	struct sockaddr_storage src, dst; /* ports included */
	/* options */
	uint8_t tos;
	bool tos_set, reuseaddr, afonly, timeout_set;
	uint8_t ack_timeout;
	/* listener */
	uint32_t backlog, pending;
	struct cm_id *listener;     /* passive id: its listener while pending */
	bool pend_dev;              /* pending, counted in cm_dev.n_pending_dev */
	/* connection */
	uint32_t local_comm_id, remote_comm_id;
	uint64_t service_id, tid;
	union ibv_gid peer_gid;
	uint32_t local_qpn, remote_qpn, remote_qkey;
	uint32_t seq_num;           /* this side's starting PSN */
	uint32_t peer_psn;          /* the peer's starting PSN */
	uint8_t path_mtu;           /* enum ibv_mtu */
	uint8_t responder_resources, initiator_depth;
	uint8_t retry_count, rnr_retry_count, srq, flow_control;
	uint8_t peer_ack_delay;     /* REP target ACK delay (active side) */
	/* the last MAD sent, resent by the timer or for a duplicate */
	uint8_t mad[CM_MAD_SIZE];
	bool mad_valid;
	bool mad_expects_answer;    /* timer runs */
	bool mra_rcvd;              /* an MRA came for the MAD out: later ones are duplicates */
	unsigned int retries;
	uint8_t max_cm_retries;     /* resends allowed: CM_MAX_RETRIES, or on the passive
				     * side the REQ's Max CM Retries (cm.c cm_req_handler) */
	uint32_t wait_ms;           /* the wait before each resend: cm_dev.timeout_ms, or
				     * after an MRA its service timeout (cm_wire_mra) */
	ev_timer timer;
	uint32_t events_reported;
	struct cm_mc *mcs;          /* multicast memberships (cm_mcast.c) */
};

/* One queued event. */
struct cm_evq_ent {
	struct uroce_cm_event ev;
};

/* A CM connection (ctl_client with CM_HELLO done). */
struct cm_conn {
	struct ctl_client *client;
	struct cm_dev *cm;
	struct cm_conn *next, *prev;
	int event_fd;
	uint32_t tag;
	struct obj_table ids;
	struct cm_evq_ent *evq;     /* ring of CM_EVQ_MAX */
	unsigned int evq_head, evq_n;
	ev_timer kick;              /* writes queued events from the loop */
	ev_io wr;                   /* waits for room on the event socket */
	uint64_t events, events_dropped;
};

/* Counters of `uroce status`. */
struct cm_stats {
	uint64_t tx[16], rx[16];    /* by attribute ID - 0x10 (REQ .. APR) */
	uint64_t retransmits, drops, dup, timeouts, rej_backlog;
};

/*
 * What the CM needs from around it: sending one RoCEv2 UDP payload (BTH ..
 * ICRC slot, LEN bytes; the ICRC is the sender's to fill) to PEER with
 * TCLASS, and one one-shot timer per id (arm for MS milliseconds from now,
 * re-arming if armed; stop: no-op if not armed). When a timer runs out its
 * owner calls cm_wire_expired(id). The daemon's (cm_env_daemon, cm_wire.c)
 * are port_xmit and libev timers on the device's loop; tests/cm_engine.c
 * gives its own, with a simulated clock.
 */
struct cm_env {
	int (*xmit)(struct cm_dev *cm, const union ibv_gid *peer, uint8_t tclass, const uint8_t *pkt, size_t len);
	void (*timer_arm)(struct cm_id *id, uint32_t ms);
	void (*timer_stop)(struct cm_id *id);
};
extern const struct cm_env cm_env_daemon;

struct cm_dev {
	struct uroce_dev *dev;
	const struct cm_env *env;   /* cm_env_daemon unless a test sets another */
	struct cm_id *ids;          /* every id of the device */
	struct cm_conn *conns;
	uint32_t n_ids, n_pending;
	uint32_t n_pending_dev;     /* pending of listeners whose owner has no quota */
	uint32_t timeout_ms, max_ids;
	uint32_t next_comm_id, comm_id_operand;
	uint32_t next_handle;       /* id handles 1, 2, ...: unique on the device, so
				     * an id keeps its handle when MIGRATE_ID moves it */
	uint32_t psn;               /* BTH PSN of QP1's sends */
	uint64_t tid;
	struct cm_stats st;
	/* cm_proto_timeout, called through here by the timers of cm_wire.c
	 * (the protocol calls the wire, never the reverse) */
	void (*timeout)(struct cm_id *id);
};

/* cm_event.c: queue EV (id, event, status filled by the caller) for ID's
 * connection. Returns 0, or ENOSPC (queue full: the event is dropped and
 * counted). */
int cm_event_post(struct cm_id *id, struct rdma_ucm_event_resp *ev);
/* A zeroed event of ID with EVENT and STATUS. */
void cm_event_init(const struct cm_id *id, struct rdma_ucm_event_resp *ev, uint32_t event, int32_t status);
/* Room for one more event on C's queue? */
bool cm_event_room(const struct cm_conn *c);
/* Set up / stop C's event watchers (the queue itself is C's). */
void cm_event_conn_init(struct cm_conn *c);
void cm_event_conn_fini(struct cm_conn *c);

/* cm_id.c */
/* A new id of C (handle in C's table, random 24-bit starting PSN, a fresh
 * comm ID) with librdmacm's UID, port space PS and QP_TYPE. NULL with *err
 * ENOMEM: the uid's quota (root and the daemon's uid have none) or memory. */
struct cm_id *cm_id_new(struct cm_conn *c, uint64_t uid, uint16_t ps, uint8_t qp_type, int *err);
/* C's id of HANDLE, or NULL (another connection's handles name nothing). */
struct cm_id *cm_id_get(struct cm_conn *c, uint32_t handle);
/* Free ID (its timer stopped already: cm_destroy). */
void cm_id_free(struct cm_id *id);
/* rdma_bind_addr's rules (cma.c): SA (LEN bytes) is the device's address or
 * the wildcard, port 0 = ephemeral (32768..60999). Returns 0, EINVAL (bound
 * already, bad family size), EAFNOSUPPORT (AF_IB), ENODEV (not the device's
 * address), EACCES (port < 1024, not root), EADDRINUSE, EADDRNOTAVAIL. */
int cm_id_bind(struct cm_id *id, const struct sockaddr *sa, socklen_t len);
/* Whether ID has a device as the kernel's rdma_cm sees it (cm_id->device):
 * not while idle, nor while bound or listening on the wildcard or a loopback
 * address (cma.c cma_any_addr: rdma_bind_addr acquires no device for them);
 * queries then answer node_guid 0 (ucma.c ucma_query_route), which leaves
 * librdmacm's id->verbs NULL. */
bool cm_id_has_device(const struct cm_id *id);
/* The listener of port space PS and PORT for destination DST_IP (16 bytes,
 * v4-mapped): one bound to that address first, else a wildcard one. */
struct cm_id *cm_find_listener(struct cm_dev *cm, uint16_t ps, uint16_t port, const uint8_t dst_ip[16]);
/* The id with this side's comm ID LOCAL_COMM_ID that has begun connecting. */
struct cm_id *cm_find_comm(struct cm_dev *cm, uint32_t local_comm_id);
/* The id connected to PEER whose peer's comm ID is REMOTE_COMM_ID (a
 * retransmitted REQ / SIDR_REQ finds its id here). */
struct cm_id *cm_find_remote(struct cm_dev *cm, uint32_t remote_comm_id, const union ibv_gid *peer);
/* CM ids the uid holds over all its CM connections (the quota's usage). */
uint32_t cm_uid_ids(const struct cm_dev *cm, uid_t uid);
/* The device's address as an IPv6 / v4-mapped 16-byte GID. */
void cm_dev_gid(const struct cm_dev *cm, union ibv_gid *gid);
/* Address (16 bytes, v4-mapped) and port of SA. */
void cm_sa_ip(const struct sockaddr_storage *sa, uint8_t ip[16], uint16_t *port);
/* Build a sockaddr of the device's family from IP (16, v4-mapped) and PORT. */
void cm_sa_make(struct sockaddr_storage *sa, int family, const uint8_t ip[16], uint16_t port);

/* cm_wire.c: send M (attribute, fields) to ID's peer; EXPECT: keep it and
 * resend after the timeout until answered (cm_wire_stop). */
int cm_wire_send(struct cm_id *id, struct cm_msg *m, bool expect);
/* Send M to PEER without an id (REJ/SIDR_REP for unknown requests). */
int cm_wire_send_to(struct cm_dev *cm, const union ibv_gid *peer, struct cm_msg *m);
/* Resend ID's last MAD (a duplicate asked for it). */
void cm_wire_resend(struct cm_id *id);
/* Stop ID's retransmit timer. */
void cm_wire_stop(struct cm_id *id);
/* Send M to ID's peer (with ID's TClass) without keeping it: an answer to a
 * duplicate (MRA), which the duplicate's next copy asks for again. */
int cm_wire_reply(struct cm_id *id, struct cm_msg *m);
/* An MRA for the MAD out: wait MS from now, and MS before each later resend
 * (mad.c ib_modify_mad: the retries left stay). */
void cm_wire_mra(struct cm_id *id, uint32_t ms);
/* Start a timer on ID of MS milliseconds without a MAD (timewait). */
void cm_wire_timer(struct cm_id *id, uint32_t ms);
/* ID's timer ran out: resend its MAD (at most max_cm_retries times, each
 * followed by another wait), else cm_proto_timeout through cm_dev.timeout. */
void cm_wire_expired(struct cm_id *id);

/* cm_conn.c: the protocol */
/* A decoded MAD M from PEER (cm_recv.c). */
void cm_proto_input(struct cm_dev *cm, const struct cm_msg *m, const union ibv_gid *peer);
/* ID's timer ran out: no answer after the resends, or the end of timewait. */
void cm_proto_timeout(struct cm_id *id);
/* CONNECT: REQ (RC) or SIDR_REQ (UD) with P. 0, or EINVAL (route not
 * resolved, private data too long). */
int cm_connect(struct cm_id *id, const struct rdma_ucm_conn_param *p);
/* ACCEPT: REP (passive RC), RTU (active RC after CONNECT_RESPONSE),
 * SIDR_REP status 0 (passive UD). 0, or EINVAL (wrong state, private data
 * too long). */
int cm_accept(struct cm_id *id, const struct rdma_ucm_conn_param *p);
/* REJECT: REJ with REASON and LEN bytes of PDATA, or SIDR_REP status 2.
 * 0, or EINVAL. */
int cm_reject(struct cm_id *id, uint8_t reason, const uint8_t *pdata, uint8_t len);
/* DISCONNECT: DREQ, or the DREP owed. 0, or EINVAL (never connected). */
int cm_disconnect(struct cm_id *id);
/* ID goes away (DESTROY_ID, connection closed): DREQ / REJ as cm_destroy_id. */
void cm_proto_destroy(struct cm_id *id);
/* DESTROY_ID: cm_proto_destroy, stop the timer, free the id. */
void cm_destroy(struct cm_id *id);

/* cm_dup.c */
/* cm.c cm_convert_to_ms: IBA time T (4.096 us * 2^T) in ms as the kernel
 * approximates it, 2^(T-8) (1 for T <= 8). */
uint32_t cm_convert_to_ms(uint8_t t);
/* An MRA of ID's peer's message MSG_MRAED (CM_MSG_REQ / CM_MSG_REP) with
 * service timeout CM_MRA_SETTING, sent without being kept. */
void cm_send_mra(struct cm_id *id, uint8_t msg_mraed);
/* MRA M for ID: honoured once, for the MAD out of its state; else counted
 * as a duplicate. */
void cm_on_mra(struct cm_id *id, const struct cm_msg *m);
/* DREP for DREQ from PEER, which names no connection here; counted as a
 * duplicate. */
void cm_issue_drep(struct cm_dev *cm, const struct cm_msg *dreq, const union ibv_gid *peer);

/* cm_qp_attr.c */
/* INIT_QP_ATTR of ID for QP_STATE (docs/rdma-cm.md table). 0, or EINVAL
 * (another state, or RTR/RTS before the connection allows them). */
int cm_init_qp_attr(struct cm_id *id, uint32_t qp_state, struct ib_uverbs_qp_attr *a);
/* Path record facts the REQ and QUERY PATH share. */
uint8_t cm_packet_rate(const struct cm_dev *cm);
uint8_t cm_ack_timeout(uint8_t ca_ack_delay, uint8_t packet_life_time);

#endif
