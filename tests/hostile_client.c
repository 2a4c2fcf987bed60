/*
 * hostile_client.c - hostile-client test of uroced's control socket.
 *
 * Usage: hostile_client SOCK
 * Sends malformed, truncated, oversized, wrong-opcode, wrong-state,
 * wrong-handle, out-of-range and descriptor-less/-laden messages, one table
 * row each, and checks the exact errno in each reply (include/uroce/abi.h),
 * the echoed sequence number and the reply size. Then checks that the daemon
 * survives 20000 random messages (valid header, random body and descriptors),
 * still serves a well-behaved client (a full object lifecycle) and that the
 * object totals return to zero. Exit 0 if every row passed, 1 otherwise.
 */
#include "config.h"
#include "daemon_proto.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* One message to send. */
struct msg {
	_Alignas(8) unsigned char buf[4096];
	size_t len;
	int fds[8];
	int nfds;
};

/* Objects of the prepared session the rows refer to. */
struct ctx {
	struct dp_session ss;
	uint32_t pd, cq, cq_free, qp, mr, mr_key;
	int sealed_ring;   /* a correct CQ ring memfd for 8 entries (nent 16) */
};

static struct ctx X;

/* Memory the REG_MR rows register: MRMEM is mapped read-write (the session's
 * MR at +0, the good client's at +8192 and +12288); RO_PAGE read-only;
 * HOLE a page nobody maps (mapped and unmapped again in main). */
static unsigned char mrmem[4 * 8192] __attribute__((aligned(4096)));
#define MRMEM ((uintptr_t)mrmem)
static uintptr_t ro_page, hole;

enum conn { FRESH, SESSION };

struct hcase {
	const char *name;
	enum conn conn;
	unsigned int op;
	void (*build)(struct msg *m);
	int expect;
};

#define HDR(m) ((struct uroce_hdr *)(m)->buf)
#define BODY(m, type) ((type *)(m)->buf)

static int devnull(void)
{
	return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* ---- builders: the runner pre-fills a correct header for the row's op ---- */
static void tiny(struct msg *m) { m->len = 4; }
static void bad_magic(struct msg *m) { HDR(m)->magic ^= 1; }
static void bad_version(struct msg *m) { HDR(m)->version = UROCE_ABI_VERSION + 1; }
static void op_zero(struct msg *m) { HDR(m)->opcode = 0; }
static void op_unknown(struct msg *m) { HDR(m)->opcode = 999; }
static void op_gap(struct msg *m) { HDR(m)->opcode = 45; }
static void len_field_lies(struct msg *m) { HDR(m)->length += 8; }
static void truncated(struct msg *m) { m->len -= 4; HDR(m)->length = (uint32_t)m->len; }
static void oversized(struct msg *m) { m->len = 3000; HDR(m)->length = 3000; }
static void longer_both(struct msg *m) { m->len += 16; HDR(m)->length = (uint32_t)m->len; }
static void status_set(struct msg *m) { HDR(m)->status = 5; }
static void reserved_set(struct msg *m) { HDR(m)->reserved = 1; }
static void nothing(struct msg *m) { (void)m; }

static void hello_body(struct msg *m)
{
	struct uroce_hello_req *r = BODY(m, struct uroce_hello_req);
	int sp[2];

	r->abi_version = UROCE_ABI_VERSION;
	r->pid = (uint32_t)getpid();
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0) {
		close(sp[0]);
		m->fds[m->nfds++] = sp[1];
	}
	dp_self_mem_fds(m->fds + m->nfds);
	m->nfds += 2;
}
static void hello_nofd(struct msg *m)
{
	hello_body(m);
	while (m->nfds > 0)
		close(m->fds[--m->nfds]);
}
static void hello_nomem(struct msg *m) { hello_body(m); close(m->fds[2]); close(m->fds[1]); m->nfds = 1; }
static void hello_nomaps(struct msg *m) { hello_body(m); close(m->fds[2]); m->nfds = 2; }
/* /proc/self/mem opened read-only: RDMA WRITEs through it could not land;
 * refused at HELLO rather than failing later */
static void hello_mem_ro(struct msg *m)
{
	hello_body(m);
	close(m->fds[1]);
	m->fds[1] = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
}
static void hello_mem_file(struct msg *m) { hello_body(m); close(m->fds[1]); m->fds[1] = devnull(); }
static void hello_mem_swapped(struct msg *m)
{
	int t;

	hello_body(m);
	t = m->fds[1];
	m->fds[1] = m->fds[2];
	m->fds[2] = t;
}
/* the mem and maps of pid 1 (init, root's) - openable by root only, and
 * not ours anyway */
static void hello_mem_other(struct msg *m)
{
	hello_body(m);
	close(m->fds[2]);
	m->fds[2] = open("/proc/1/maps", O_RDONLY | O_CLOEXEC);
	if (m->fds[2] < 0)
		m->fds[2] = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
}
static void hello_file(struct msg *m) { hello_body(m); close(m->fds[0]); m->fds[0] = devnull(); }
static void hello_badabi(struct msg *m) { hello_body(m); BODY(m, struct uroce_hello_req)->abi_version = 77; }
static void hello_badpid(struct msg *m) { hello_body(m); BODY(m, struct uroce_hello_req)->pid = 1; }
static void hello_resv(struct msg *m) { hello_body(m); BODY(m, struct uroce_hello_req)->reserved = 1; }
static void hello_fourfds(struct msg *m) { hello_body(m); m->fds[m->nfds++] = devnull(); }
static void hello_manyfds(struct msg *m)
{
	hello_body(m);
	while (m->nfds < 8)
		m->fds[m->nfds++] = devnull();
}

static void with_fd(struct msg *m) { m->fds[m->nfds++] = devnull(); }
static void handle_of(struct msg *m, uint32_t h) { BODY(m, struct uroce_handle_req)->handle = h; }
static void h_zero(struct msg *m) { handle_of(m, 0); }
static void h_huge(struct msg *m) { handle_of(m, 0xFFFFFFFF); }
static void h_999(struct msg *m) { handle_of(m, 999); }
static void h_pd(struct msg *m) { handle_of(m, X.pd); }
static void h_cq(struct msg *m) { handle_of(m, X.cq); }
static void h_pd_resv(struct msg *m) { handle_of(m, X.pd); BODY(m, struct uroce_handle_req)->reserved = 3; }
static void h_one(struct msg *m) { handle_of(m, 1); }

static void port_num(struct msg *m, uint32_t p) { BODY(m, struct uroce_query_port_req)->port_num = p; }
static void port0(struct msg *m) { port_num(m, 0); }
static void port2(struct msg *m) { port_num(m, 2); }
static void port1(struct msg *m) { port_num(m, 1); }

static void mr(struct msg *m, uint32_t pd, uint64_t addr, uint64_t len, uint32_t acc)
{
	struct uroce_reg_mr_req *r = BODY(m, struct uroce_reg_mr_req);

	r->pd_handle = pd;
	r->addr = addr;
	r->length = len;
	r->access = acc;
}
static void mr_badpd(struct msg *m) { mr(m, 77, 0x10000, 4096, IBV_ACCESS_LOCAL_WRITE); }
static void mr_len0(struct msg *m) { mr(m, X.pd, 0x10000, 0, IBV_ACCESS_LOCAL_WRITE); }
static void mr_wrap(struct msg *m) { mr(m, X.pd, ~0ull - 10, 4096, IBV_ACCESS_LOCAL_WRITE); }
static void mr_toolong(struct msg *m) { mr(m, X.pd, 0x10000, (1ull << 40) + 1, IBV_ACCESS_LOCAL_WRITE); }
static void mr_rw_nolw(struct msg *m) { mr(m, X.pd, 0x10000, 4096, IBV_ACCESS_REMOTE_WRITE); }
static void mr_ra_nolw(struct msg *m) { mr(m, X.pd, 0x10000, 4096, IBV_ACCESS_REMOTE_ATOMIC); }
static void mr_odp(struct msg *m) { mr(m, X.pd, 0x10000, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND); }
static void mr_mwbind(struct msg *m) { mr(m, X.pd, MRMEM, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND); }
static void mw(struct msg *m, uint32_t pd, uint32_t type, uint64_t resv)
{
	struct uroce_alloc_mw_req *r = BODY(m, struct uroce_alloc_mw_req);

	r->pd_handle = pd;
	r->type = type;
	r->reserved = resv;
}
static void mw_badpd(struct msg *m) { mw(m, 77, IBV_MW_TYPE_1, 0); }
static void mw_type0(struct msg *m) { mw(m, X.pd, 0, 0); }
static void mw_type3(struct msg *m) { mw(m, X.pd, 3, 0); }
static void mw_resv(struct msg *m) { mw(m, X.pd, IBV_MW_TYPE_2, 1); }
static void mw_ok(struct msg *m) { mw(m, X.pd, IBV_MW_TYPE_2, 0); }
static void mr_huge(struct msg *m) { mr(m, X.pd, 0x10000, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_HUGETLB); }
static void mr_implicit_huge(struct msg *m)
{
	mr(m, X.pd, 0, ~0ull, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB);
}
static void mr_all_no_odp(struct msg *m) { mr(m, X.pd, 0, ~0ull, IBV_ACCESS_LOCAL_WRITE); }
/* IBV_ACCESS_FLUSH_GLOBAL (1 << 8) and FLUSH_PERSISTENT (1 << 9), rdma-core >= 45 */
static void mr_flush_global(struct msg *m)
{
	mr(m, X.pd, MRMEM, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | (1u << 8) | (1u << 9));
}
static void mr_flush_persistent(struct msg *m) { mr(m, X.pd, MRMEM, 4096, IBV_ACCESS_LOCAL_WRITE | (1u << 9)); }
static void mr_flush_nolw(struct msg *m) { mr(m, X.pd, MRMEM, 4096, IBV_ACCESS_REMOTE_WRITE | (1u << 8)); }
static void mr_bit10(struct msg *m) { mr(m, X.pd, MRMEM, 4096, IBV_ACCESS_LOCAL_WRITE | (1u << 10)); }

