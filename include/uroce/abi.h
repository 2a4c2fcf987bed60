/*
 * uroce provider <-> daemon contract: control messages and the CQ ring here;
 * the HCA clock page in uroce/abi_clock.h, the SQ/RQ rings and the WQE format
 * in uroce/abi_ring.h, REREG_MR / RESIZE_CQ / MODIFY_CQ / ADVISE_MR in
 * uroce/abi_cq_mr.h, the admin messages in uroce/abi_admin.h, flow steering
 * in uroce/abi_flow.h (all included below).
 *
 * Both liburoce-rdmav<PABI>.so (the provider, "driver") and uroced (the daemon, "NIC")
 * include this header; nothing else crosses the boundary. Every type that
 * rdma-core's installed headers define (struct ibv_qp_attr, struct mlx5_cqe64,
 * struct ib_uverbs_async_event_desc, ...) is used from those headers, never copied.
 *
 * Transport: one AF_UNIX SOCK_SEQPACKET connection per ibv_context to the socket
 * named in sysfs class/infiniband/NAME/uroce_socket. Each request is ONE datagram
 * of exactly uroce_req_size(opcode) bytes; each reply is ONE datagram of exactly
 * uroce_resp_size(opcode) bytes. File descriptors travel with SCM_RIGHTS on the
 * same datagram. Requests are strictly request/reply (the provider sends one
 * request and waits for its reply); the daemon never sends unsolicited messages
 * on this socket (events go to the async_fd and completion-channel sockets).
 * The daemon identifies the peer with SO_PEERCRED (pid, uid) at accept time.
 *
 * Versioning: UROCE_ABI_VERSION changes whenever any layout below changes; a
 * HELLO with another version gets EPROTONOSUPPORT. Layouts are native-endian
 * (provider and daemon always run on the same host) unless a field says "big-endian".
 */
#ifndef UROCE_ABI_H
#define UROCE_ABI_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>
#include <rdma/ib_user_verbs.h>

#define UROCE_ABI_VERSION 8
#define UROCE_MSG_MAGIC 0x55524f43u /* "UROC" */

/* Largest datagram either side ever sends; receivers use a buffer of this size
 * and treat MSG_TRUNC as "oversized" (EMSGSIZE). */
#define UROCE_MSG_MAX 1024
/* Most descriptors one message carries (HELLO: async_fd peer, /proc/self/mem,
 * /proc/self/maps). */
#define UROCE_MSG_MAX_FDS 3

/*
 * Operation codes. Values are stable within one UROCE_ABI_VERSION.
 * "fds" lists the SCM_RIGHTS descriptors, in order; a message with a missing
 * required descriptor gets EBADF, one with unexpected descriptors gets EINVAL
 * (and they are closed).
 */
enum uroce_op {
	UROCE_OP_INVALID = 0,      /* used in replies to datagrams too short to hold a header */
	UROCE_OP_HELLO = 1,        /* fds: [async_fd peer end(, /proc/self/mem, /proc/self/maps)]
				    * reply fds: [clock memfd, doorbell eventfd] */
	UROCE_OP_QUERY_PORT = 2,
	UROCE_OP_ALLOC_PD = 3,
	UROCE_OP_DEALLOC_PD = 4,
	UROCE_OP_REG_MR = 5,
	UROCE_OP_DEREG_MR = 6,
	UROCE_OP_CREATE_CQ = 7,    /* fds: [ring memfd] or [ring memfd, comp channel fd] */
	UROCE_OP_DESTROY_CQ = 8,
	UROCE_OP_CREATE_QP = 9,    /* fds: [] or [QP ring memfd] (required for traffic) */
	UROCE_OP_MODIFY_QP = 10,
	UROCE_OP_QUERY_QP = 11,
	UROCE_OP_DESTROY_QP = 12,
	UROCE_OP_CREATE_AH = 13,
	UROCE_OP_DESTROY_AH = 14,
	UROCE_OP_CREATE_SRQ = 15,  /* fds: [SRQ ring memfd] */
	UROCE_OP_MODIFY_SRQ = 16,
	UROCE_OP_QUERY_SRQ = 17,
	UROCE_OP_DESTROY_SRQ = 18,
	UROCE_OP_ALLOC_MW = 19,
	UROCE_OP_DEALLOC_MW = 20,
	UROCE_OP_REREG_MR = 21,
	UROCE_OP_RESIZE_CQ = 22,   /* fds: [new ring memfd] */
	UROCE_OP_MODIFY_CQ = 23,
	UROCE_OP_ADVISE_MR = 26,
	UROCE_OP_ATTACH_MCAST = 27,
	UROCE_OP_DETACH_MCAST = 28,
	UROCE_OP_OPEN_XRCD = 29,   /* fds: [] (a private XRCD) or [the file naming a shared one] */
	UROCE_OP_CLOSE_XRCD = 30,
	UROCE_OP_CREATE_XRC_SRQ = 31, /* fds: [SRQ ring memfd] (uroce/abi_xrc.h) */
	UROCE_OP_CREATE_XRC_QP = 32,  /* an XRC_RECV QP (uroce/abi_xrc.h) */
	/* 33, 37-39, 44: shared contexts, OPEN_QP (abi_share.h); 34, 35: tag matching (abi_tm.h) */
	/* The connection manager (uroce/abi_cm.h): a CM connection's first
	 * message, then one rdma_ucm command each. */
	UROCE_OP_CM_HELLO = 40,    /* fds: [the daemon's end of the event socket] */
	UROCE_OP_UCMA = 41,
	/* Raw packet QPs: flow steering, WQs, RSS (uroce/abi_flow.h). */
	UROCE_OP_CREATE_FLOW = 48,
	UROCE_OP_DESTROY_FLOW = 49,
	UROCE_OP_CREATE_WQ = 50,   /* fds: [WQ ring memfd] */
	UROCE_OP_MODIFY_WQ = 51,
	UROCE_OP_DESTROY_WQ = 52,
	UROCE_OP_CREATE_RWQ_IND_TABLE = 53,
	UROCE_OP_DESTROY_RWQ_IND_TABLE = 54,
	UROCE_OP_CREATE_RSS_QP = 55,
	UROCE_OP_CREATE_COUNTERS = 56,
	UROCE_OP_DESTROY_COUNTERS = 57,
	UROCE_OP_READ_COUNTERS = 58,
	/* Administration (`uroced --admin`); only the daemon's uid or root (EPERM
	 * otherwise). An admin connection sends no HELLO. */
	UROCE_OP_ADMIN_STATUS = 64, /* reply fds: [memfd holding the status text] */
	UROCE_OP_ADMIN_LINK = 65,
	UROCE_OP_ADMIN_CAPTURE_START = 66, /* fds: [writable fd of the pcap file, opened by the admin] */
	UROCE_OP_ADMIN_CAPTURE_STOP = 67,
	UROCE_OP_ADMIN_SHUTDOWN = 68,
	UROCE_OP_ADMIN_FAULT = 69,
	UROCE_OP_ALLOC_DM = 70,    /* reply fds: [device memory memfd] (uroce/abi_dm.h) */
	UROCE_OP_FREE_DM = 71,
	UROCE_OP_REG_DM_MR = 72,
	UROCE_OP_MAX
};

