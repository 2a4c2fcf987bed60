/*
 * objects.h - the verbs objects a client owns (PD, MR, MW, CQ, SRQ, QP, AH,
 * DM, XRC domains) and one control request as a handler sees it. The lowest
 * layer of the daemon (docs/architecture.md): the control plane (emu/ctl,
 * whose handlers and destructors are declared in emu/ctl/ops.h) and the NIC
 * (emu/nic, emu/eth, emu/mcast) both read these, and nothing here reaches
 * up to either.
 *
 * Handler contract (called by server.c after the header, size, HELLO and
 * descriptor-count checks): REQ points at the validated request of the
 * handler's opcode; FDS holds the received descriptors — a handler that keeps
 * one sets its entry to -1, the server closes the rest; RESP is the reply
 * buffer (zeroed, header filled by the server) of uroce_resp_size(opcode)
 * bytes; a handler may return up to UROCE_MSG_MAX_FDS descriptors in OUT_FDS
 * (*n_out) which the server sends and then closes if OWNED by the server.
 * Returns 0 or a positive errno (see include/uroce/abi.h per opcode).
 */
#ifndef UROCE_EMU_OBJ_OBJECTS_H
#define UROCE_EMU_OBJ_OBJECTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <ev.h>
#include <infiniband/verbs.h>
#include "uroce/abi.h"
#include "emu/obj/timer.h"

struct ctl_client;
struct xport_qp;
struct xport_srq;
struct ctl_dm;

struct ctl_pd {
	uint32_t handle;
	uint32_t pdn;            /* device-wide PD number (the data path compares these) */
	uint32_t users;          /* MRs, QPs and AHs using it (DEALLOC_PD: EBUSY) */
	uint32_t imported;       /* IMPORT_OBJ handles naming it (obj_share.c; EBUSY) */
};

struct ctl_mr {
	uint32_t handle;
	struct ctl_pd *pd;
	uint64_t addr;           /* virtual address in the client process */
	uint64_t length;         /* bytes */
	uint32_t access;         /* enum ibv_access_flags (MW_BIND included) */
	uint32_t key;            /* lkey == rkey */
	bool odp;                /* IBV_ACCESS_ON_DEMAND: mapping checked at each access */
	uint32_t mw_bound;       /* windows bound to it (DEREG_MR: EBUSY) */
	struct ctl_client *owner;
	struct ctl_dm *dm;       /* REG_DM_MR: zero-based over dm->mem + dm_offset, else NULL */
	uint64_t dm_offset;      /* bytes into the DM */
	uint32_t imported;       /* IMPORT_OBJ handles naming it (obj_share.c; EBUSY) */
};

/* Device memory (ibv_alloc_dm(3), uroce/abi_dm.h): a memfd the daemon
 * created and maps; the owner maps the same pages. */
struct ctl_dm {
	uint32_t handle;
	uint64_t length;         /* bytes asked for: the range MRs and copies may use */
	uint64_t charged;        /* length rounded up to UROCE_DM_GRANULE (device and quota) */
	void *mem;               /* the daemon's mapping of map_size bytes */
	uint64_t map_size;
	uint32_t mrs;            /* MRs registered on it (FREE_DM: EBUSY) */
	struct ctl_client *owner;
	int memfd;               /* the memfd, for IMPORT_OBJ (obj_share.c) */
	uint32_t imported;       /* IMPORT_OBJ handles naming it (EBUSY) */
};

/* A memory window (IBTA 10.6.7; ibv_alloc_mw(3)): a type 1 window has a
 * valid rkey from the start and is (re)bound by the bind_mw verb; a type 2
 * (IBTA type 2B) window is free until a BIND_MW WQE binds it to the
 * posting QP, and free again after LOCAL_INV / SEND with Invalidate. The
 * rkey works only while mr != NULL (bound with a length > 0). */
struct ctl_mw {
	uint32_t handle;
	struct ctl_pd *pd;
	enum ibv_mw_type type;
	uint32_t rkey;           /* index<<8 | variant, a slot of the key table */
	struct ctl_mr *mr;       /* bound to; NULL = unbound / free */
	uint64_t addr;           /* bound range [addr, addr+length) */
	uint64_t length;         /* bytes */
	uint32_t access;         /* IBV_ACCESS_REMOTE_* it grants */
	uint32_t qpn;            /* type 2: the only QP that may use it */
	struct ctl_client *owner;
};

struct ctl_cq {
	uint32_t handle;
	uint32_t cqn;
	uint64_t user_handle;    /* struct ibv_cq * in the client */
	uint32_t cqe;            /* entries asked for */
	uint32_t nent;           /* ring entries (power of two) */
	uint32_t flags;          /* UROCE_CQ_* */
	uint32_t comp_vector;
	void *ring;              /* mapped memfd: struct uroce_cq_ring_hdr + CQEs */
	uint64_t ring_size;      /* bytes mapped */
	int chan_fd;             /* completion channel socket, -1 = none */
	uint32_t users;          /* QPs using it (DESTROY_CQ: EBUSY) */
	uint32_t pi;             /* CQEs written (free-running) */
	bool overrun;            /* CQ in error after an overrun */
	/* arming, see the CQ ring section of abi.h */
	uint32_t last_arm_word;  /* last arm word accepted (host order) */
	bool armed;
	bool arm_solicited;
	uint32_t arm_ci;
	/* event moderation (MODIFY_CQ; abi.h "Moderation"); 0/0 = off */
	uint16_t mod_count;      /* fire after this many CQEs since the arm */
	uint16_t mod_period;     /* or this many µs after the first of them */
	uint32_t mod_pending;    /* qualifying CQEs written since the arm */
	struct nic_timer mod_timer;
	uint32_t comp_events;    /* completion events written to chan_fd */
	uint32_t async_events;   /* async events (CQ_ERR) about this CQ */
	struct ctl_client *owner;
};