/* ADVISE_MR of one SGE over the session's (non-ODP) MR, then one field changed. */
static struct uroce_advise_mr_req *advise(struct msg *m)
{
	struct uroce_advise_mr_req *r = BODY(m, struct uroce_advise_mr_req);

	r->pd_handle = X.pd;
	r->advice = IBV_ADVISE_MR_ADVICE_PREFETCH;
	r->num_sge = 1;
	r->sge[0].addr = MRMEM;
	r->sge[0].length = 4096;
	r->sge[0].lkey = X.mr_key;
	return r;
}
static void adv_badpd(struct msg *m) { advise(m)->pd_handle = 77; }
static void adv_advice(struct msg *m) { advise(m)->advice = 9; }
static void adv_flag(struct msg *m) { advise(m)->flags = 2; }
static void adv_nsge0(struct msg *m) { advise(m)->num_sge = 0; }
static void adv_nsge33(struct msg *m) { advise(m)->num_sge = UROCE_ADVISE_MR_MAX_SGE + 1; }
static void adv_not_odp(struct msg *m) { advise(m); }
static void adv_badkey(struct msg *m) { advise(m)->sge[0].lkey = X.mr_key + 1; }
static void adv_fd(struct msg *m) { advise(m); with_fd(m); }
static void mr_unknown(struct msg *m) { mr(m, X.pd, 0x10000, 4096, 1u << 14); }
static void mr_fd(struct msg *m) { mr(m, X.pd, 0x10000, 4096, 0); with_fd(m); }
static void mr_ok(struct msg *m) { mr(m, X.pd, MRMEM, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING); }
static void mr_hole(struct msg *m) { mr(m, X.pd, hole, 4096, IBV_ACCESS_LOCAL_WRITE); }
static void mr_null(struct msg *m) { mr(m, X.pd, 0, 4096, 0); }
static void mr_past_end(struct msg *m) { mr(m, X.pd, MRMEM + sizeof(mrmem) - 4096, 4096, 0); }
static void mr_ro_lw(struct msg *m) { mr(m, X.pd, ro_page, 4096, IBV_ACCESS_LOCAL_WRITE); }
static void mr_ro_rw(struct msg *m) { mr(m, X.pd, ro_page, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE); }
static void mr_ro_rr(struct msg *m) { mr(m, X.pd, ro_page, 4096, IBV_ACCESS_REMOTE_READ); }

static void cq(struct msg *m, uint32_t cqe, uint32_t nent, uint32_t flags, int ring)
{
	struct uroce_create_cq_req *r = BODY(m, struct uroce_create_cq_req);

	r->user_handle = 0x77;
	r->cqe = cqe;
	r->nent = nent;
	r->flags = flags;
	if (ring >= 0)
		m->fds[m->nfds++] = ring;
}
static void cq_nofd(struct msg *m) { cq(m, 8, 16, 0, -1); }

static void rz(struct msg *m, uint32_t h, uint32_t cqe, uint32_t nent, int ring)
{
	struct uroce_resize_cq_req *r = BODY(m, struct uroce_resize_cq_req);

	r->handle = h;
	r->cqe = cqe;
	r->nent = nent;
	if (ring >= 0)
		m->fds[m->nfds++] = ring;
}
static void rz_nofd(struct msg *m) { rz(m, X.cq, 100, 128, -1); }
static void rz_unsealed(struct msg *m) { rz(m, X.cq, 100, 128, dp_ring_memfd(uroce_cq_ring_size(128), 0)); }
static void rz_small(struct msg *m) { rz(m, X.cq, 100, 128, dp_ring_memfd(uroce_cq_ring_size(16), 1)); }
static void rz_badnent(struct msg *m) { rz(m, X.cq, 100, 64, dp_ring_memfd(uroce_cq_ring_size(128), 1)); }
static void rz_handle(struct msg *m) { rz(m, 999, 100, 128, dp_ring_memfd(uroce_cq_ring_size(128), 1)); }
static void rz_resv(struct msg *m)
{
	rz(m, X.cq, 100, 128, dp_ring_memfd(uroce_cq_ring_size(128), 1));
	BODY(m, struct uroce_resize_cq_req)->reserved = 1;
}
static void rz_ok(struct msg *m) { rz(m, X.cq, 100, 128, dp_ring_memfd(uroce_cq_ring_size(128), 1)); }

static void mcq(struct msg *m, uint32_t h, uint32_t mask, uint16_t period)
{
	struct uroce_modify_cq_req *r = BODY(m, struct uroce_modify_cq_req);

	r->handle = h;
	r->attr_mask = mask;
	r->cq_count = 4;
	r->cq_period = period;
}
static void mcq_nomask(struct msg *m) { mcq(m, X.cq, 0, 10); }
static void mcq_badmask(struct msg *m) { mcq(m, X.cq, 3, 10); }
static void mcq_period(struct msg *m) { mcq(m, X.cq, IBV_CQ_ATTR_MODERATE, 4096); }
static void mcq_handle(struct msg *m) { mcq(m, 999, IBV_CQ_ATTR_MODERATE, 10); }

static void rr(struct msg *m, uint32_t h, uint32_t flags, uint32_t pd, uint32_t acc, uint64_t addr)
{
	struct uroce_rereg_mr_req *r = BODY(m, struct uroce_rereg_mr_req);

	r->handle = h;
	r->flags = flags;
	r->pd_handle = pd;
	r->access = acc;
	r->addr = addr;
	r->length = addr ? 4096 : 0;
}
static void rr_noflags(struct msg *m) { rr(m, X.mr, 0, 0, 0, 0); }
static void rr_badflag(struct msg *m) { rr(m, X.mr, 8, 0, 0, 0); }
static void rr_stray_access(struct msg *m) { rr(m, X.mr, IBV_REREG_MR_CHANGE_PD, X.pd, IBV_ACCESS_LOCAL_WRITE, 0); }
static void rr_badpd(struct msg *m) { rr(m, X.mr, IBV_REREG_MR_CHANGE_PD, 999, 0, 0); }
static void rr_hole(struct msg *m) { rr(m, X.mr, IBV_REREG_MR_CHANGE_TRANSLATION, 0, 0, hole); }
static void rr_handle(struct msg *m) { rr(m, 999, IBV_REREG_MR_CHANGE_PD, X.pd, 0, 0); }
static void rr_rw_only(struct msg *m) { rr(m, X.mr, IBV_REREG_MR_CHANGE_ACCESS, 0, IBV_ACCESS_REMOTE_WRITE, 0); }
static void rr_flush(struct msg *m) { rr(m, X.mr, IBV_REREG_MR_CHANGE_ACCESS, 0, IBV_ACCESS_LOCAL_WRITE | (1u << 9), 0); }
static void cq_unsealed(struct msg *m) { cq(m, 8, 16, 0, dp_ring_memfd(uroce_cq_ring_size(16), 0)); }
static void cq_writesealed(struct msg *m) { cq(m, 8, 16, 0, dp_ring_memfd(uroce_cq_ring_size(16), 2)); }
static void cq_devnull(struct msg *m) { cq(m, 8, 16, 0, devnull()); }
static void cq_small(struct msg *m) { cq(m, 8, 16, 0, dp_ring_memfd(64, 1)); }
static void cq_badnent(struct msg *m) { cq(m, 8, 8, 0, dup(X.sealed_ring)); }
static void cq_zero(struct msg *m) { cq(m, 0, 1, 0, dup(X.sealed_ring)); }
static void cq_toomany(struct msg *m) { cq(m, 4194304, 8388608, 0, dup(X.sealed_ring)); }
static void cq_flags(struct msg *m) { cq(m, 8, 16, 0x80, dup(X.sealed_ring)); }
static void cq_chan_pipe(struct msg *m)
{
	int p[2];

	cq(m, 8, 16, 0, dup(X.sealed_ring));
	if (pipe2(p, O_CLOEXEC) == 0) {
		close(p[0]);
		m->fds[m->nfds++] = p[1];
	}
}
static void cq_threefds(struct msg *m)
{
	int sp[2];

	cq(m, 8, 16, 0, dup(X.sealed_ring));
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0) {
		close(sp[0]);
		m->fds[m->nfds++] = sp[1];
	}
	m->fds[m->nfds++] = devnull();
}