/*
 * Common header of every request and reply (24 bytes).
 *   magic   UROCE_MSG_MAGIC, else the reply status is EPROTO.
 *   version UROCE_ABI_VERSION, else EPROTONOSUPPORT.
 *   opcode  enum uroce_op; unknown values get EOPNOTSUPP. The reply echoes it.
 *   seq     chosen by the provider, echoed in the reply.
 *   length  total datagram bytes including this header; must equal both the
 *           received size and uroce_req_size(opcode), else EMSGSIZE.
 *   status  requests: 0. Replies: 0 on success or a POSITIVE errno; on error
 *           the reply body is all zero and carries no descriptors.
 *
 * Errors common to every opcode (the per-opcode comments list the others):
 *   EBADMSG          datagram shorter than this header (reply opcode INVALID)
 *   EPROTO           bad magic; or a non-admin request before HELLO
 *   EPROTONOSUPPORT  version mismatch
 *   EOPNOTSUPP       unknown opcode
 *   EMSGSIZE         length field / datagram size / fixed size disagree, or truncated
 *   EBADF            a required descriptor is missing or is not the right kind of file
 *   EINVAL           unexpected descriptors; a handle that is not this client's live
 *                    object of the right type (as the kernel's uverbs answers); a
 *                    reserved field not zero; a value out of range
 *   EPERM            admin opcode from a uid that is neither the daemon's nor root
 */
struct uroce_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t opcode;
	uint32_t seq;
	uint32_t length;
	int32_t status;
	uint32_t reserved;
};

/* ------------------------------------------------------------------ HELLO */

/*
 * HELLO: first message of a verbs connection (any other first opcode: EPROTO;
 * a second HELLO: EALREADY).
 *   abi_version  UROCE_ABI_VERSION (also in the header; both must match)
 *   pid          the provider's getpid(); must equal SO_PEERCRED's pid (EPERM
 *                otherwise) so one process cannot register for another
 *   fds          [0] the peer end of the provider's async_fd socketpair
 *                (SOCK_SEQPACKET). The daemon writes 16-byte struct
 *                ib_uverbs_async_event_desc records to it with MSG_DONTWAIT:
 *                element = user handle of the QP/CQ (struct ibv_qp * / ibv_cq *
 *                as given at create time) or the port number (1) for port
 *                events; event_type = enum ibv_event_type.
 *                [1] /proc/self/mem opened O_RDWR by the provider, [2]
 *                /proc/self/maps opened O_RDONLY; both or neither (a
 *                process without /proc: REG_MR then fails with EFAULT; one of
 *                the two: EBADF). The daemon reaches
 *                registered memory only through [1] and checks REG_MR ranges
 *                only through [2]; it never opens another process's /proc
 *                files. Both stay bound to the address space they were opened
 *                in (proc(5) /proc/pid/mem: the mm is taken at open), so after
 *                the process execs or exits every access through them fails:
 *                access never exceeds what the process itself could do, and
 *                never reaches a later (e.g. setuid) image. See docs/security.md.
 * Errors: EALREADY (second HELLO); EPROTONOSUPPORT (abi_version); EPERM (pid
 * mismatch, or [1]/[2] are not /proc/PID/mem and /proc/PID/maps of the
 * connecting pid); EBADF ([0] not a socket, [1]/[2] not procfs files of the
 * right kind, [1] not open for reading and writing); ESRCH (the address space
 * of [1]/[2] is gone: the process exec'd or exited since it opened them);
 * EMFILE (the uid has its --max-clients-per-user connections, or the daemon's
 * descriptor budget for unprivileged users is used up; the connection is
 * closed after this reply).
 */
struct uroce_hello_req {
	struct uroce_hdr hdr;
	uint32_t abi_version;
	uint32_t pid;
	uint64_t reserved;
};

