/*
 * uroce.h - the provider's objects and the helpers its files share.
 *
 * Every verbs object wraps the libibverbs struct (first member, so the
 * pointer libibverbs hands back converts with container_of) and adds the
 * daemon's handle for it. All protocol types come from <uroce/abi.h>.
 */
#ifndef UROCE_PROVIDER_UROCE_H
#define UROCE_PROVIDER_UROCE_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include <infiniband/urocedv.h>
#include <uroce/abi.h>
#include <uroce/verbs_provider.h>

#define uroce_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* The sysfs file whose presence marks a uroce device (docs/discovery.md). */
#define UROCE_SYSFS_SOCKET_FILE "uroce_socket"

/* QPN lookup table geometry: 24-bit QPNs = 12-bit top index + 12-bit slot. */
#define UROCE_QPT_SHIFT 12
#define UROCE_QPT_TOP (1u << (24 - UROCE_QPT_SHIFT))
#define UROCE_QPT_SLOTS (1u << UROCE_QPT_SHIFT)
/* SRQN lookup table: SRQNs are 1..max_srq (docs/daemon.md: 1024). */
#define UROCE_SRQT_SIZE 1024u

/* Printed before every provider message on stderr. */
#define UROCE_LOG_PREFIX "uroce: "

/* One device found in the sysfs tree. */
struct uroce_device {
	struct verbs_device vdev;
	char ibdev_path[IBV_SYSFS_PATH_MAX]; /* copied: ->sysfs is set after alloc_device */
};

/*
 * The request state of one control connection, in a MAP_SHARED page so that
 * it stays one state across fork(): a child that inherited the connection
 * (device memory requests, ctl.c) and its parent take turns under the same
 * lock and number their requests from the same counter.
 *   lock           process-shared and robust: one outstanding request per
 *                  connection, across threads and processes
 *   seq            seq of the last request sent
 *   stale_replies  replies still owed for requests that timed out, or whose
 *                  sender died before reading the reply (discarded by seq)
 *   in_flight      seq of the request sent and not yet answered, else 0
 */
struct uroce_ctl_shared {
	pthread_mutex_t lock;
	uint32_t seq;
	uint32_t stale_replies;
	uint32_t in_flight;
};

/*
 * One ibv_context = one control connection to the daemon.
 *   sock       AF_UNIX SOCK_SEQPACKET connection; requests serialised by ctl->lock
 *   ctl        the connection's request state, shared with fork children (ctl.c)
 *   hello      the HELLO reply: device and port attributes, limits
 *   clock      the daemon's read-only clock page (struct uroce_clock_page)
 *   doorbell   the daemon's eventfd: written after a CQ arm word (or new WQEs)
 *   gid_tbl_len   number of ports/1/gids/N files in sysfs (what libibverbs can query)
 *   dead       set by the async_event op on IBV_EVENT_DEVICE_FATAL (requests: EIO)
 *   lost       the control connection broke (requests: EIO)
 *   gone       the daemon is gone: CQ polls flush outstanding WQEs, posts
 *              fail with EIO (liveness.h); gone_checked_ms: CLOCK_MONOTONIC_COARSE
 *              ms of the last check of the control socket
 *   pid        the process that opened the context: a fork child may use the
 *              connection only for device memory (its other requests: EIO, ctl.c)
 *   kept       destroyed CQs/QPs that late async events may still name (events.c)
 */