static void qp(struct msg *m, uint32_t type, uint32_t pd, uint32_t cqh, uint32_t srq)
{
	struct uroce_create_qp_req *r = BODY(m, struct uroce_create_qp_req);

	r->user_handle = 0x55;
	r->qp_type = type;
	r->pd_handle = pd;
	r->send_cq_handle = cqh;
	r->recv_cq_handle = cqh;
	r->srq_handle = srq;
	r->cap.max_send_wr = 4;
	r->cap.max_recv_wr = 4;
	r->cap.max_send_sge = 1;
	r->cap.max_recv_sge = 1;
}
static void qp_raw(struct msg *m) { qp(m, IBV_QPT_RAW_PACKET, X.pd, X.cq, 1); }
static void qp_xrc(struct msg *m) { qp(m, IBV_QPT_XRC_SEND, X.pd, X.cq, 0); }
static void xrcqp_bad(struct msg *m) { BODY(m, struct uroce_create_xrc_qp_req)->xrcd_handle = 7; }
static void qp_badpd(struct msg *m) { qp(m, IBV_QPT_RC, 99, X.cq, 0); }
static void qp_badcq(struct msg *m) { qp(m, IBV_QPT_RC, X.pd, 99, 0); }
static void qp_srq(struct msg *m) { qp(m, IBV_QPT_RC, X.pd, X.cq, 1); }
static void qp_sig2(struct msg *m) { qp(m, IBV_QPT_RC, X.pd, X.cq, 0); BODY(m, struct uroce_create_qp_req)->sq_sig_all = 2; }
static void qp_wr(struct msg *m) { qp(m, IBV_QPT_RC, X.pd, X.cq, 0); BODY(m, struct uroce_create_qp_req)->cap.max_send_wr = 4097; }
static void qp_rwr(struct msg *m) { qp(m, IBV_QPT_UD, X.pd, X.cq, 0); BODY(m, struct uroce_create_qp_req)->cap.max_recv_wr = 1u << 31; }
static void qp_sge(struct msg *m) { qp(m, IBV_QPT_UC, X.pd, X.cq, 0); BODY(m, struct uroce_create_qp_req)->cap.max_send_sge = 17; }
static void qp_inl(struct msg *m) { qp(m, IBV_QPT_RC, X.pd, X.cq, 0); BODY(m, struct uroce_create_qp_req)->cap.max_inline_data = 257; }
static void qp_unsealed(struct msg *m) { qp(m, IBV_QPT_RC, X.pd, X.cq, 0); m->fds[m->nfds++] = dp_ring_memfd(1 << 20, 0); }
static void qp_smallring(struct msg *m) { qp(m, IBV_QPT_RC, X.pd, X.cq, 0); m->fds[m->nfds++] = dp_ring_memfd(1024, 1); }

static void srq(struct msg *m, uint32_t pd, uint32_t max_wr, uint32_t max_sge, int fd)
{
	struct uroce_create_srq_req *r = BODY(m, struct uroce_create_srq_req);

	r->user_handle = 0x77;
	r->pd_handle = pd;
	r->max_wr = max_wr;
	r->max_sge = max_sge;
	if (fd >= 0)
		m->fds[m->nfds++] = fd;
}
/* 4096 bytes hold 64 + 16 x 64-byte slots of 2 SGEs */
static void srq_nofd(struct msg *m) { srq(m, X.pd, 16, 2, -1); }
static void srq_unsealed(struct msg *m) { srq(m, X.pd, 16, 2, dp_ring_memfd(4096, 0)); }
static void srq_small(struct msg *m) { srq(m, X.pd, 64, 2, dp_ring_memfd(4096, 1)); }
static void srq_npow2(struct msg *m) { srq(m, X.pd, 12, 2, dp_ring_memfd(4096, 1)); }
static void srq_wr0(struct msg *m) { srq(m, X.pd, 0, 2, dp_ring_memfd(4096, 1)); }
static void srq_toomany(struct msg *m) { srq(m, X.pd, 32768, 1, dp_ring_memfd(4096, 1)); }
static void srq_sge0(struct msg *m) { srq(m, X.pd, 16, 0, dp_ring_memfd(4096, 1)); }
static void srq_sge17(struct msg *m) { srq(m, X.pd, 16, 17, dp_ring_memfd(4096, 1)); }
static void srq_badpd(struct msg *m) { srq(m, 99, 16, 2, dp_ring_memfd(4096, 1)); }
static void srq_resv(struct msg *m) { srq(m, X.pd, 16, 2, dp_ring_memfd(4096, 1)); BODY(m, struct uroce_create_srq_req)->reserved = 1; }
static void srq_ok(struct msg *m) { srq(m, X.pd, 16, 2, dp_ring_memfd(4096, 1)); }
/* CREATE_XRC_SRQ: an otherwise good request naming XRCD and CQ */
static void xsrq(struct msg *m, uint32_t xrcd, uint32_t cq)
{
	struct uroce_create_xrc_srq_req *r = BODY(m, struct uroce_create_xrc_srq_req);

	r->user_handle = 0x78;
	r->xrcd_handle = xrcd;
	r->cq_handle = cq;
	r->pd_handle = X.pd;
	r->max_wr = 16;
	r->max_sge = 2;
	m->fds[m->nfds++] = dp_ring_memfd(4096, 1);
}
/* CREATE_TM_SRQ: a tag-matching SRQ on the session's PD and CQ */
static void tmsrq(struct msg *m, uint32_t cq, uint32_t tags, uint32_t ops)
{
	struct uroce_create_tm_srq_req *r = BODY(m, struct uroce_create_tm_srq_req);

	r->user_handle = 0x79;
	r->pd_handle = X.pd;
	r->cq_handle = cq;
	r->max_wr = 16;
	r->max_sge = 2;
	r->max_num_tags = tags;
	r->max_ops = ops;
	m->fds[m->nfds++] = dp_ring_memfd(4096, 1);
}
static void tmsrq_badcq(struct msg *m) { tmsrq(m, 99, 4, 4); }
static void tmsrq_tags0(struct msg *m) { tmsrq(m, X.cq, 0, 4); }
static void tmsrq_tags128(struct msg *m) { tmsrq(m, X.cq, 128, 4); }
static void tmsrq_ops0(struct msg *m) { tmsrq(m, X.cq, 4, 0); }
static void tmsrq_ops32769(struct msg *m) { tmsrq(m, X.cq, 4, 32769); }
static void tmsrq_nofd(struct msg *m) { tmsrq(m, X.cq, 4, 4); m->nfds = 0; }
/* TM_OP naming no SRQ, or the session's CQ handle as one */
static void tmop_badh(struct msg *m) { BODY(m, struct uroce_tm_op_req)->handle = 99; }
static void tmop_cqh(struct msg *m) { BODY(m, struct uroce_tm_op_req)->handle = X.cq; }
static void xsrq_badxrcd(struct msg *m) { xsrq(m, 99, X.cq); }
static void xsrq_noxrcd(struct msg *m) { xsrq(m, 0, X.cq); }
static void msrq(struct msg *m, uint32_t h, uint32_t mask, uint32_t limit)
{
	struct uroce_modify_srq_req *r = BODY(m, struct uroce_modify_srq_req);

	r->handle = h;
	r->attr_mask = mask;
	r->max_wr = 64;
	r->srq_limit = limit;
}
static void msrq_badh(struct msg *m) { msrq(m, 99, IBV_SRQ_LIMIT, 1); }
static void msrq_maxwr(struct msg *m) { msrq(m, 1, IBV_SRQ_MAX_WR, 0); }
static void msrq_limit(struct msg *m) { msrq(m, 1, IBV_SRQ_LIMIT, 17); }
static void msrq_unknown(struct msg *m) { msrq(m, 1, 0x4, 0); }
static void hsrq_badh(struct msg *m) { BODY(m, struct uroce_handle_req)->handle = 99; }
static void qp_srq_rq(struct msg *m) { qp(m, IBV_QPT_RC, X.pd, X.cq, 1); }

static void mod(struct msg *m, uint32_t h, uint32_t mask, void (*set)(struct ibv_qp_attr *))
{
	struct uroce_modify_qp_req *r = BODY(m, struct uroce_modify_qp_req);

	r->handle = h;
	r->attr_mask = mask;
	r->attr.port_num = 1;
	r->attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
	if (set)
		set(&r->attr);
}
static void to_init(struct ibv_qp_attr *a) { a->qp_state = IBV_QPS_INIT; }
static void to_rtr(struct ibv_qp_attr *a) { a->qp_state = IBV_QPS_RTR; }
static void to_bogus(struct ibv_qp_attr *a) { a->qp_state = 9; }
static void port_bad(struct ibv_qp_attr *a) { a->qp_state = IBV_QPS_INIT; a->port_num = 2; }
static void pkey_bad(struct ibv_qp_attr *a) { a->qp_state = IBV_QPS_INIT; a->pkey_index = 1; }
static void acc_bad(struct ibv_qp_attr *a) { a->qp_state = IBV_QPS_INIT; a->qp_access_flags = IBV_ACCESS_MW_BIND; }
#define INIT_MASK (IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
static void mod_badh(struct msg *m) { mod(m, 4242, INIT_MASK, to_init); }
static void mod_cq_handle(struct msg *m) { mod(m, X.cq + 100, INIT_MASK, to_init); }
static void mod_skip(struct msg *m) { mod(m, X.qp, IBV_QP_STATE, to_rtr); }
static void mod_missing(struct msg *m) { mod(m, X.qp, IBV_QP_STATE | IBV_QP_PORT, to_init); }
static void mod_extra(struct msg *m) { mod(m, X.qp, INIT_MASK | IBV_QP_SQ_PSN, to_init); }
static void mod_unknown(struct msg *m) { mod(m, X.qp, INIT_MASK | (1u << 30), to_init); }
static void mod_state(struct msg *m) { mod(m, X.qp, INIT_MASK, to_bogus); }
static void mod_port(struct msg *m) { mod(m, X.qp, INIT_MASK, port_bad); }
static void mod_pkey(struct msg *m) { mod(m, X.qp, INIT_MASK, pkey_bad); }
static void mod_acc(struct msg *m) { mod(m, X.qp, INIT_MASK, acc_bad); }
static void mod_curstate(struct msg *m) { mod(m, X.qp, INIT_MASK | IBV_QP_CUR_STATE, to_init); }