/*
 * HELLO reply: everything query_device(_ex) / query_port need, so those ops
 * never round-trip except QUERY_PORT (port state changes with `link down`).
 *   dev            struct ibv_device_attr as ibv_query_device returns it:
 *                  fw_ver "0.1.0", node_guid / sys_image_guid (big-endian as
 *                  verbs keeps them; value from uroce_node_guid()), vendor_id
 *                  UROCE_VENDOR_ID, vendor_part_id UROCE_VENDOR_PART_ID, limits
 *                  (max_qp, max_qp_wr, max_sge, max_cqe, max_mr_size,
 *                  max_qp_rd_atom >= 1, ...), phys_port_cnt 1. (num_comp_vectors
 *                  is a context field the provider sets: number of CPUs.)
 *   port           struct ibv_port_attr of port 1 at HELLO time: state
 *                  PORT_ACTIVE/PORT_DOWN, max_mtu IBV_MTU_4096, active_mtu from
 *                  --mtu, gid_tbl_len from --gid-tbl-len, link_layer Ethernet.
 *   max_inline_data     bytes of inline data one send WQE may carry (> 0)
 *   hca_core_clock_khz  = clock page freq_khz (ibv_device_attr_ex.hca_core_clock, kHz)
 *   timestamp_mask      = clock page mask (completion_timestamp_mask)
 *   daemon_pid     the daemon's pid (informational: shown in logs)
 *   client_id      the daemon's id of this connection (shown by `status`)
 *   gid_tbl_len    = port.gid_tbl_len
 *   udp_port       UDP port the device's socket is bound to (host order)
 *   addr_family    AF_INET or AF_INET6; addr = the address, IPv4 as ::ffff:a.b.c.d
 *   dev_name       NUL-terminated device name ("uroce0")
 *   caps           UROCE_HELLO_CAP_* bits (see below)
 *   fds            [0] clock page memfd: UROCE_CLOCK_PAGE_SIZE bytes, map it
 *                  PROT_READ, MAP_SHARED (struct uroce_clock_page);
 *                  [1] the context's doorbell eventfd: the provider writes 1 to it
 *                  (eventfd_write) after publishing new WQEs or a new CQ
 *                  arm word (see the CQ ring). Both are the daemon's; the
 *                  provider closes its copies at free_context.
 * Errors: see the request above; ENOMEM (daemon out of memory).
 */
struct uroce_hello_resp {
	struct uroce_hdr hdr;
	struct ibv_device_attr dev;
	struct ibv_port_attr port;
	uint32_t max_inline_data;
	uint32_t daemon_pid;
	uint64_t hca_core_clock_khz;
	uint64_t timestamp_mask;
	uint32_t client_id;
	uint32_t gid_tbl_len;
	uint16_t udp_port;
	uint16_t addr_family;
	uint32_t caps; /* UROCE_HELLO_CAP_* (was reserved: 0 = none) */
	uint8_t addr[16];
	char dev_name[64];
};

/*
 * HELLO reply caps: what this daemon executes. UROCE_HELLO_CAP_WQE_RINGS: on a
 * doorbell the daemon reads the QP SQ/RQ rings (below) and executes the WQEs.
 * Without it the provider answers ibv_post_send / ibv_post_recv with EOPNOTSUPP
 * instead of queueing work nobody would run.
 */
#define UROCE_HELLO_CAP_WQE_RINGS 0x1u

/* Identity (docs/clients.md §0 item 6): OUI with the locally-administered bit set
 * (first octet 0x02), so it can never be assigned to a real vendor. */
#define UROCE_VENDOR_ID 0x02c0deu
#define UROCE_VENDOR_PART_ID 0x0001u

/*
 * Node GUID (host-order value; verbs stores it big-endian): the EUI-64 of the
 * locally-administered MAC 02:00:a:b:c:d made from the last four bytes of the
 * device address (the IPv4 address for IPv4): 02 00 a ff fe b c d.
 * 127.0.0.1 → 0x02007ffffe000001, sysfs "0200:7fff:fe00:0001". `uroce up` writes
 * the same value to sysfs node_guid and sys_image_guid.
 */
static inline uint64_t uroce_node_guid(const uint8_t addr_last4[4])
{
	return (uint64_t)0x02 << 56 | (uint64_t)0x00 << 48 | (uint64_t)addr_last4[0] << 40 |
	       (uint64_t)0xff << 32 | (uint64_t)0xfe << 24 | (uint64_t)addr_last4[1] << 16 |
	       (uint64_t)addr_last4[2] << 8 | (uint64_t)addr_last4[3];
}

/* ------------------------------------------------------------ QUERY_PORT */

/* QUERY_PORT: port_num must be 1 (EINVAL). Reply: the current struct
 * ibv_port_attr (state follows `uroced --admin S link up|down`). */
struct uroce_query_port_req {
	struct uroce_hdr hdr;
	uint32_t port_num;
	uint32_t reserved;
};
struct uroce_query_port_resp {
	struct uroce_hdr hdr;
	struct ibv_port_attr port;
};

/* ------------------------------------------------------------- PD and MR */

/* Generic "one handle" request / reply used by ALLOC_PD (request handle 0),
 * DEALLOC_PD, DEREG_MR, DEALLOC_MW and DESTROY_AH.
 *   handle  the daemon's handle (uint32, unique per client and object type, never 0)
 * DEALLOC_PD errors: EINVAL (bad handle), EBUSY (MRs, MWs, QPs or AHs still use the PD).
 * ALLOC_PD errors: ENOMEM (max_pd reached for the device, or the uid's PD
 * quota; docs/security.md). */
struct uroce_handle_req {
	struct uroce_hdr hdr;
	uint32_t handle;
	uint32_t reserved;
};
struct uroce_handle_resp {
	struct uroce_hdr hdr;
	uint32_t handle;
	uint32_t reserved;
};