struct uroce_context {
	struct verbs_context vctx;
	int sock;
	struct uroce_ctl_shared *ctl;
	struct uroce_hello_resp hello;
	const volatile struct uroce_clock_page *clock;
	int doorbell;
	uint32_t gid_tbl_len;
	int num_comp_vectors;
	uint32_t poll_yield; /* UROCE_POLL_YIELD (poll_yield.h), for each new CQ */
	bool dead;
	bool lost;
	bool gone;
	uint64_t gone_checked_ms;
	pid_t pid;
	bool fork_said;          /* this fork child was told its requests fail */
	pthread_mutex_t kept_lock;
	struct uroce_kept *kept;
	pthread_mutex_t qp_lock; /* serialises changes of qp_table */
	/* QPN -> QP for polling, two levels of 4096 like mlx5's qp_table: read
	 * without a lock (atomic loads), changed under qp_lock. */
	struct uroce_qp **qp_table[UROCE_QPT_TOP];
	/* SRQN -> SRQ for polling (responder CQEs carry the SRQN), same rules */
	struct uroce_srq *srq_table[UROCE_SRQT_SIZE];
};

/*
 * A PD, or a parent domain (ibv_alloc_parent_domain(3), parent_domain.c):
 * then base is the PD it stands for (handle is base's, so every request
 * names the real PD), td its thread domain or NULL, and alloc/free/pd_context
 * the application's allocator for queue rings. refs counts parent domains
 * on a PD, and rings mapped through a parent domain (dealloc: EBUSY).
 */
struct uroce_pd {
	struct ibv_pd ibv_pd;
	uint32_t handle;
	struct uroce_pd *base;
	struct ibv_td *td;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment,
		       uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t resource_type);
	void *pd_context;
	unsigned int refs;
};

/* resource_type passed to a parent domain's allocator: driver id 0 (uroce
 * has none in enum rdma_driver_id) in the high 32 bits, as mlx5 puts its own. */
enum uroce_res_type {
	UROCE_RES_TYPE_QP = 1,
	UROCE_RES_TYPE_CQ = 2,
	UROCE_RES_TYPE_SRQ = 3,
};

struct uroce_mr {
	struct verbs_mr vmr;
	uint32_t handle;
};

struct uroce_ah {
	struct ibv_ah ibv_ah;
	uint32_t handle;
};

/*
 * A CQ: a power-of-two ring of struct mlx5_cqe64 after a 64-byte header, in
 * a sealed memfd shared with the daemon (abi.h "CQ ring").
 *   nent       ring entries (power of two); ibv_cq.cqe reports nent - 1
 *   cons_index free-running consumer index (CQEs consumed)
 *   arm_sn     2-bit arm sequence number, advanced by the cq_event op (and by
 *              the channel's read hook when it re-arms for a stale event)
 *   comp_events_read, async_events_read   events ibv_get_cq_event /
 *              ibv_get_async_event returned for this CQ (events.c)
 */
/*
 * The QP of the last CQE a CQ's polls retired, as mlx5's cur_rsc: CQEs of
 * the same QP skip the QPN lookup. sq_qpn is its QPN (UROCE_NO_QPN: none);
 * rq_qpn is its QPN too when its receives complete on its own RQ
 * (cap.max_recv_wr > 0, no SRQ), else UROCE_NO_QPN, so that a CQE's QPN
 * compared with the key of its queue is the whole check. Kept from one poll
 * to the next; destroying the QP clears it (uroce_cq_forget_qp), under the
 * CQ lock as the polls.
 */
struct uroce_qp_cache {
	struct uroce_qp *qp;
	uint32_t sq_qpn;
	uint32_t rq_qpn;
};
#define UROCE_NO_QPN UINT32_MAX /* never a 24-bit QPN */

static inline void uroce_qp_cache_reset(struct uroce_qp_cache *c)
{
	c->qp = NULL;
	c->sq_qpn = UROCE_NO_QPN;
	c->rq_qpn = UROCE_NO_QPN;
}