static void qq(struct msg *m, uint32_t h, uint32_t mask)
{
	BODY(m, struct uroce_query_qp_req)->handle = h;
	BODY(m, struct uroce_query_qp_req)->attr_mask = mask;
}
static void qq_badh(struct msg *m) { qq(m, 0, IBV_QP_STATE); }
static void qq_badmask(struct msg *m) { qq(m, X.qp, 1u << 31); }

static void ah(struct msg *m, uint32_t pd, int global, int port, int sgid)
{
	struct uroce_create_ah_req *r = BODY(m, struct uroce_create_ah_req);

	r->pd_handle = pd;
	r->attr.is_global = (uint8_t)global;
	r->attr.port_num = (uint8_t)port;
	r->attr.grh.sgid_index = (uint8_t)sgid;
	r->attr.grh.hop_limit = 1;
}
static void ah_noglobal(struct msg *m) { ah(m, X.pd, 0, 1, 0); }
static void ah_badpd(struct msg *m) { ah(m, 0, 1, 1, 0); }
static void ah_port(struct msg *m) { ah(m, X.pd, 1, 2, 0); }
static void ah_sgid(struct msg *m) { ah(m, X.pd, 1, 1, 16); }
static void ah_sgid1(struct msg *m) { ah(m, X.pd, 1, 1, 1); }

static void link2(struct msg *m) { BODY(m, struct uroce_admin_link_req)->up = 2; }
static void capture_ro(struct msg *m) { m->fds[m->nfds++] = devnull(); }

/* raw packet QPs: rules, WQs, indirection tables, RSS (uroce/abi_flow.h) */
static void flow_rc(struct msg *m)
{
	struct uroce_create_flow_req *r = BODY(m, struct uroce_create_flow_req);

	r->qp_handle = X.qp;
	r->port = 1;
}
static void flow_noqp(struct msg *m) { flow_rc(m); BODY(m, struct uroce_create_flow_req)->qp_handle = 99; }
static void flow_toolong(struct msg *m) { flow_rc(m); BODY(m, struct uroce_create_flow_req)->specs_len = 4096; }
static void handle99(struct msg *m) { BODY(m, struct uroce_handle_req)->handle = 99; }
static void wq(struct msg *m, uint32_t max_wr)
{
	struct uroce_create_wq_req *r = BODY(m, struct uroce_create_wq_req);

	r->pd_handle = X.pd;
	r->cq_handle = X.cq;
	r->max_wr = max_wr;
	r->max_sge = 1;
}
static void wq_noring(struct msg *m) { wq(m, 4); }
static void wq_zero(struct msg *m) { wq(m, 0); m->fds[m->nfds++] = dup(X.sealed_ring); }
static void wq_huge(struct msg *m) { wq(m, 1u << 30); m->fds[m->nfds++] = dup(X.sealed_ring); }
static void wq_mod_rc(struct msg *m)
{
	BODY(m, struct uroce_modify_wq_req)->handle = X.qp;
	BODY(m, struct uroce_modify_wq_req)->attr_mask = IBV_WQ_ATTR_STATE;
	BODY(m, struct uroce_modify_wq_req)->wq_state = IBV_WQS_RDY;
}
static void ind_log8(struct msg *m) { BODY(m, struct uroce_create_ind_table_req)->log_size = 8; }
static void ind_rc(struct msg *m) { BODY(m, struct uroce_create_ind_table_req)->wq_handles[0] = X.qp; }
static void rss_notable(struct msg *m)
{
	struct uroce_create_rss_qp_req *r = BODY(m, struct uroce_create_rss_qp_req);

	r->pd_handle = X.pd;
	r->ind_table_handle = 99;
	r->hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	r->key_len = 40;
}