/*
 * REG_MR: register [addr, addr+length) of the client's address space.
 *   pd_handle  PD of this client
 *   addr       virtual address in the client process (bytes)
 *   length     bytes, 1 .. dev.max_mr_size; addr+length must not wrap (EINVAL)
 *   access     enum ibv_access_flags. REMOTE_WRITE or REMOTE_ATOMIC without
 *              LOCAL_WRITE → EINVAL (IBTA §10.6.3.1, as the kernel checks);
 *              IBV_ACCESS_MW_BIND lets memory windows be bound to the MR;
 *              ZERO_BASED → EOPNOTSUPP; HUGETLB only with ON_DEMAND on an
 *              explicit range (ibv_reg_mr(3)), else EOPNOTSUPP;
 *              FLUSH_GLOBAL (1 << 8) or FLUSH_PERSISTENT (1 << 9) →
 *              EOPNOTSUPP once the EINVAL checks pass (no FLUSH, as mlx5);
 *              optional-range bits (RELAXED_ORDERING) accepted and ignored;
 *              any other unknown bit → EINVAL.
 *              IBV_ACCESS_ON_DEMAND (on-demand paging): the range need not be
 *              mapped now; every access checks the mapping and its
 *              protection at that moment (a failure is a data-path access
 *              error). addr 0 with length UINT64_MAX and ON_DEMAND is an
 *              implicit ODP MR: the whole address space (ibv_reg_mr(3)).
 * Reply: handle, lkey, rkey. Keys are index<<8 | variant (index 1..2^24-1,
 * unique per device; variant 8 bits, random per index and advanced by a random
 * odd stride each time the index is reused), lkey == rkey, so lkey+1 / rkey+1
 * never name a live MR. ENOMEM when max_mr or the uid's MR quota is reached. EFAULT (as the kernel's ib_umem_get) when part of the range is not
 * mapped in the client (NULL included), not readable (PROT_NONE), or not
 * writable while LOCAL_WRITE / REMOTE_WRITE / REMOTE_ATOMIC is asked for;
 * the check reads /proc/PID/maps and one byte. The memory is not pinned.
 */
struct uroce_reg_mr_req {
	struct uroce_hdr hdr;
	uint32_t pd_handle;
	uint32_t access;
	uint64_t addr;
	uint64_t length;
};
struct uroce_reg_mr_resp {
	struct uroce_hdr hdr;
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t reserved;
};

/*
 * ALLOC_MW: a memory window (IBTA 10.6.7; ibv_alloc_mw(3)).
 *   pd_handle  PD of this client
 *   type       IBV_MW_TYPE_1 or IBV_MW_TYPE_2 (type 2 is IBTA's type 2B:
 *              bound to one QP); any other value: EINVAL
 *   reserved   0
 * Reply: handle, rkey (index<<8 | variant from the device's key table, as
 * MR keys; a type 1 window is valid with zero length until bound, a type 2
 * window is free: its rkey names nothing until a BIND_MW WQE gives it one).
 * ENOMEM when max_mw or the uid's MW quota is reached.
 * DEALLOC_MW (struct uroce_handle_req / uroce_handle_resp): a bound window
 * is unbound first (ibv_alloc_mw(3): "Unbinds in case was previously
 * bound"); its rkey stops working at once. EINVAL for a bad handle.
 * DEREG_MR of an MR with windows still bound to it: EBUSY (ibv_dereg_mr(3)).
 */
struct uroce_alloc_mw_req {
	struct uroce_hdr hdr;
	uint32_t pd_handle;
	uint32_t type;
	uint64_t reserved;
};
struct uroce_alloc_mw_resp {
	struct uroce_hdr hdr;
	uint32_t handle;
	uint32_t rkey;
};

/* -------------------------------------------------------------------- CQ */