struct uroce_cq {
	struct verbs_cq vcq;
	uint32_t handle;
	uint32_t cqn;
	uint32_t nent;
	uint32_t cons_index;
	uint32_t arm_sn;
	bool arm_solicited;   /* what the application's last arm asked for */
	uint32_t comp_events_read;
	uint32_t async_events_read;
	uint64_t wc_flags;    /* IBV_WC_EX_WITH_* requested at creation */
	bool single_threaded; /* IBV_CREATE_CQ_ATTR_SINGLE_THREADED: no lock */
	uint32_t poll_yield;  /* empty polls before a sched_yield, 0: never (poll_yield.h) */
	uint32_t empty_polls; /* consecutive empty polls since the last yield or completion */
	int ring_fd;
	void *ring;
	size_t ring_size;
	struct uroce_cq_ring_hdr *hdr;
	struct mlx5_cqe64 *cqes;
	pthread_spinlock_t lock;
	/* extended-CQ iterator state: the CQE start_poll/next_poll stopped at */
	struct mlx5_cqe64 *cur;
	struct uroce_qp_cache qpc; /* the QP of the last CQE, for every poll */
	uint32_t cur_sop;     /* its sop_drop_qpn, host order */
	uint8_t cur_op;       /* its CQE opcode (op_own >> 4) */
	bool tm_sync_req;     /* the last tag-matching CQE asks for a SYNC (tm.c) */
	uint32_t flush_qpn; /* QP the last software flush CQE came from (flush.c) */
	/* urocedv_poll_cq_wc (dv_wc.c): the poll picked for wc_layout at
	 * urocedv_create_cq_wc, NULL for other CQs */
	int (*wc_poll)(struct uroce_cq *cq, int num_entries, void *wc);
	struct urocedv_wc_layout wc_layout;
};

/*
 * A QP with its SQ/RQ rings (abi.h) and, like mlx5, one
 * wr_id array per queue indexed by WQE number & (cnt - 1).
 */
struct uroce_qp {
	struct verbs_qp vqp;
	uint32_t handle;
	struct ibv_qp_cap cap; /* rounded, as the rings hold them */
	uint32_t max_tso_header;   /* raw packet QPs: TSO header bytes a WQE may carry */
	struct uroce_qp_ring_layout layout;
	int ring_fd;
	void *ring;
	uint64_t *sq_wrid;
	uint64_t *rq_wrid;
	uint32_t sq_head, rq_head; /* free-running producer indices */
	uint32_t sq_tail, rq_tail; /* free-running: WQEs completed to the user */
	uint32_t *sq_wqe_head;     /* per slot: sq_head at the time of posting */
	pthread_spinlock_t sq_lock, rq_lock;
	int sq_sig_all;
	uint32_t async_events_read; /* events ibv_get_async_event returned for it (events.c) */
	/* extended post API (post_ex.c), all under sq_lock between wr_start
	 * and wr_complete / wr_abort */
	uint64_t send_ops;         /* IBV_QP_EX_WITH_* the QP was created with */
	uint32_t ex_nreq;          /* WQEs built since wr_start */
	int ex_err;                /* first error of the batch, returned by wr_complete */
	struct uroce_send_wqe *ex_cur; /* WQE the setters fill; NULL when none */
	bool ex_need_ah;           /* UD WQE still without wr_set_ud_addr */
	/* a striding RQ (urocedv_create_wq): log2 strides per WQE (0: none)
	 * and log2 stride bytes; its WQE retires with its last stride */
	uint8_t log_num_strides, log_stride_bytes;
	bool opened;               /* ibv_open_qp (import.c): a handle, not the QP */
};

/*
 * A basic SRQ (srq.c): its ring in a sealed memfd (abi_ring.h "SRQ ring")
 * and, per tag 0..max_wr-1, the wr_id of the WQE holding it.
 *   free_tags/nfree  stack of tags not held by a posted, unpolled WQE
 *   head             free-running producer index of the ring
 */
struct uroce_srq {
	struct verbs_srq vsrq;
	uint32_t handle;
	uint32_t max_wr, max_sge; /* max_wr a power of two */
	uint32_t stride;
	uint64_t ring_size;
	int ring_fd;
	void *ring;
	uint64_t *wrid;
	uint32_t *free_tags;
	uint32_t nfree;
	uint32_t head;
	pthread_spinlock_t lock;
	uint32_t async_events_read; /* events ibv_get_async_event returned for it */
	struct uroce_tm *tm;        /* tag-matching SRQ (tm.c), else NULL */
};