static const struct hcase cases[] = {
	/* framing, before HELLO */
	{ "4-byte datagram", FRESH, UROCE_OP_HELLO, tiny, EBADMSG },
	{ "bad magic", FRESH, UROCE_OP_HELLO, bad_magic, EPROTO },
	{ "bad version", FRESH, UROCE_OP_HELLO, bad_version, EPROTONOSUPPORT },
	{ "opcode 0", FRESH, UROCE_OP_HELLO, op_zero, EOPNOTSUPP },
	{ "opcode 999", FRESH, UROCE_OP_HELLO, op_unknown, EOPNOTSUPP },
	{ "opcode 45 (gap)", FRESH, UROCE_OP_HELLO, op_gap, EOPNOTSUPP },
	{ "length field larger than datagram", FRESH, UROCE_OP_HELLO, len_field_lies, EMSGSIZE },
	{ "truncated HELLO", FRESH, UROCE_OP_HELLO, truncated, EMSGSIZE },
	{ "oversized datagram (3000 bytes)", FRESH, UROCE_OP_HELLO, oversized, EMSGSIZE },
	{ "HELLO 16 bytes too long", FRESH, UROCE_OP_HELLO, longer_both, EMSGSIZE },
	{ "status set in a request", FRESH, UROCE_OP_HELLO, status_set, EINVAL },
	{ "header reserved set", FRESH, UROCE_OP_HELLO, reserved_set, EINVAL },
	{ "ALLOC_PD before HELLO", FRESH, UROCE_OP_ALLOC_PD, nothing, EPROTO },
	{ "CREATE_QP before HELLO", FRESH, UROCE_OP_CREATE_QP, qp_badpd, EPROTO },
	{ "HELLO without async fd", FRESH, UROCE_OP_HELLO, hello_nofd, EBADF },
	{ "HELLO with /dev/null as async fd", FRESH, UROCE_OP_HELLO, hello_file, EBADF },
	{ "HELLO abi_version 77", FRESH, UROCE_OP_HELLO, hello_badabi, EPROTONOSUPPORT },
	{ "HELLO with another pid", FRESH, UROCE_OP_HELLO, hello_badpid, EPERM },
	{ "HELLO reserved set", FRESH, UROCE_OP_HELLO, hello_resv, EINVAL },
	{ "HELLO without mem and maps fds (REG_MR would fail)", FRESH, UROCE_OP_HELLO, hello_nomem, 0 },
	{ "HELLO without maps fd", FRESH, UROCE_OP_HELLO, hello_nomaps, EBADF },
	{ "HELLO with mem opened read-only", FRESH, UROCE_OP_HELLO, hello_mem_ro, EBADF },
	{ "HELLO with /dev/null as mem fd", FRESH, UROCE_OP_HELLO, hello_mem_file, EBADF },
	{ "HELLO with mem and maps swapped", FRESH, UROCE_OP_HELLO, hello_mem_swapped, EBADF },
	{ "HELLO with another process's maps", FRESH, UROCE_OP_HELLO, hello_mem_other, EPERM },
	{ "HELLO with 4 fds", FRESH, UROCE_OP_HELLO, hello_fourfds, EINVAL },
	{ "HELLO with 8 fds", FRESH, UROCE_OP_HELLO, hello_manyfds, EINVAL },
	{ "good HELLO", FRESH, UROCE_OP_HELLO, hello_body, 0 },
	/* after HELLO */
	{ "second HELLO", SESSION, UROCE_OP_HELLO, hello_body, EALREADY },
	{ "QUERY_PORT port 0", SESSION, UROCE_OP_QUERY_PORT, port0, EINVAL },
	{ "QUERY_PORT port 2", SESSION, UROCE_OP_QUERY_PORT, port2, EINVAL },
	{ "QUERY_PORT with an fd", SESSION, UROCE_OP_QUERY_PORT, capture_ro, EINVAL },
	{ "QUERY_PORT port 1", SESSION, UROCE_OP_QUERY_PORT, port1, 0 },
	{ "ALLOC_PD handle 1", SESSION, UROCE_OP_ALLOC_PD, h_one, EINVAL },
	{ "DEALLOC_PD handle 0", SESSION, UROCE_OP_DEALLOC_PD, h_zero, EINVAL },
	{ "DEALLOC_PD handle 0xffffffff", SESSION, UROCE_OP_DEALLOC_PD, h_huge, EINVAL },
	{ "DEALLOC_PD handle 999", SESSION, UROCE_OP_DEALLOC_PD, h_999, EINVAL },
	{ "DEALLOC_PD reserved set", SESSION, UROCE_OP_DEALLOC_PD, h_pd_resv, EINVAL },
	{ "DEALLOC_PD in use (MR, QP)", SESSION, UROCE_OP_DEALLOC_PD, h_pd, EBUSY },
	{ "DESTROY_CQ in use (QP)", SESSION, UROCE_OP_DESTROY_CQ, h_cq, EBUSY },
	{ "DEREG_MR handle 999", SESSION, UROCE_OP_DEREG_MR, h_999, EINVAL },
	{ "DESTROY_AH handle 0", SESSION, UROCE_OP_DESTROY_AH, h_zero, EINVAL },
	{ "DESTROY_QP handle 999", SESSION, UROCE_OP_DESTROY_QP, h_999, EINVAL },
	{ "REG_MR bad PD", SESSION, UROCE_OP_REG_MR, mr_badpd, EINVAL },
	{ "REG_MR length 0", SESSION, UROCE_OP_REG_MR, mr_len0, EINVAL },
	{ "REG_MR address wraps", SESSION, UROCE_OP_REG_MR, mr_wrap, EINVAL },
	{ "REG_MR longer than max_mr_size", SESSION, UROCE_OP_REG_MR, mr_toolong, EINVAL },
	{ "REG_MR REMOTE_WRITE without LOCAL_WRITE", SESSION, UROCE_OP_REG_MR, mr_rw_nolw, EINVAL },
	{ "REG_MR REMOTE_ATOMIC without LOCAL_WRITE", SESSION, UROCE_OP_REG_MR, mr_ra_nolw, EINVAL },
	{ "REG_MR ON_DEMAND of an unmapped page", SESSION, UROCE_OP_REG_MR, mr_odp, 0 },
	{ "REG_MR HUGETLB without ON_DEMAND", SESSION, UROCE_OP_REG_MR, mr_huge, EOPNOTSUPP },
	{ "REG_MR HUGETLB on implicit ODP", SESSION, UROCE_OP_REG_MR, mr_implicit_huge, EOPNOTSUPP },
	{ "REG_MR 0 + UINT64_MAX without ON_DEMAND", SESSION, UROCE_OP_REG_MR, mr_all_no_odp, EINVAL },
	{ "REG_MR FLUSH_GLOBAL | FLUSH_PERSISTENT", SESSION, UROCE_OP_REG_MR, mr_flush_global, EOPNOTSUPP },
	{ "REG_MR FLUSH_PERSISTENT", SESSION, UROCE_OP_REG_MR, mr_flush_persistent, EOPNOTSUPP },
	{ "REG_MR FLUSH_GLOBAL, REMOTE_WRITE without LOCAL_WRITE", SESSION, UROCE_OP_REG_MR, mr_flush_nolw, EINVAL },
	{ "REG_MR unknown access bit 1 << 10", SESSION, UROCE_OP_REG_MR, mr_bit10, EINVAL },
	{ "ADVISE_MR bad PD", SESSION, UROCE_OP_ADVISE_MR, adv_badpd, EINVAL },
	{ "ADVISE_MR advice 9", SESSION, UROCE_OP_ADVISE_MR, adv_advice, EOPNOTSUPP },
	{ "ADVISE_MR unknown flag", SESSION, UROCE_OP_ADVISE_MR, adv_flag, EINVAL },
	{ "ADVISE_MR num_sge 0", SESSION, UROCE_OP_ADVISE_MR, adv_nsge0, EINVAL },
	{ "ADVISE_MR num_sge 33", SESSION, UROCE_OP_ADVISE_MR, adv_nsge33, EINVAL },
	{ "ADVISE_MR lkey of a non-ODP MR", SESSION, UROCE_OP_ADVISE_MR, adv_not_odp, ENOENT },
	{ "ADVISE_MR lkey + 1", SESSION, UROCE_OP_ADVISE_MR, adv_badkey, ENOENT },
	{ "ADVISE_MR with an fd", SESSION, UROCE_OP_ADVISE_MR, adv_fd, EINVAL },
	{ "REG_MR MW_BIND", SESSION, UROCE_OP_REG_MR, mr_mwbind, 0 },
	{ "ALLOC_MW bad PD", SESSION, UROCE_OP_ALLOC_MW, mw_badpd, EINVAL },
	{ "ALLOC_MW type 0", SESSION, UROCE_OP_ALLOC_MW, mw_type0, EINVAL },
	{ "ALLOC_MW type 3", SESSION, UROCE_OP_ALLOC_MW, mw_type3, EINVAL },
	{ "ALLOC_MW reserved field", SESSION, UROCE_OP_ALLOC_MW, mw_resv, EINVAL },
	{ "ALLOC_MW with an fd", SESSION, UROCE_OP_ALLOC_MW, capture_ro, EINVAL },
	{ "ALLOC_MW type 2", SESSION, UROCE_OP_ALLOC_MW, mw_ok, 0 },
	{ "DEALLOC_MW handle 999", SESSION, UROCE_OP_DEALLOC_MW, h_999, EINVAL },
	{ "DEALLOC_MW handle 0", SESSION, UROCE_OP_DEALLOC_MW, h_zero, EINVAL },
	{ "REG_MR unknown access bit", SESSION, UROCE_OP_REG_MR, mr_unknown, EINVAL },
	{ "REG_MR with an fd", SESSION, UROCE_OP_REG_MR, mr_fd, EINVAL },
	{ "REG_MR relaxed ordering (optional bit)", SESSION, UROCE_OP_REG_MR, mr_ok, 0 },
	{ "REG_MR of an unmapped page", SESSION, UROCE_OP_REG_MR, mr_hole, EFAULT },
	{ "REG_MR of NULL, 4096 bytes", SESSION, UROCE_OP_REG_MR, mr_null, EFAULT },
	{ "REG_MR last page of a mapped buffer", SESSION, UROCE_OP_REG_MR, mr_past_end, 0 },
	{ "REG_MR read-only page, LOCAL_WRITE", SESSION, UROCE_OP_REG_MR, mr_ro_lw, EFAULT },
	{ "REG_MR read-only page, REMOTE_WRITE", SESSION, UROCE_OP_REG_MR, mr_ro_rw, EFAULT },
	{ "REG_MR read-only page, REMOTE_READ", SESSION, UROCE_OP_REG_MR, mr_ro_rr, 0 },
	{ "REREG_MR no flags", SESSION, UROCE_OP_REREG_MR, rr_noflags, EINVAL },
	{ "REREG_MR unknown flag", SESSION, UROCE_OP_REREG_MR, rr_badflag, EINVAL },
	{ "REREG_MR access without CHANGE_ACCESS", SESSION, UROCE_OP_REREG_MR, rr_stray_access, EINVAL },
	{ "REREG_MR to a PD that is not one", SESSION, UROCE_OP_REREG_MR, rr_badpd, EINVAL },
	{ "REREG_MR to an unmapped page", SESSION, UROCE_OP_REREG_MR, rr_hole, EFAULT },
	{ "REREG_MR of no MR", SESSION, UROCE_OP_REREG_MR, rr_handle, EINVAL },
	{ "REREG_MR REMOTE_WRITE without LOCAL_WRITE", SESSION, UROCE_OP_REREG_MR, rr_rw_only, EINVAL },
	{ "REREG_MR FLUSH_PERSISTENT", SESSION, UROCE_OP_REREG_MR, rr_flush, EOPNOTSUPP },
	{ "RESIZE_CQ without ring fd", SESSION, UROCE_OP_RESIZE_CQ, rz_nofd, EBADF },
	{ "RESIZE_CQ unsealed ring", SESSION, UROCE_OP_RESIZE_CQ, rz_unsealed, EBADF },
	{ "RESIZE_CQ ring too small", SESSION, UROCE_OP_RESIZE_CQ, rz_small, EINVAL },
	{ "RESIZE_CQ nent not pow2 >= cqe+1", SESSION, UROCE_OP_RESIZE_CQ, rz_badnent, EINVAL },
	{ "RESIZE_CQ of no CQ", SESSION, UROCE_OP_RESIZE_CQ, rz_handle, EINVAL },
	{ "RESIZE_CQ reserved set", SESSION, UROCE_OP_RESIZE_CQ, rz_resv, EINVAL },
	{ "RESIZE_CQ the session CQ to 100", SESSION, UROCE_OP_RESIZE_CQ, rz_ok, 0 },
	{ "MODIFY_CQ mask 0", SESSION, UROCE_OP_MODIFY_CQ, mcq_nomask, EINVAL },
	{ "MODIFY_CQ unknown mask bit", SESSION, UROCE_OP_MODIFY_CQ, mcq_badmask, EINVAL },
	{ "MODIFY_CQ period 4096 us", SESSION, UROCE_OP_MODIFY_CQ, mcq_period, EINVAL },
	{ "MODIFY_CQ of no CQ", SESSION, UROCE_OP_MODIFY_CQ, mcq_handle, EINVAL },
	{ "CREATE_CQ without ring fd", SESSION, UROCE_OP_CREATE_CQ, cq_nofd, EBADF },
	{ "CREATE_CQ unsealed ring", SESSION, UROCE_OP_CREATE_CQ, cq_unsealed, EBADF },
	{ "CREATE_CQ /dev/null as ring", SESSION, UROCE_OP_CREATE_CQ, cq_devnull, EBADF },
	{ "CREATE_CQ ring sealed against writing", SESSION, UROCE_OP_CREATE_CQ, cq_writesealed, EBADF },
	{ "CREATE_CQ ring too small", SESSION, UROCE_OP_CREATE_CQ, cq_small, EINVAL },
	{ "CREATE_CQ nent not pow2 >= cqe+1", SESSION, UROCE_OP_CREATE_CQ, cq_badnent, EINVAL },
	{ "CREATE_CQ cqe 0", SESSION, UROCE_OP_CREATE_CQ, cq_zero, EINVAL },
	{ "CREATE_CQ cqe > max_cqe", SESSION, UROCE_OP_CREATE_CQ, cq_toomany, EINVAL },
	{ "CREATE_CQ unknown flag", SESSION, UROCE_OP_CREATE_CQ, cq_flags, EINVAL },
	{ "CREATE_CQ channel is a pipe", SESSION, UROCE_OP_CREATE_CQ, cq_chan_pipe, EBADF },
	{ "CREATE_CQ with 3 fds", SESSION, UROCE_OP_CREATE_CQ, cq_threefds, EINVAL },
	{ "CREATE_QP RAW_PACKET with an SRQ", SESSION, UROCE_OP_CREATE_QP, qp_raw, EINVAL },
	{ "CREATE_QP XRC_SEND with an RQ", SESSION, UROCE_OP_CREATE_QP, qp_xrc, EINVAL },
	{ "CREATE_XRC_QP XRCD handle naming none", SESSION, UROCE_OP_CREATE_XRC_QP, xrcqp_bad, EINVAL },
	{ "CREATE_XRC_SRQ XRCD handle naming none", SESSION, UROCE_OP_CREATE_XRC_SRQ, xsrq_badxrcd, EINVAL },
	{ "CREATE_XRC_SRQ XRCD handle 0", SESSION, UROCE_OP_CREATE_XRC_SRQ, xsrq_noxrcd, EINVAL },
	{ "CREATE_TM_SRQ CQ handle naming none", SESSION, UROCE_OP_CREATE_TM_SRQ, tmsrq_badcq, EINVAL },
	{ "CREATE_TM_SRQ max_num_tags 0", SESSION, UROCE_OP_CREATE_TM_SRQ, tmsrq_tags0, EINVAL },
	{ "CREATE_TM_SRQ max_num_tags 128", SESSION, UROCE_OP_CREATE_TM_SRQ, tmsrq_tags128, EINVAL },
	{ "CREATE_TM_SRQ max_ops 0", SESSION, UROCE_OP_CREATE_TM_SRQ, tmsrq_ops0, EINVAL },
	{ "CREATE_TM_SRQ max_ops 32769", SESSION, UROCE_OP_CREATE_TM_SRQ, tmsrq_ops32769, EINVAL },
	{ "CREATE_TM_SRQ without ring fd", SESSION, UROCE_OP_CREATE_TM_SRQ, tmsrq_nofd, EBADF },
	{ "TM_OP SRQ handle naming none", SESSION, UROCE_OP_TM_OP, tmop_badh, EINVAL },
	{ "TM_OP a CQ's handle", SESSION, UROCE_OP_TM_OP, tmop_cqh, EINVAL },
	{ "CREATE_QP bad PD", SESSION, UROCE_OP_CREATE_QP, qp_badpd, EINVAL },
	{ "CREATE_QP bad CQ", SESSION, UROCE_OP_CREATE_QP, qp_badcq, EINVAL },
	{ "CREATE_QP SRQ handle naming none", SESSION, UROCE_OP_CREATE_QP, qp_srq, EINVAL },
	{ "CREATE_SRQ without ring fd", SESSION, UROCE_OP_CREATE_SRQ, srq_nofd, EBADF },
	{ "CREATE_SRQ unsealed ring", SESSION, UROCE_OP_CREATE_SRQ, srq_unsealed, EBADF },
	{ "CREATE_SRQ ring too small", SESSION, UROCE_OP_CREATE_SRQ, srq_small, EINVAL },
	{ "CREATE_SRQ max_wr not a power of two", SESSION, UROCE_OP_CREATE_SRQ, srq_npow2, EINVAL },
	{ "CREATE_SRQ max_wr 0", SESSION, UROCE_OP_CREATE_SRQ, srq_wr0, EINVAL },
	{ "CREATE_SRQ max_wr > max_srq_wr", SESSION, UROCE_OP_CREATE_SRQ, srq_toomany, EINVAL },
	{ "CREATE_SRQ max_sge 0", SESSION, UROCE_OP_CREATE_SRQ, srq_sge0, EINVAL },
	{ "CREATE_SRQ max_sge 17", SESSION, UROCE_OP_CREATE_SRQ, srq_sge17, EINVAL },
	{ "CREATE_SRQ bad PD", SESSION, UROCE_OP_CREATE_SRQ, srq_badpd, EINVAL },
	{ "CREATE_SRQ reserved field", SESSION, UROCE_OP_CREATE_SRQ, srq_resv, EINVAL },
	{ "CREATE_SRQ 16 x 2 SGEs", SESSION, UROCE_OP_CREATE_SRQ, srq_ok, 0 },
	{ "MODIFY_SRQ bad handle", SESSION, UROCE_OP_MODIFY_SRQ, msrq_badh, EINVAL },
	{ "MODIFY_SRQ IBV_SRQ_MAX_WR (resize)", SESSION, UROCE_OP_MODIFY_SRQ, msrq_maxwr, EINVAL },
	{ "MODIFY_SRQ limit 17 > max_wr 16", SESSION, UROCE_OP_MODIFY_SRQ, msrq_limit, EINVAL },
	{ "MODIFY_SRQ unknown mask bit", SESSION, UROCE_OP_MODIFY_SRQ, msrq_unknown, EINVAL },
	{ "QUERY_SRQ bad handle", SESSION, UROCE_OP_QUERY_SRQ, hsrq_badh, EINVAL },
	{ "CREATE_QP on the SRQ with an RQ", SESSION, UROCE_OP_CREATE_QP, qp_srq_rq, EINVAL },
	{ "DESTROY_SRQ bad handle", SESSION, UROCE_OP_DESTROY_SRQ, hsrq_badh, EINVAL },
	{ "CREATE_QP sq_sig_all 2", SESSION, UROCE_OP_CREATE_QP, qp_sig2, EINVAL },
	{ "CREATE_QP max_send_wr 4097", SESSION, UROCE_OP_CREATE_QP, qp_wr, EINVAL },
	{ "CREATE_QP max_recv_wr 2^31", SESSION, UROCE_OP_CREATE_QP, qp_rwr, EINVAL },
	{ "CREATE_QP max_send_sge 17", SESSION, UROCE_OP_CREATE_QP, qp_sge, EINVAL },
	{ "CREATE_QP max_inline_data 257", SESSION, UROCE_OP_CREATE_QP, qp_inl, EINVAL },
	{ "CREATE_QP unsealed ring", SESSION, UROCE_OP_CREATE_QP, qp_unsealed, EBADF },
	{ "CREATE_QP ring too small", SESSION, UROCE_OP_CREATE_QP, qp_smallring, EINVAL },
	{ "MODIFY_QP bad handle", SESSION, UROCE_OP_MODIFY_QP, mod_badh, EINVAL },
	{ "MODIFY_QP a CQ's handle", SESSION, UROCE_OP_MODIFY_QP, mod_cq_handle, EINVAL },
	{ "MODIFY_QP RESET->RTR", SESSION, UROCE_OP_MODIFY_QP, mod_skip, EINVAL },
	{ "MODIFY_QP RESET->INIT missing attrs", SESSION, UROCE_OP_MODIFY_QP, mod_missing, EINVAL },
	{ "MODIFY_QP RESET->INIT extra SQ_PSN", SESSION, UROCE_OP_MODIFY_QP, mod_extra, EINVAL },
	{ "MODIFY_QP unknown mask bit", SESSION, UROCE_OP_MODIFY_QP, mod_unknown, EINVAL },
	{ "MODIFY_QP qp_state 9", SESSION, UROCE_OP_MODIFY_QP, mod_state, EINVAL },
	{ "MODIFY_QP port 2", SESSION, UROCE_OP_MODIFY_QP, mod_port, EINVAL },
	{ "MODIFY_QP pkey_index 1", SESSION, UROCE_OP_MODIFY_QP, mod_pkey, EINVAL },
	{ "MODIFY_QP access MW_BIND", SESSION, UROCE_OP_MODIFY_QP, mod_acc, EINVAL },
	{ "MODIFY_QP CUR_STATE from RESET", SESSION, UROCE_OP_MODIFY_QP, mod_curstate, EINVAL },
	{ "QUERY_QP handle 0", SESSION, UROCE_OP_QUERY_QP, qq_badh, EINVAL },
	{ "QUERY_QP unknown mask bit", SESSION, UROCE_OP_QUERY_QP, qq_badmask, EINVAL },
	{ "CREATE_AH without GRH", SESSION, UROCE_OP_CREATE_AH, ah_noglobal, EINVAL },
	{ "CREATE_AH bad PD", SESSION, UROCE_OP_CREATE_AH, ah_badpd, EINVAL },
	{ "CREATE_AH port 2", SESSION, UROCE_OP_CREATE_AH, ah_port, EINVAL },
	{ "CREATE_AH sgid_index 16", SESSION, UROCE_OP_CREATE_AH, ah_sgid, EINVAL },
	{ "CREATE_AH sgid_index 1 (empty GID entry)", SESSION, UROCE_OP_CREATE_AH, ah_sgid1, EINVAL },
	{ "ADMIN_LINK up=2", SESSION, UROCE_OP_ADMIN_LINK, link2, EINVAL },
	{ "ADMIN_CAPTURE_START without fd", FRESH, UROCE_OP_ADMIN_CAPTURE_START, nothing, EBADF },
	{ "ADMIN_CAPTURE_START read-only fd", FRESH, UROCE_OP_ADMIN_CAPTURE_START, capture_ro, EBADF },
	{ "ADMIN_CAPTURE_STOP with none running", FRESH, UROCE_OP_ADMIN_CAPTURE_STOP, nothing, ENOENT },
	{ "ADMIN_STATUS with an fd", FRESH, UROCE_OP_ADMIN_STATUS, with_fd, EINVAL },
	{ "CREATE_FLOW on an RC QP", SESSION, UROCE_OP_CREATE_FLOW, flow_rc, EINVAL },
	{ "CREATE_FLOW naming no QP", SESSION, UROCE_OP_CREATE_FLOW, flow_noqp, EINVAL },
	{ "CREATE_FLOW specs_len past the message", SESSION, UROCE_OP_CREATE_FLOW, flow_toolong, EINVAL },
	{ "DESTROY_FLOW naming no rule", SESSION, UROCE_OP_DESTROY_FLOW, handle99, EINVAL },
	{ "CREATE_WQ without its ring", SESSION, UROCE_OP_CREATE_WQ, wq_noring, EBADF },
	{ "CREATE_WQ max_wr 0", SESSION, UROCE_OP_CREATE_WQ, wq_zero, EINVAL },
	{ "CREATE_WQ max_wr 2^30", SESSION, UROCE_OP_CREATE_WQ, wq_huge, EINVAL },
	{ "MODIFY_WQ on an RC QP", SESSION, UROCE_OP_MODIFY_WQ, wq_mod_rc, EINVAL },
	{ "DESTROY_WQ naming no WQ", SESSION, UROCE_OP_DESTROY_WQ, handle99, EINVAL },
	{ "CREATE_RWQ_IND_TABLE log size 8", SESSION, UROCE_OP_CREATE_RWQ_IND_TABLE, ind_log8, EINVAL },
	{ "CREATE_RWQ_IND_TABLE with an RC QP", SESSION, UROCE_OP_CREATE_RWQ_IND_TABLE, ind_rc, EINVAL },
	{ "DESTROY_RWQ_IND_TABLE naming none", SESSION, UROCE_OP_DESTROY_RWQ_IND_TABLE, handle99, EINVAL },
	{ "CREATE_RSS_QP naming no table", SESSION, UROCE_OP_CREATE_RSS_QP, rss_notable, EINVAL },
};