/*
 * CQ ring, in a memfd created by the provider (size: uroce_cq_ring_size(nent)
 * bytes) and mapped MAP_SHARED read-write by both sides:
 *
 *   offset 0    struct uroce_cq_ring_hdr (64 bytes)
 *   offset 64   nent × struct mlx5_cqe64 (<infiniband/mlx5dv.h>), nent a power of two
 *
 * The provider initialises every CQE's op_own to 0xF0 (opcode INVALID, owner 0)
 * before CREATE_CQ. The daemon (the NIC) writes CQEs exactly as docs/cqe-format.md describes:
 * CQE number n (free-running producer index) goes to slot n & (nent-1) with
 * owner bit = !!(n & nent); all other bytes first, then a release store of op_own.
 *
 * dbrec[0] (big-endian, provider writes, as mlx5 dbrec[MLX5_CQ_SET_CI]):
 *   consumer index ci & 0xFFFFFF after the provider consumed CQEs. The daemon
 *   reads it to detect overrun: a CQE that would make (pi - ci) > nent is an
 *   overrun → the CQ enters error, IBV_EVENT_CQ_ERR goes to the async_fd, and
 *   no further CQEs are written — unless the CQ was created with
 *   UROCE_CQ_IGNORE_OVERRUN (then the old CQE is overwritten).
 * dbrec[1] (big-endian, provider writes, as mlx5 dbrec[MLX5_CQ_ARM_DB]): the arm
 *   word UROCE_CQ_ARM_CMD | sn<<28 | solicited<<24 | (ci & 0xFFFFFF). Bit 31
 *   (UROCE_CQ_ARM_CMD) stands for the UAR doorbell write that carries the arm
 *   command on a ConnectX: without it the word is not an arm request (the
 *   zero-filled initial word is thus never mistaken for one). sn is the provider's
 *   2-bit arm sequence number (incremented in the cq_event op, i.e. each time
 *   ibv_get_cq_event returns an event of this CQ) and solicited is 1 for
 *   ibv_req_notify_cq(cq, 1).
 *
 * Arming (ibv_req_notify_cq): the provider stores the arm word into dbrec[1]
 * (release), then eventfd_write(doorbell, 1). The daemon, each time the
 * doorbell eventfd is readable, reads every CQ's arm word of that client; a word
 * that differs from the last one it accepted is a new arm request {sn, sol, ci}.
 * The CQ is then armed; an arm word equal to the last accepted one is ignored
 * (same sn and ci: the request was already served — this is what sn is for).
 *
 * Firing: an armed CQ fires (one ib_uverbs_comp_event_desc {cq_handle =
 * user_handle} written to the completion channel, MSG_DONTWAIT; then disarmed)
 * when the daemon writes the next CQE after the arm (solicited arms: the next
 * solicited — op_own SE bit — or error CQE). CQEs already in the ring when
 * the CQ is armed do not fire: as with the kernel's rxe and as verbs
 * applications expect (ibv_get_cq_event(3): get the event, ack, re-arm, then
 * poll the CQ empty), an event means "a completion arrived since you armed".
 * (Firing for pending CQEs would hand ibv_rc_pingpong -t -e an event for a
 * CQE it already consumed, and its start_poll would fail with ENOENT.) The ci
 * in the arm word is kept for the record only.
 * Race between arming and a new CQE: the daemon publishes a CQE (release
 * store of op_own), issues a full fence, then reads the arm word; the
 * provider stores the arm word, rings the doorbell (a syscall: a full
 * barrier), then polls. Either the daemon sees the arm and fires, or the
 * consumer's poll after arming finds the CQE: no completion is lost. The
 * doorbell only makes the daemon read arm words of idle CQs early.
 * Events delivered are counted per CQ; DESTROY_CQ returns the count (what
 * the provider does with it: below).
 *
 * Resizing (ibv_resize_cq, RESIZE_CQ in uroce/abi_cq_mr.h) replaces the ring.
 * The daemon is one thread: it writes CQEs only between control requests,
 * so the request is atomic with respect to CQE writes. The provider holds
 * the CQ lock (no poll, no arm of this CQ meanwhile), publishes its ci in
 * dbrec[0], builds the new ring (every CQE INVALID, owner 0; header copied
 * from the old ring) and sends it. The daemon first executes the
 * doorbells already rung (their completions land in the old ring), reads
 * ci, then copies CQEs ci..pi-1 (pi - ci of them: EINVAL if more than the
 * new cqe) to slots n & (new nent - 1) with owner !!(n & new nent), keeping
 * the free-running indices, switches to the new ring and unmaps the old
 * one before replying. The provider, still under the lock, switches its
 * pointers and unmaps the old ring: the next poll at the same ci finds
 * the same CQEs in the same order, none lost, none duplicated.
 * Moderation (ibv_modify_cq, MODIFY_CQ): an armed CQ with cq_count c and
 * cq_period p (µs) fires when c qualifying CQEs were written since the arm,
 * or p µs after the first of them, whichever comes first; 0/0 (the
 * default) fires on the first, as above.
 */
#define UROCE_CQ_RING_HDR_SIZE 64
struct uroce_cq_ring_hdr {
	uint32_t dbrec[2]; /* big-endian; [0] ci, [1] arm word (see above) */
	uint32_t reserved[14];
};
/* Bytes of the CQ memfd for nent entries (rounded up to 4096). */
static inline uint64_t uroce_cq_ring_size(uint32_t nent)
{
	uint64_t sz = UROCE_CQ_RING_HDR_SIZE + (uint64_t)nent * sizeof(struct mlx5_cqe64);
	return (sz + 4095) & ~(uint64_t)4095;
}
#define UROCE_CQ_ARM_CMD (1u << 31)
#define UROCE_CQ_ARM_SN_SHIFT 28
#define UROCE_CQ_ARM_SOLICITED (1u << 24)
#define UROCE_CQ_CI_MASK 0xFFFFFFu

/* CREATE_CQ flags */
#define UROCE_CQ_IGNORE_OVERRUN 0x1u /* IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN */

/*
 * CREATE_CQ.
 *   user_handle  the struct ibv_cq * value (element of CQ async events and
 *                cq_handle of completion events)
 *   cqe          entries the application asked for: 1 .. dev.max_cqe (EINVAL)
 *   nent         ring entries: the smallest power of two >= cqe + 1 (EINVAL otherwise)
 *   flags        UROCE_CQ_* (unknown bits: EINVAL)
 *   comp_vector  0 .. num_comp_vectors-1, recorded only (the provider checks range)
 *   fds          [0] the ring memfd: size >= uroce_cq_ring_size(nent) (EINVAL),
 *                a regular file (memfd_create with MFD_ALLOW_SEALING) carrying
 *                F_SEAL_SHRINK (EBADF otherwise) — without the seal a client
 *                could truncate it and make the daemon fault (SIGBUS);
 *                [1] optional: the daemon's end of the completion-channel socket
 *                (SOCK_SEQPACKET or SOCK_STREAM; EBADF if not a socket).
 * Reply: handle, cqn (unique per device, shown in logs).
 * Errors also: ENOMEM (max_cq or the uid's CQ quota reached).
 */
struct uroce_create_cq_req {
	struct uroce_hdr hdr;
	uint64_t user_handle;
	uint32_t cqe;
	uint32_t nent;
	uint32_t flags;
	uint32_t comp_vector;
};
struct uroce_create_cq_resp {
	struct uroce_hdr hdr;
	uint32_t handle;
	uint32_t cqn;
};