static inline struct uroce_context *to_uctx(struct ibv_context *ctx)
{
	return uroce_container_of(ctx, struct uroce_context, vctx.context);
}
static inline struct uroce_pd *to_upd(struct ibv_pd *pd)
{
	return uroce_container_of(pd, struct uroce_pd, ibv_pd);
}
static inline struct uroce_cq *to_ucq(struct ibv_cq *cq)
{
	return uroce_container_of(cq, struct uroce_cq, vcq.cq);
}
static inline struct uroce_cq *to_ucq_ex(struct ibv_cq_ex *cq)
{
	return uroce_container_of(cq, struct uroce_cq, vcq.cq_ex);
}
static inline struct uroce_qp *to_uqp(struct ibv_qp *qp)
{
	return uroce_container_of(qp, struct uroce_qp, vqp.qp);
}
static inline struct uroce_srq *to_usrq(struct ibv_srq *srq)
{
	return uroce_container_of(srq, struct uroce_srq, vsrq.srq);
}
static inline struct uroce_ah *to_uah(struct ibv_ah *ah)
{
	return uroce_container_of(ah, struct uroce_ah, ibv_ah);
}

/* ctl.c */

/*
 * One request/reply exchange with the daemon (abi.h "Transport").
 *   req/req_len    request with room for the header; the header is filled
 *                  here (magic, version, opcode, seq, length)
 *   fds/nfds       descriptors to pass with SCM_RIGHTS (0..UROCE_MSG_MAX_FDS)
 *   resp/resp_len  reply buffer of exactly uroce_resp_size(opcode) bytes
 *   rfds/nrfds     in: room for received descriptors; out: how many arrived
 *                  (may be NULL when none are expected: extras are closed)
 * Returns 0, the daemon's positive errno, EIO when the daemon is gone (also
 * after DEVICE_FATAL) or sent a malformed reply (message on stderr), or
 * ETIMEDOUT when no reply came within UROCE_CTL_TIMEOUT_MS (a stopped
 * daemon; the late reply is discarded by the next call).
 */
int uroce_ctl_call(struct uroce_context *ctx, unsigned int opcode,
		   void *req, size_t req_len, const int *fds, int nfds,
		   void *resp, size_t resp_len, int *rfds, int *nrfds);

/* Default bound of one control request (ms); UROCE_CTL_TIMEOUT_MS overrides it. */
#define UROCE_CTL_TIMEOUT_DEFAULT_MS 10000

/*
 * Whether a destroy may complete locally after uroce_ctl_call returned err:
 * the daemon is gone or the device is dead (EIO), and the object went with
 * it (rdma-core treats EIO from a destroy command the same way).
 */
static inline bool uroce_daemon_gone(int err)
{
	return err == EIO;
}

/*
 * Destroys the daemon object `handle` with a request whose reply is a plain
 * struct uroce_handle_resp (DEALLOC_PD, DEREG_MR, DESTROY_AH, DESTROY_WQ,
 * DESTROY_FLOW, CLOSE_XRCD, ...).
 * Returns 0 when the object is gone (destroyed, or the daemon is gone) or the
 * daemon's errno (EBUSY, EINVAL): then the caller keeps its object.
 */
static inline int uroce_ctl_destroy(struct uroce_context *ctx, unsigned int opcode,
				    uint32_t handle)
{
	struct uroce_handle_req req = { .handle = handle };
	struct uroce_handle_resp resp;
	int ret = uroce_ctl_call(ctx, opcode, &req, sizeof(req), NULL, 0,
				 &resp, sizeof(resp), NULL, NULL);

	return uroce_daemon_gone(ret) ? 0 : ret;
}

/* Connects to the daemon socket at path; returns the fd or -1 with errno. */
int uroce_ctl_connect(const char *path);

/* Maps and initialises ctx->ctl (struct uroce_ctl_shared): 0 or an errno. */
int uroce_ctl_shared_init(struct uroce_context *ctx);