static const char *sock_path;
static int failures;

static void fail(const char *name, const char *fmt, long want, long got)
{
	fprintf(stderr, "FAIL %s: %s: expected %ld, got %ld\n", name, fmt, want, got);
	failures++;
}

/* Send one row's message on S and check the reply. */
static void run_case(const struct hcase *c, int s, uint32_t seq)
{
	struct msg m;
	_Alignas(8) unsigned char resp[UROCE_MSG_MAX];
	const struct uroce_hdr *rh = (const void *)resp;
	int fds[4], nfds = 0, i;
	ssize_t n;
	size_t want_len;

	memset(&m, 0, sizeof(m));
	dp_hdr(m.buf, c->op, seq);
	m.len = uroce_req_size(c->op);
	c->build(&m);
	if (dp_send_raw(s, m.buf, m.len, m.fds, m.nfds) < 0) {
		fail(c->name, "send errno", 0, errno);
		return;
	}
	for (i = 0; i < m.nfds; i++)
		close(m.fds[i]);
	n = dp_recv(s, resp, sizeof(resp), fds, &nfds);
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	if (n < (ssize_t)sizeof(struct uroce_hdr)) {
		fail(c->name, "reply bytes", (long)sizeof(struct uroce_hdr), (long)n);
		return;
	}
	if (rh->status != c->expect) {
		fprintf(stderr, "FAIL %s: status: expected %d (%s), got %d (%s)\n", c->name, c->expect,
			strerror(c->expect), rh->status, strerror(rh->status));
		failures++;
		return;
	}
	if (rh->magic != UROCE_MSG_MAGIC || rh->version != UROCE_ABI_VERSION)
		fail(c->name, "reply magic/version", UROCE_MSG_MAGIC, (long)rh->magic);
	if (c->expect != EBADMSG && rh->seq != seq)
		fail(c->name, "echoed seq", seq, rh->seq);
	want_len = c->expect == EBADMSG ? sizeof(struct uroce_hdr)
					: uroce_resp_size(rh->opcode);
	if ((size_t)n != want_len || rh->length != n)
		fail(c->name, "reply length", (long)want_len, (long)n);
	if (c->expect && nfds)
		fail(c->name, "descriptors in an error reply", 0, nfds);
	printf("ok   %-45s -> %s\n", c->name, c->expect ? strerror(c->expect) : "0");
}