/*
 * DESTROY_CQ: handle. EBUSY while a QP uses the CQ.
 * Reply: comp_events_reported / async_events_reported — how many completion
 * events and async events the daemon ever WROTE (delivered into the
 * socket) for this CQ. The kernel reports events the application READ, and
 * the daemon cannot know what was read, so the provider (provider/events.c)
 * waits for the acks of the events it saw the application read, takes the
 * CQ's unread completion-event records out of its channel, and uses
 * async_events_reported only to know whether an unread CQ_ERR may still come
 * (then the CQ struct is kept until ibv_close_device).
 */
struct uroce_destroy_cq_resp {
	struct uroce_hdr hdr;
	uint32_t comp_events_reported;
	uint32_t async_events_reported;
};

/* -------------------------------------------------------------------- QP */

/*
 * CREATE_QP.
 *   user_handle  the struct ibv_qp * value (element of QP async events)
 *   qp_type      IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD or IBV_QPT_RAW_PACKET
 *                (docs/raw-packet.md; no SRQ then: EINVAL); others → EOPNOTSUPP
 *   sq_sig_all   0 or 1 (EINVAL otherwise)
 *   pd_handle, send_cq_handle, recv_cq_handle  this client's objects (EINVAL)
 *   srq_handle   0, or an SRQ of this client on the same device (EINVAL
 *                otherwise): the QP takes its receive WQEs from it and has no
 *                RQ (the provider sends max_recv_wr = max_recv_sge = 0 then,
 *                EINVAL otherwise; the ring holds no RQ).
 *   cap          requested struct ibv_qp_cap: max_send_wr/max_recv_wr 0..max_qp_wr,
 *                max_send_sge/max_recv_sge
 *                <= max_sge, max_inline_data <= the HELLO max_inline_data (EINVAL)
 *   max_tso_header  ibv_qp_init_attr_ex.max_tso_header (IBV_QP_INIT_ATTR_MAX_TSO_HEADER):
 *                0, or for RAW_PACKET the largest TSO header its WQEs carry;
 *                EINVAL for another type or when the SQ slot it needs
 *                (uroce_sq_stride_tso) exceeds UROCE_SQ_DESC_MAX. The ring
 *                layout is uroce_qp_ring_layout_tso() with it. (A former
 *                reserved word: 0 is the old meaning.)
 *   fds          [] or [QP ring memfd (required for traffic; sealed F_SEAL_SHRINK like the CQ ring,
 *                EBADF otherwise) of uroce_qp_ring_layout().size bytes for the
 *                rounded caps returned below; the provider computes them with
 *                uroce_qp_caps_round() before creating it]
 * Reply: handle; qpn (allocated by the daemon, unique per device, never 0 or 1,
 * < 2^24); cap rounded up as the rings hold them (the provider reports these
 * in ibv_qp_init_attr.cap, like mlx5).
 * Errors also: ENOMEM (max_qp or the uid's QP quota reached).
 */
struct uroce_create_qp_req {
	struct uroce_hdr hdr;
	uint64_t user_handle;
	uint32_t qp_type;
	uint32_t sq_sig_all;
	uint32_t pd_handle;
	uint32_t send_cq_handle;
	uint32_t recv_cq_handle;
	uint32_t srq_handle;
	struct ibv_qp_cap cap;
	uint32_t max_tso_header;
};
struct uroce_create_qp_resp {
	struct uroce_hdr hdr;
	uint32_t handle;
	uint32_t qpn;
	struct ibv_qp_cap cap;
	uint32_t reserved;
};

/*
 * MODIFY_QP: attr_mask (enum ibv_qp_attr_mask) + struct ibv_qp_attr, exactly as
 * the application passed them to ibv_modify_qp. The daemon applies the IBTA
 * state machine (Vol 1 §10.3.1 and the kernel's ib_modify_qp_is_ok table, see
 * docs/daemon.md): per (current state, next state, QP type) a required and an
 * optional attribute mask. Errors (the man page's EINVAL for "invalid value
 * in attr or attr_mask"):
 *   EINVAL      transition not allowed; a required attribute missing; an
 *               attribute not allowed for the transition; IBV_QP_CUR_STATE given
 *               and != the actual state; a value out of range (port_num != 1,
 *               pkey_index >= 1, path_mtu > port active MTU, timeout > 31,
 *               retry_cnt/rnr_retry > 7, min_rnr_timer > 31, max_rd_atomic >
 *               max_qp_init_rd_atom, max_dest_rd_atomic > max_qp_rd_atom,
 *               dest_qp_num >= 2^24, access flags other than LOCAL_WRITE |
 *               REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC, AV with is_global 0
 *               (RoCE needs a GRH) or sgid_index >= gid_tbl_len)
 *   EOPNOTSUPP  IBV_QP_ALT_PATH (no automatic path migration), IBV_QP_RATE_LIMIT
 * PSNs are taken modulo 2^24. Reply: the resulting state.
 */
struct uroce_modify_qp_req {
	struct uroce_hdr hdr;
	uint32_t handle;
	uint32_t attr_mask;
	struct ibv_qp_attr attr;
};
struct uroce_modify_qp_resp {
	struct uroce_hdr hdr;
	uint32_t qp_state; /* enum ibv_qp_state after the call */
	uint32_t reserved;
};

/*
 * QUERY_QP: handle, attr_mask (which attributes the caller wants; the daemon
 * always fills them all). Reply: attr (qp_state current, cur_qp_state = same,
 * cap as created, sq_draining 0 since the draining is instantaneous here) and
 * qp_type / sq_sig_all for ibv_qp_init_attr.
 */