/* Unmaps ctx->ctl (this process's mapping; a fork child's stays). */
void uroce_ctl_shared_free(struct uroce_context *ctx);

/* context.c */
extern const struct verbs_context_ops uroce_ctx_ops;
extern const struct verbs_context_ops uroce_post_ops;

/* query.c */
int uroce_query_device_ex(struct ibv_context *context,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size);
int uroce_query_port(struct ibv_context *context, uint8_t port_num,
		     struct ibv_port_attr *port_attr);
int uroce_query_rt_values(struct ibv_context *context, struct ibv_values_ex *values);

/* dm.c (device memory) */
struct ibv_dm *uroce_alloc_dm(struct ibv_context *context, struct ibv_alloc_dm_attr *attr);
int uroce_free_dm(struct ibv_dm *dm);
/* Shared contexts (import.c, dm.c; uroce/abi_share.h). */
struct verbs_context *uroce_open_context(struct ibv_device *ibdev, int cmd_fd, bool import);
struct verbs_context *uroce_import_context(struct ibv_device *ibdev, int cmd_fd);
/* IMPORT_CONTEXT of cmd_fd, then arms the ioctl hook to return async_fd. */
int uroce_import_attach(struct uroce_context *ctx, int cmd_fd, int async_fd);
int uroce_import_obj(struct ibv_context *context, uint32_t type, uint32_t handle,
		     struct uroce_import_obj_resp *resp, int *rfd, int *nrfd);
void uroce_unimport_obj(struct ibv_context *context, uint32_t type, uint32_t handle);
struct ibv_pd *uroce_import_pd(struct ibv_context *context, uint32_t pd_handle);
void uroce_unimport_pd(struct ibv_pd *pd);
struct ibv_mr *uroce_import_mr(struct ibv_pd *pd, uint32_t mr_handle);
void uroce_unimport_mr(struct ibv_mr *mr);
struct ibv_dm *uroce_import_dm(struct ibv_context *context, uint32_t dm_handle);
void uroce_unimport_dm(struct ibv_dm *dm);
struct ibv_qp *uroce_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *attr);
/* ibv_destroy_qp of an opened QP (open_qp.c): gives the handle back; 0, or
 * the errno of UNIMPORT_OBJ other than EINVAL (the QP already gone). */
int uroce_close_opened_qp(struct uroce_qp *qp);
struct ibv_mr *uroce_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t dm_offset, size_t length,
			       unsigned int access);

/* pd_mr.c */
struct ibv_pd *uroce_alloc_pd(struct ibv_context *context);
int uroce_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *uroce_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			    uint64_t hca_va, int access);
int uroce_dereg_mr(struct verbs_mr *vmr);
int uroce_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr,
		   size_t length, int access);
struct ibv_pd *uroce_alloc_parent_domain(struct ibv_context *context,
					 struct ibv_parent_domain_init_attr *attr);
int uroce_dealloc_parent_domain(struct uroce_pd *pdom);
struct ibv_td *uroce_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr);
int uroce_dealloc_td(struct ibv_td *td);
/*
 * Maps ring memfd FD (SIZE bytes) read-write shared for a queue of RES_TYPE
 * created on PD (NULL: none). On a parent domain with an allocator the ring
 * lies in memory the allocator gave (page aligned, SIZE rounded up to pages;
 * IBV_ALLOCATOR_USE_DEFAULT, or memory a memfd cannot be mapped over, such
 * as hugetlbfs pages: our own mapping). Returns the mapping or MAP_FAILED
 * with errno (ENOMEM: the allocator returned NULL; EINVAL: its memory is
 * not page aligned).
 */
void *uroce_ring_map(struct ibv_pd *pd, int fd, size_t size, uint64_t res_type);
/* Undoes uroce_ring_map: the allocator's memory goes back to it as plain
 * private memory through its free callback. */