/* Set up the session the SESSION rows use: PD, MR, CQ (+ a free CQ), RC QP. */
static int setup(void)
{
	struct uroce_reg_mr_resp mrr;
	struct uroce_create_qp_resp qpr;
	int rc;

	rc = dp_open(&X.ss, sock_path);
	if (rc) {
		fprintf(stderr, "setup: HELLO: %s\n", strerror(rc));
		return -1;
	}
	if (dp_alloc_pd(&X.ss, &X.pd) || dp_reg_mr(&X.ss, X.pd, MRMEM, 8192, IBV_ACCESS_LOCAL_WRITE, &mrr) ||
	    dp_create_cq(&X.ss, 8, -1, &X.cq) || dp_create_cq(&X.ss, 8, -1, &X.cq_free) ||
	    dp_create_qp(&X.ss, IBV_QPT_RC, X.pd, X.cq, &qpr)) {
		fprintf(stderr, "setup: creating the session's objects failed\n");
		return -1;
	}
	X.mr = mrr.handle;
	X.mr_key = mrr.lkey;
	X.qp = qpr.handle;
	X.sealed_ring = dp_ring_memfd(uroce_cq_ring_size(16), 1);
	return 0;
}

/* An unprivileged uid may use verbs but not administer the daemon. */
static void check_admin_eperm(void)
{
	pid_t pid;
	int st;

	if (geteuid() != 0) {
		printf("not run: ADMIN_SHUTDOWN from another uid -> EPERM (needs root to switch uid)\n");
		return;
	}
	pid = fork();
	if (pid == 0) {
		struct uroce_hdr req, resp;
		int s;

		if (setgid(65534) || setuid(65534))
			_exit(3);
		s = dp_connect(sock_path);
		if (s < 0)
			_exit(4);
		dp_hdr(&req, UROCE_OP_ADMIN_SHUTDOWN, 1);
		_exit(dp_call(s, &req, NULL, 0, &resp, sizeof(resp), NULL, NULL) == EPERM ? 0 : 5);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "FAIL ADMIN_SHUTDOWN as uid 65534: expected EPERM (child status %d)\n",
			WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		failures++;
		return;
	}
	printf("ok   %-45s -> %s\n", "ADMIN_SHUTDOWN as uid 65534", strerror(EPERM));
}

/* Another client cannot name this session's objects. */
static void check_isolation(void)
{
	struct dp_session other;
	int rc;

	if (dp_open(&other, sock_path)) {
		fail("second client HELLO", "status", 0, -1);
		return;
	}
	rc = dp_handle_op(&other, UROCE_OP_DEALLOC_PD, X.pd);
	if (rc != EINVAL)
		fail("DEALLOC_PD of another client's PD", "status", EINVAL, rc);
	rc = dp_handle_op(&other, UROCE_OP_DESTROY_QP, X.qp);
	if (rc != EINVAL)
		fail("DESTROY_QP of another client's QP", "status", EINVAL, rc);
	rc = dp_handle_op(&other, UROCE_OP_DEREG_MR, X.mr);
	if (rc != EINVAL)
		fail("DEREG_MR of another client's MR", "status", EINVAL, rc);
	dp_close(&other);
	printf("ok   %-45s -> %s\n", "another client's handles", strerror(EINVAL));
}