struct uroce_query_qp_req {
	struct uroce_hdr hdr;
	uint32_t handle;
	uint32_t attr_mask;
};
struct uroce_query_qp_resp {
	struct uroce_hdr hdr;
	struct ibv_qp_attr attr;
	uint32_t qp_type;
	uint32_t sq_sig_all;
};

/* DESTROY_QP: handle (uroce_handle_req). Reply: async events the daemon
 * delivered (wrote into the async socket) for the QP. The provider
 * (provider/events.c) waits for the acks of the events it saw the
 * application read, not for this many; a larger count means an unread event
 * may still come, so the QP struct is kept until ibv_close_device. */
struct uroce_destroy_qp_resp {
	struct uroce_hdr hdr;
	uint32_t async_events_reported;
	uint32_t reserved;
};

/* -------------------------------------------------------------------- AH */

/*
 * CREATE_AH: pd_handle + struct ibv_ah_attr. RoCE needs a GRH: is_global 0 →
 * EINVAL (pyverbs test_create_ah_roce); port_num must be 1; grh.sgid_index <
 * gid_tbl_len; EINVAL otherwise. Reply: handle (used in UD send WQEs).
 * ENOMEM when max_ah or the uid's AH quota is reached.
 */
struct uroce_create_ah_req {
	struct uroce_hdr hdr;
	uint32_t pd_handle;
	uint32_t reserved;
	struct ibv_ah_attr attr;
};

/* ------------------------------------------------------------------- SRQ */

/*
 * CREATE_SRQ (ibv_create_srq(3), basic SRQs only; the ring: abi_ring.h
 * "SRQ ring").
 *   user_handle  the struct ibv_srq * value (element of SRQ async events)
 *   pd_handle    PD of this client
 *   max_wr       WQEs, a power of two 1..dev.max_srq_wr (the provider rounds
 *                the application's value up), else EINVAL
 *   max_sge      SGEs per WQE, 1..dev.max_srq_sge, else EINVAL
 *   fds          [0] the ring memfd, uroce_srq_ring_layout() bytes, sealed
 *                F_SEAL_SHRINK (EBADF otherwise, EINVAL if too small)
 * Reply: handle, srqn (unique per device, shown in logs). ENOMEM when
 * max_srq or the uid's SRQ quota is reached. The SRQ starts disarmed.
 */
struct uroce_create_srq_req {
	struct uroce_hdr hdr;
	uint64_t user_handle;
	uint32_t pd_handle;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t reserved;
};
struct uroce_create_srq_resp {
	struct uroce_hdr hdr;
	uint32_t handle;
	uint32_t srqn;
};

/*
 * MODIFY_SRQ (ibv_modify_srq(3)): attr_mask IBV_SRQ_LIMIT arms the limit
 * (srq_limit 1..max_wr; 0 disarms): once the SRQ holds fewer than srq_limit
 * WQEs, IBV_EVENT_SRQ_LIMIT_REACHED (element: user_handle) goes to the
 * async_fd once and the limit returns to 0. IBV_SRQ_MAX_WR (resizing) is
 * EINVAL as on mlx5, which cannot resize an SRQ; srq_limit > max_wr and
 * unknown mask bits are EINVAL too. Reply: uroce_hdr only.
 */
struct uroce_modify_srq_req {
	struct uroce_hdr hdr;
	uint32_t handle;
	uint32_t attr_mask;
	uint32_t max_wr;
	uint32_t srq_limit;
};

/* QUERY_SRQ: handle (uroce_handle_req). Reply: max_wr and max_sge as
 * created, srq_limit the armed limit (0 when disarmed or after the event). */
struct uroce_query_srq_resp {
	struct uroce_hdr hdr;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
	uint32_t reserved;
};

/* DESTROY_SRQ: handle (uroce_handle_req). EBUSY while a QP uses the SRQ.
 * Reply: async events the daemon delivered for the SRQ (as DESTROY_QP). */
struct uroce_destroy_srq_resp {
	struct uroce_hdr hdr;
	uint32_t async_events_reported;
	uint32_t reserved;
};

#include "uroce/abi_mcast.h"
#include "uroce/abi_admin.h"
#include "uroce/abi_cq_mr.h"
#include "uroce/abi_cm.h"
#include "uroce/abi_flow.h"
#include "uroce/abi_dm.h"
#include "uroce/abi_xrc.h"
#include "uroce/abi_tm.h"
#include "uroce/abi_share.h"