void uroce_ring_unmap(void *ring, size_t size);
int uroce_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
		    struct ibv_sge *sg_list, uint32_t num_sge);

/* cq.c */
struct ibv_cq *uroce_create_cq(struct ibv_context *context, int cqe,
			       struct ibv_comp_channel *channel, int comp_vector);
struct ibv_cq_ex *uroce_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr);
int uroce_destroy_cq(struct ibv_cq *cq);
int uroce_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int uroce_resize_cq(struct ibv_cq *cq, int cqe);
/* Drops the unpolled CQEs of QP number qpn (QP to RESET, as mlx5). */
/* Enter a newly created QP in the QP table, undoing it on ENOMEM (qp.c). */
int uroce_qp_publish(struct uroce_context *ctx, struct uroce_qp *qp);
void uroce_cq_clean(struct uroce_cq *cq, uint32_t qpn);
/* Clears the CQ's QP cache if it names qp (before qp is freed). */
void uroce_cq_forget_qp(struct uroce_cq *cq, const struct uroce_qp *qp);
int uroce_modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
void uroce_cq_event(struct ibv_cq *cq);
/* Whether the CQE at the consumer index belongs to software (cq_poll.c). */
bool uroce_cq_has_cqe(struct uroce_cq *cq);

/* device.c: whether dev is one of this provider's devices */
bool uroce_is_device(struct ibv_device *dev);

/* cq_poll.c */
int uroce_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
void uroce_cq_fill_ex_ops(struct uroce_cq *cq);

/* The provider is built with hidden visibility: this marks the functions of
 * <infiniband/urocedv.h> it exports (provider/urocedv.map). */
#define UROCE_DV_EXPORT __attribute__((visibility("default")))

/* dv_wc.c: gives cq (extended, wc_flags within UROCEDV_WC_FIELDS) the custom-WC
 * layout of its wc_flags and the poll urocedv_poll_cq_wc calls. */
void uroce_dv_wc_setup(struct uroce_cq *cq);

/* qp.c */
struct ibv_qp *uroce_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_flow *uroce_create_flow(struct ibv_qp *qp, struct ibv_flow_attr *attr);
/* Ring memfd, mapping and wr_id arrays of QP for its rounded caps (0 or
 * errno); uroce_qp_release frees what QP owns, not QP (qp.c). */
int uroce_qp_alloc_rings(struct uroce_qp *qp, struct ibv_pd *pd);
void uroce_qp_release(struct uroce_qp *qp);
/* wq.c: receive WQs, indirection tables, RSS QPs (docs/raw-packet.md). */
struct ibv_qp *uroce_create_rss_qp(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr);
struct ibv_wq *uroce_create_wq(struct ibv_context *context, struct ibv_wq_init_attr *attr);
/* A striding RQ's shape (urocedv_create_wq, log2 values). */
struct uroce_wq_striding {
	uint32_t log_num_strides, log_stride_bytes, two_byte_shift;
};
struct ibv_wq *uroce_create_wq_striding(struct ibv_context *context, struct ibv_wq_init_attr *attr,
					const struct uroce_wq_striding *striding);
int uroce_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr);
int uroce_destroy_wq(struct ibv_wq *wq);
struct ibv_rwq_ind_table *uroce_create_rwq_ind_table(struct ibv_context *context,
						     struct ibv_rwq_ind_table_init_attr *attr);
int uroce_destroy_rwq_ind_table(struct ibv_rwq_ind_table *table);
int uroce_destroy_flow(struct ibv_flow *flow);
struct ibv_counters *uroce_create_counters(struct ibv_context *context, struct ibv_counters_init_attr *attr);
int uroce_attach_counters_point_flow(struct ibv_counters *counters, struct ibv_counter_attach_attr *attr,
				     struct ibv_flow *flow);
int uroce_read_counters(struct ibv_counters *counters, uint64_t *values, uint32_t ncounters, uint32_t flags);
int uroce_destroy_counters(struct ibv_counters *counters);
struct ibv_qp *uroce_create_qp_ex(struct ibv_context *context,
				  struct ibv_qp_init_attr_ex *attr);