/* A well-behaved client after all that: full lifecycle, exact results. */
static void check_good_client(void)
{
	struct dp_session g;
	struct uroce_reg_mr_resp m1, m2;
	struct uroce_create_qp_resp q;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	uint32_t pd, cq;
	int rc;

	rc = dp_open(&g, sock_path);
	if (rc) {
		fail("good client HELLO", "status", 0, rc);
		return;
	}
	if (g.clock_fd < 0 || g.db_fd < 0)
		fail("good client HELLO", "descriptors", 2, (g.clock_fd >= 0) + (g.db_fd >= 0));
	if (strcmp(g.hello.dev_name, "uroce0") || g.hello.dev.vendor_id != UROCE_VENDOR_ID ||
	    g.hello.dev.max_qp_rd_atom < 1 || g.hello.port.state != IBV_PORT_ACTIVE)
		fail("good client HELLO", "device attributes", 1, 0);
	rc = dp_alloc_pd(&g, &pd);
	rc = rc ? rc : dp_reg_mr(&g, pd, MRMEM + 8192, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, &m1);
	rc = rc ? rc : dp_reg_mr(&g, pd, MRMEM + 12288, 4096, IBV_ACCESS_LOCAL_WRITE, &m2);
	rc = rc ? rc : dp_create_cq(&g, 100, -1, &cq);
	rc = rc ? rc : dp_create_qp(&g, IBV_QPT_RC, pd, cq, &q);
	if (rc) {
		fail("good client create", "status", 0, rc);
		dp_close(&g);
		return;
	}
	if (m1.lkey != m1.rkey || m1.lkey == m2.lkey || (m1.lkey >> 8) == 0 || q.qpn < 2 ||
	    q.qpn > 0xFFFFFF || q.cap.max_send_wr != 16)
		fail("good client objects", "keys/qpn/caps", 1, 0);
	rc = dp_modify_qp(&g, q.handle, &a, INIT_MASK);
	if (rc)
		fail("good client RESET->INIT", "status", 0, rc);
	if ((rc = dp_handle_op(&g, UROCE_OP_DESTROY_QP, q.handle)) ||
	    (rc = dp_handle_op(&g, UROCE_OP_DESTROY_CQ, cq)) ||
	    (rc = dp_handle_op(&g, UROCE_OP_DEREG_MR, m1.handle)) ||
	    (rc = dp_handle_op(&g, UROCE_OP_DEREG_MR, m2.handle)) ||
	    (rc = dp_handle_op(&g, UROCE_OP_DEALLOC_PD, pd)))
		fail("good client destroy", "status", 0, rc);
	dp_close(&g);
	printf("ok   %-45s -> 0\n", "good client lifecycle after the hostile rows");
}

/* xorshift64*: deterministic random bodies (fixed seed, reproducible). */
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 0x2545F4914F6CDD1Dull) >> 32);
}

/*
 * Random messages with a valid header for a random verbs or admin opcode
 * (never SHUTDOWN) and a random body whose first word is a small handle, so
 * the handlers run against live objects; random descriptors attached. Every
 * one must get a reply of the opcode's size with status 0 or an errno, and
 * the daemon must survive. Objects created by lucky messages are freed when
 * the session closes.
 */
static void fuzz(int iterations)
{
	static const unsigned int opsel[] = {
		UROCE_OP_HELLO, UROCE_OP_QUERY_PORT, UROCE_OP_ALLOC_PD, UROCE_OP_DEALLOC_PD,
		UROCE_OP_REG_MR, UROCE_OP_DEREG_MR, UROCE_OP_CREATE_CQ, UROCE_OP_DESTROY_CQ,
		UROCE_OP_CREATE_QP, UROCE_OP_MODIFY_QP, UROCE_OP_QUERY_QP, UROCE_OP_DESTROY_QP,
		UROCE_OP_CREATE_AH, UROCE_OP_DESTROY_AH, UROCE_OP_ADMIN_STATUS, UROCE_OP_ADMIN_LINK,
		UROCE_OP_ADMIN_CAPTURE_STOP, UROCE_OP_REREG_MR, UROCE_OP_RESIZE_CQ, UROCE_OP_MODIFY_CQ, 0, 77,
	};
	struct dp_session f;
	int it, bad = 0, ok = 0;

	if (dp_open(&f, sock_path)) {
		fail("fuzz session HELLO", "status", 0, -1);
		return;
	}
	for (it = 0; it < iterations; it++) {
		struct msg m;
		_Alignas(8) unsigned char resp[UROCE_MSG_MAX];
		const struct uroce_hdr *rh = (const void *)resp;
		unsigned int op = opsel[rnd() % (sizeof(opsel) / sizeof(opsel[0]))];
		size_t i, len = uroce_req_size(op) ? uroce_req_size(op) : sizeof(struct uroce_hdr);
		int fds[4], nfds = 0, k, nf = (int)(rnd() % 4);
		ssize_t n;

		memset(&m, 0, sizeof(m));
		for (i = 0; i < len; i++)
			m.buf[i] = (unsigned char)rnd();
		dp_hdr(m.buf, op, (uint32_t)it);
		HDR(&m)->length = (uint32_t)len;
		if (len >= sizeof(struct uroce_hdr) + 8) {
			uint32_t *w = (uint32_t *)(m.buf + sizeof(struct uroce_hdr));

			w[0] = rnd() % 4;         /* handle / pd / port_num / ... */
			if (rnd() % 2)
				w[1] = rnd() % 4; /* a second small field */
		}
		if (op == UROCE_OP_CREATE_CQ && rnd() % 2) {
			struct uroce_create_cq_req *r = BODY(&m, struct uroce_create_cq_req);

			r->cqe = rnd() % 64;
			r->nent = uroce_roundup_pow2(r->cqe + 1);
			r->flags = rnd() % 2;
		}
		for (k = 0; k < nf; k++) {
			switch (rnd() % 3) {
			case 0: m.fds[m.nfds++] = dp_ring_memfd((rnd() % 8 + 1) * 4096ull, (int)(rnd() % 3)); break;
			case 1: {
				int sp[2];

				if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0) {
					close(sp[0]);
					m.fds[m.nfds++] = sp[1];
				}
				break;
			}
			default: m.fds[m.nfds++] = devnull(); break;
			}
		}
		m.len = len;
		if (dp_send_raw(f.s, m.buf, m.len, m.fds, m.nfds) < 0) {
			fail("fuzz send", "errno", 0, errno);
			break;
		}
		for (k = 0; k < m.nfds; k++)
			close(m.fds[k]);
		n = dp_recv(f.s, resp, sizeof(resp), fds, &nfds);
		for (k = 0; k < nfds; k++)
			close(fds[k]);
		if (n < (ssize_t)sizeof(struct uroce_hdr) || rh->length != n ||
		    (size_t)n != uroce_resp_size(rh->opcode) || rh->status < 0 || rh->status > 200) {
			if (bad++ < 5)
				fprintf(stderr, "FAIL fuzz #%d op %u: reply %zd bytes status %d\n", it, op, n,
					n >= (ssize_t)sizeof(*rh) ? rh->status : -1);
			if (n <= 0)
				break;
		} else if (rh->status == 0) {
			ok++;
		}
	}
	{
		/* random ADMIN_LINK messages may have left the port down */
		struct uroce_admin_link_req up = { 0 };
		struct uroce_hdr r;

		dp_hdr(&up, UROCE_OP_ADMIN_LINK, 1);
		up.up = 1;
		if (dp_call(f.s, &up, NULL, 0, &r, sizeof(r), NULL, NULL) != 0)
			fail("link up after fuzz", "status", 0, r.status);
	}
	dp_close(&f);
	if (bad)
		failures++;
	printf("ok   %-45s -> %d accepted, %d refused, %d malformed replies\n", "random messages",
	       ok, it - ok - bad, bad);
}

int main(int argc, char **argv)
{
	struct dp_totals t;
	size_t i;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: hostile_client SOCK\n");
		return 2;
	}
	sock_path = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	{
		void *p = mmap(NULL, 2 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED || munmap((char *)p + 4096, 4096)) {
			perror("mmap");
			return 2;
		}
		ro_page = (uintptr_t)p;
		hole = ro_page + 4096;
	}
	if (setup())
		return 1;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct hcase *c = &cases[i];
		int s = c->conn == FRESH ? dp_connect(sock_path) : X.ss.s;

		if (s < 0) {
			fail(c->name, "connect errno (daemon gone?)", 0, errno);
			break;
		}
		run_case(c, s, 100 + (uint32_t)i);
		if (c->conn == FRESH)
			close(s);
	}
	check_admin_eperm();
	check_isolation();
	fuzz(20000);
	check_good_client();
	dp_close(&X.ss);
	close(X.sealed_ring);
	/* Closing the hostile session freed its objects: totals back to 0
	 * (the daemon handles our close before the next request). */
	/* Our close and the status request race inside the daemon's loop:
	 * ask until the close has been handled (at most 5 s). */
	for (i = 0; i < 50; i++) {
		rc = dp_status_totals(sock_path, &t);
		if (rc || !(t.clients || t.pd || t.mr || t.cq || t.qp || t.ah))
			break;
		usleep(100000);
	}
	if (rc)
		fail("status after close", "status", 0, rc);
	else if (t.clients || t.pd || t.mr || t.cq || t.qp || t.ah)
		fail("totals after close", "sum of objects", 0,
		     (long)(t.clients + t.pd + t.mr + t.cq + t.qp + t.ah));
	printf("%zu hostile rows, %d failure(s)\n", sizeof(cases) / sizeof(cases[0]), failures);
	return failures ? 1 : 0;
}