/* Fixed request size for an opcode (0 for unknown opcodes). */
static inline size_t uroce_req_size(unsigned int op)
{
	switch (op) {
	case UROCE_OP_HELLO: return sizeof(struct uroce_hello_req);
	case UROCE_OP_QUERY_PORT: return sizeof(struct uroce_query_port_req);
	case UROCE_OP_ALLOC_PD:
	case UROCE_OP_DEALLOC_PD:
	case UROCE_OP_DEREG_MR:
	case UROCE_OP_DESTROY_CQ:
	case UROCE_OP_DESTROY_QP:
	case UROCE_OP_DESTROY_AH:
	case UROCE_OP_QUERY_SRQ:
	case UROCE_OP_DEALLOC_MW:
	case UROCE_OP_DESTROY_SRQ: return sizeof(struct uroce_handle_req);
	case UROCE_OP_ALLOC_MW: return sizeof(struct uroce_alloc_mw_req);
	case UROCE_OP_CREATE_SRQ: return sizeof(struct uroce_create_srq_req);
	case UROCE_OP_MODIFY_SRQ: return sizeof(struct uroce_modify_srq_req);
	case UROCE_OP_REG_MR: return sizeof(struct uroce_reg_mr_req);
	case UROCE_OP_REREG_MR: return sizeof(struct uroce_rereg_mr_req);
	case UROCE_OP_RESIZE_CQ: return sizeof(struct uroce_resize_cq_req);
	case UROCE_OP_MODIFY_CQ: return sizeof(struct uroce_modify_cq_req);
	case UROCE_OP_ADVISE_MR: return sizeof(struct uroce_advise_mr_req);
	case UROCE_OP_ATTACH_MCAST:
	case UROCE_OP_DETACH_MCAST: return sizeof(struct uroce_mcast_req);
	case UROCE_OP_CREATE_CQ: return sizeof(struct uroce_create_cq_req);
	case UROCE_OP_CREATE_QP: return sizeof(struct uroce_create_qp_req);
	case UROCE_OP_MODIFY_QP: return sizeof(struct uroce_modify_qp_req);
	case UROCE_OP_QUERY_QP: return sizeof(struct uroce_query_qp_req);
	case UROCE_OP_CREATE_AH: return sizeof(struct uroce_create_ah_req);
	case UROCE_OP_OPEN_XRCD: return sizeof(struct uroce_open_xrcd_req);
	case UROCE_OP_CLOSE_XRCD: return sizeof(struct uroce_handle_req);
	case UROCE_OP_CREATE_XRC_SRQ: return sizeof(struct uroce_create_xrc_srq_req);
	case UROCE_OP_CREATE_XRC_QP: return sizeof(struct uroce_create_xrc_qp_req);
	case UROCE_OP_ADMIN_STATUS:
	case UROCE_OP_ADMIN_CAPTURE_START:
	case UROCE_OP_ADMIN_CAPTURE_STOP:
	case UROCE_OP_ADMIN_SHUTDOWN: return sizeof(struct uroce_hdr);
	case UROCE_OP_ADMIN_LINK: return sizeof(struct uroce_admin_link_req);
	case UROCE_OP_ADMIN_FAULT: return sizeof(struct uroce_admin_fault_req);
	case UROCE_OP_CM_HELLO: return sizeof(struct uroce_cm_hello_req);
	case UROCE_OP_UCMA: return sizeof(struct uroce_ucma_req);
	case UROCE_OP_ALLOC_DM: return sizeof(struct uroce_alloc_dm_req);
	case UROCE_OP_FREE_DM: return sizeof(struct uroce_handle_req);
	case UROCE_OP_REG_DM_MR: return sizeof(struct uroce_reg_dm_mr_req);
	default: return uroce_share_req_size(op);
	}
}

/* Fixed reply size for an opcode (an unknown opcode's reply is a bare header). */
static inline size_t uroce_resp_size(unsigned int op)
{
	switch (op) {
	case UROCE_OP_HELLO: return sizeof(struct uroce_hello_resp);
	case UROCE_OP_QUERY_PORT: return sizeof(struct uroce_query_port_resp);
	case UROCE_OP_ALLOC_PD:
	case UROCE_OP_DEALLOC_PD:
	case UROCE_OP_DEREG_MR:
	case UROCE_OP_DEALLOC_MW:
	case UROCE_OP_CREATE_AH:
	case UROCE_OP_DESTROY_AH: return sizeof(struct uroce_handle_resp);
	case UROCE_OP_REG_MR:
	case UROCE_OP_REREG_MR: return sizeof(struct uroce_reg_mr_resp);
	case UROCE_OP_ALLOC_MW: return sizeof(struct uroce_alloc_mw_resp);
	case UROCE_OP_RESIZE_CQ: return sizeof(struct uroce_resize_cq_resp);
	case UROCE_OP_CREATE_CQ: return sizeof(struct uroce_create_cq_resp);
	case UROCE_OP_DESTROY_CQ: return sizeof(struct uroce_destroy_cq_resp);
	case UROCE_OP_CREATE_QP: return sizeof(struct uroce_create_qp_resp);
	case UROCE_OP_MODIFY_QP: return sizeof(struct uroce_modify_qp_resp);
	case UROCE_OP_QUERY_QP: return sizeof(struct uroce_query_qp_resp);
	case UROCE_OP_DESTROY_QP: return sizeof(struct uroce_destroy_qp_resp);
	case UROCE_OP_CREATE_SRQ: return sizeof(struct uroce_create_srq_resp);
	case UROCE_OP_QUERY_SRQ: return sizeof(struct uroce_query_srq_resp);
	case UROCE_OP_DESTROY_SRQ: return sizeof(struct uroce_destroy_srq_resp);
	case UROCE_OP_ADMIN_STATUS: return sizeof(struct uroce_admin_status_resp);
	case UROCE_OP_CM_HELLO: return sizeof(struct uroce_cm_hello_resp);
	case UROCE_OP_UCMA: return sizeof(struct uroce_ucma_resp);
	case UROCE_OP_ALLOC_DM: return sizeof(struct uroce_alloc_dm_resp);
	case UROCE_OP_FREE_DM: return sizeof(struct uroce_handle_resp);
	case UROCE_OP_REG_DM_MR: return sizeof(struct uroce_reg_mr_resp);
	case UROCE_OP_OPEN_XRCD: return sizeof(struct uroce_open_xrcd_resp);
	case UROCE_OP_CLOSE_XRCD: return sizeof(struct uroce_handle_resp);
	case UROCE_OP_CREATE_XRC_SRQ: return sizeof(struct uroce_create_srq_resp);
	case UROCE_OP_CREATE_XRC_QP: return sizeof(struct uroce_create_qp_resp);
	default: return uroce_share_resp_size(op);
	}
}

#include "uroce/abi_clock.h"
#include "uroce/abi_ring.h"

#include "uroce/abi_asserts.h"

#endif /* UROCE_ABI_H */