int uroce_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
int uroce_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		   struct ibv_qp_init_attr *init_attr);
int uroce_destroy_qp(struct ibv_qp *qp);
struct uroce_qp *uroce_find_qp(struct uroce_context *ctx, uint32_t qpn);
int uroce_qp_table_insert(struct uroce_context *ctx, struct uroce_qp *qp);
void uroce_qp_table_remove(struct uroce_context *ctx, struct uroce_qp *qp);
void uroce_qp_table_free(struct uroce_context *ctx);

/* post.c */
int uroce_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
/* ibv_post_send with WQE_FLAGS (UROCE_WQE_*) added to every WQE (mw.c's
 * bind_mw: UROCE_WQE_BIND_TYPE1). Same returns as uroce_post_send. */
int uroce_post_send_flags(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr,
			  uint8_t wqe_flags);

/* Memory windows (mw.c). */
struct ibv_mw *uroce_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int uroce_dealloc_mw(struct ibv_mw *mw);
int uroce_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);

int uroce_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);

/*
 * The send WQE rules both post APIs share (ibv_post_send(3), ibv_wr_post(3)):
 * NUM_SGE SGEs (or, INL, inline payload) of TOTAL bytes for OPCODE (enum
 * ibv_wr_opcode). Returns 0 or EINVAL: more SGEs than max_send_sge, over
 * 2^31 bytes (IBTA message size), inline over max_inline_data, inline
 * with RDMA READ or an atomic, an atomic whose local data is not one SGE
 * of exactly 8 bytes (docs/transport.md "Atomics").
 */
int uroce_send_wqe_check(const struct uroce_qp *qp, int opcode, bool inl, uint64_t num_sge,
			 uint64_t total);
/* The SQ slot of WQE number N, or NULL while the SQ holds max_send_wr WQEs
 * not yet retired (the caller holds sq_lock). */
struct uroce_send_wqe *uroce_sq_slot_get(struct uroce_qp *qp, uint32_t n);
/* Zeroes W and sets its header for WQE number N: OPCODE, wqe_index and the
 * SIGNALED/SOLICITED/FENCE bits of SEND_FLAGS (enum ibv_send_flags);
 * records WR_ID for the completion. */
void uroce_send_wqe_init(struct uroce_qp *qp, struct uroce_send_wqe *w, int opcode,
			 unsigned int send_flags, uint32_t n, uint64_t wr_id);
/* Writes N SGEs into W (no inline flag) with byte_len their sum. */
void uroce_send_wqe_set_sges(struct uroce_send_wqe *w, const struct ibv_sge *sg, size_t n);
/* The TSO part of W (abi_ring.h): HDR_SZ bytes of HDR into the slot, MSS.
 * EINVAL for a header under 18 bytes or over the QP's max_tso_header (as
 * mlx5's set_tso_eth_seg), or MSS 0 (post.c). */
int uroce_tso_wqe_set(struct uroce_qp *qp, struct uroce_send_wqe *w, const void *hdr, uint16_t hdr_sz,
		      uint16_t mss);
/* Whether the QP can post sends: 0, EINVAL (RESET, INIT, RTR), EIO (daemon gone). */
int uroce_post_send_state(struct ibv_qp *qp);
/* Publishes NREQ more SQ WQEs (release store of sq_pi) and rings the doorbell once. */
void uroce_sq_ring_doorbell(struct uroce_qp *qp, uint32_t nreq);

/* post_ex.c */

/*
 * Checks SEND_OPS (IBV_QP_EX_WITH_*) against what a QP of TYPE can carry
 * (ibv_create_qp_ex(3)). Returns 0, or EOPNOTSUPP with a message on stderr:
 * an op the type cannot carry, TSO, ATOMIC_WRITE or FLUSH without the
 * builder in this build's verbs.h (post_ex.c), unknown bits.
 */