/* A shared receive queue (IBTA 10.2.9): its ring (abi_ring.h "SRQ ring")
 * is read at each doorbell into the engine's SRQ, which QPs take from. */
struct ctl_srq {
	uint32_t handle;
	uint32_t srqn;
	uint64_t user_handle;    /* struct ibv_srq * in the client */
	struct ctl_pd *pd;
	uint32_t max_wr;         /* a power of two */
	uint32_t max_sge;
	void *ring;              /* mapped memfd: struct uroce_srq_ring_hdr + WQEs */
	uint64_t ring_size;
	uint32_t next;           /* next WQE number to read from the ring */
	bool error;              /* a malformed WQE: no more are read */
	uint32_t users;          /* QPs using it (DESTROY_SRQ: EBUSY) */
	uint32_t async_events;
	struct xport_srq *xsrq;
	struct ctl_client *owner;
	struct ctl_xrcd *xrcd;   /* XRC SRQ: its domain handle, else NULL */
	struct ctl_cq *cq;       /* XRC SRQ: the CQ of its receives, else NULL */
};

struct ctl_qp {
	uint32_t handle;
	uint32_t qpn;
	uint64_t user_handle;    /* struct ibv_qp * in the client */
	enum ibv_qp_type type;
	bool sq_sig_all;
	struct ctl_pd *pd;
	struct ctl_cq *send_cq, *recv_cq;
	struct ctl_srq *srq;     /* receive WQEs come from here, or NULL */
	struct ctl_xrcd *xrcd;   /* XRC_RECV: its domain handle (no PD, CQs, queues) */
	struct ibv_qp_cap cap;   /* rounded caps */
	uint32_t max_tso_header; /* raw packet QPs: TSO header bytes each SQ slot holds */
	/* What ibv_query_qp reports beyond the engine's state and transport
	 * attributes (xport_qp_query): the address vector as given, the P_Key
	 * index, the port and the migration state. */
	struct ibv_ah_attr ah_attr;
	uint16_t pkey_index;
	uint8_t port_num;
	enum ibv_mig_state path_mig_state;
	void *ring;              /* mapped QP ring memfd, NULL if none */
	uint64_t ring_size;
	uint32_t sq_next, rq_next; /* next WQE numbers to read from the rings */
	struct xport_qp *xqp;    /* the transport engine's QP: its state and attributes */
	struct raw_qp *raw;      /* RAW_PACKET QPs instead of xqp (emu/eth/raw_qp.c) */
	struct nic_timer timer;  /* the engine's retransmit/RNR timer */
	uint64_t timer_defer_until; /* ns; != 0: expiry put off until then at most
				     * while received datagrams wait (engine_glue.c) */
	ev_check run_check;      /* the engine's next turn (ops->schedule) ... */
	ev_idle run_idle;        /* ... without blocking in poll meanwhile */
	ev_prepare db_poll;      /* active while the ring's no_doorbell promise stands (doorbell.c) */
	ev_idle db_turn;         /* one more turn without sleeping after db_poll took WQEs */
	uint32_t db_idle_turns;  /* --busy-poll: loop turns the promise found nothing */
	bool rq_promise;         /* the ring's rq_no_doorbell promise stands (doorbell.c) */
	ev_prepare rq_withdraw;  /* active from the engine's own move to ERR until the
				  * promise is withdrawn, before the loop sleeps */
	uint32_t async_events;
	uint32_t imported;       /* OPEN_QP handles naming it (obj_share.c; DESTROY_QP: EBUSY) */
	struct ctl_client *owner;
};

struct ctl_ah {
	uint32_t handle;
	struct ctl_pd *pd;
	struct ibv_ah_attr attr;
};

/* A handler's view of one request (see the contract above). */
struct ctl_call {
	const void *req;
	int *fds;
	int nfds;
	void *resp;
	int out_fds[UROCE_MSG_MAX_FDS];
	int n_out;
	bool close_out;          /* close out_fds after sending (they are copies) */
};

typedef int (*ctl_handler)(struct ctl_client *c, struct ctl_call *call);

/* An XRC domain of the device (IBTA Annex A14.2.1): private to one client
 * or named by an inode and shared by every client that opens it
 * (ibv_open_xrcd(3)); it lives while any client holds a handle of it. */
struct xrcd_dom {
	struct xrcd_dom *next;   /* on uroce_dev.xrcds */
	uint32_t xrcdn;          /* device-wide number, never 0 */
	bool shared;             /* named by (st_dev, st_ino) below */
	dev_t st_dev;
	ino_t st_ino;
	int pin_fd;              /* the file, held so the inode is not reused; -1 */
	uint32_t handles;        /* client handles of it, all clients */
};

/* One client's handle of an XRC domain (OPEN_XRCD, abi_xrc.h). */
struct ctl_xrcd {
	uint32_t handle;
	struct xrcd_dom *dom;
	uint32_t users;          /* XRC SRQs and XRC_RECV QPs created with it */
};

/* Handle of request bodies that are a single handle (struct uroce_handle_req). */
static inline uint32_t req_handle(const struct ctl_call *call)
{
	return ((const struct uroce_handle_req *)call->req)->handle;
}

#endif