int uroce_qp_ex_check_ops(enum ibv_qp_type type, uint64_t send_ops);
/* Installs the ibv_qp_ex post API (wr_start ... wr_abort) on QP. */
void uroce_qp_ex_init(struct uroce_qp *qp, uint64_t send_ops);

/* srq.c */
struct ibv_srq *uroce_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
struct ibv_srq *uroce_create_srq_ex(struct ibv_context *context,
				    struct ibv_srq_init_attr_ex *attr);
int uroce_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int attr_mask);
int uroce_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int uroce_destroy_srq(struct ibv_srq *srq);
int uroce_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
int uroce_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);
/* xrc.c */
struct ibv_xrcd *uroce_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *attr);
int uroce_close_xrcd(struct ibv_xrcd *xrcd);
struct ibv_qp *uroce_create_xrc_recv_qp(struct ibv_context *context,
					struct ibv_qp_init_attr_ex *attr);
void uroce_xrc_send_attr(struct ibv_qp_init_attr_ex *attr, struct ibv_cq **rcq,
			 struct ibv_srq **srq);
/* The wr_id of the SRQ WQE with TAG (a CQE's wqe_counter), freeing the
 * tag for the next post (cq_poll.c). 0 for a tag out of range. */
uint64_t uroce_srq_complete(struct uroce_srq *srq, uint16_t tag);
/* tm.c: tag matching (docs/tag-matching.md) */
int uroce_tm_init(struct uroce_srq *srq, uint32_t max_num_tags, uint32_t max_ops);
void uroce_tm_release(struct uroce_srq *srq);
struct uroce_create_srq_resp;
int uroce_tm_srq_call(struct uroce_context *ctx, struct uroce_srq *srq, struct ibv_pd *pd,
		      struct ibv_cq *cq, struct uroce_create_srq_resp *resp);
int uroce_post_srq_ops(struct ibv_srq *ibsrq, struct ibv_ops_wr *wr, struct ibv_ops_wr **bad_wr);
uint64_t uroce_tm_retire(struct uroce_srq *srq, const struct mlx5_cqe64 *cqe,
			 enum ibv_wc_status *status, bool *sync_req);
/* The SRQ of this context with number srqn, or NULL (no lock taken). */
struct uroce_srq *uroce_find_srq(struct uroce_context *ctx, uint32_t srqn);

/* events.c */

/* Counts an event ibv_get_async_event returned against its CQ or QP (async_event op). */
void uroce_event_async_read(struct ibv_async_event *ev);

/*
 * Keeps obj (a destroyed struct uroce_cq / uroce_qp / uroce_srq) allocated until the
 * context closes, because an unread async event names it. Returns false
 * (nothing kept) without memory.
 */
bool uroce_event_keep(struct uroce_context *ctx, void *obj);

/* Frees the kept objects (context teardown). */
void uroce_event_free_kept(struct uroce_context *ctx);

/* ah.c */
struct ibv_ah *uroce_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int uroce_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
int uroce_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
int uroce_destroy_ah(struct ibv_ah *ah);

/* Sets errno and returns NULL: the create ops' error convention. */
/*
 * uroce_recv_wqe_fill - write receive WR into the ring slot W (a QP's RQ or
 * an SRQ; layout in uroce/abi_ring.h): header with INDEX (the RQ position,
 * or the SRQ tag the CQE returns) and the SGE count, then the SGEs. The
 * caller has checked num_sge against the queue's max_sge.
 */
static inline void uroce_recv_wqe_fill(struct uroce_recv_wqe *w, uint16_t index,
				       const struct ibv_recv_wr *wr)
{
	struct uroce_sge *sge = (struct uroce_sge *)(w + 1);

	memset(w, 0, sizeof(*w));
	w->wqe_index = index;
	w->num_sge = (uint8_t)wr->num_sge;
	for (int i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
}

static inline void *uroce_fail_null(int err)
{
	errno = err;
	return NULL;
}

#endif
