/*
 * traffic_atomic.c - RC atomics through libibverbs, the provider and a
 * running uroced (Check, run inside `uroce run` by traffic_atomic.sh).
 *
 * Device attributes (atomic_cap IBV_ATOMIC_HCA, the rd_atom limits);
 * CMP_AND_SWP equal and not equal, FETCH_AND_ADD across 2^64, with the
 * completion's opcode (IBV_WC_COMP_SWAP / IBV_WC_FETCH_ADD) and byte_len
 * 8 (ibv_poll_cq(3)); the errors a ConnectX reports: a misaligned remote
 * address, a QP without IBV_ACCESS_REMOTE_ATOMIC and a responder with
 * max_dest_rd_atomic 0 give IBV_WC_REM_INV_REQ_ERR, an MR without it
 * IBV_WC_REM_ACCESS_ERR; and the race: NPROC processes with NQP QPs each
 * send ITERS FETCH_ADDs of 1 to one word of a target process, up to 16 in
 * flight per QP: the word ends at exactly NPROC * NQP * ITERS and the
 * originals returned are 0 .. total-1, each exactly once (IBV_ATOMIC_HCA:
 * atomic with respect to every atomic of the device).
 *
 * `traffic_atomic race NPROC NQP ITERS` runs only the race, without Check
 * (traffic_atomic_lossy.sh runs it under `uroce up --loss`, where lost
 * ATOMIC Acknowledges make the requesters retry: the same exact sum shows
 * that each duplicate was answered from the replay cache, not executed).
 */
#include "check_main.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "traffic_verbs.h"

#define DEV "uroce0"
#define WAIT_MS 60000
#define DEPTH 16		/* atomics in flight per QP (max_rd_atomic) */
#define MAX_QP 8

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	union ibv_gid gid;
	uint64_t *buf;		/* 512 words */
};

static int side_open(struct side *s, unsigned int mr_access, int cqe)
{
	s->ctx = tv_open(DEV);
	if (!s->ctx || ibv_query_gid(s->ctx, 1, 0, &s->gid))
		return -1;
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, cqe, NULL, NULL, 0);
	if (posix_memalign((void **)&s->buf, 4096, 4096))
		return -1;
	memset(s->buf, 0, 4096);
	s->mr = ibv_reg_mr(s->pd, s->buf, 4096, mr_access);
	return s->pd && s->cq && s->mr ? 0 : -1;
}

static void side_close(struct side *s)
{
	ibv_dereg_mr(s->mr);
	ibv_destroy_cq(s->cq);
	ibv_dealloc_pd(s->pd);
	ibv_close_device(s->ctx);
	free(s->buf);
}

static struct ibv_qp *rc_qp(struct side *s, uint32_t depth)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = depth, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	return ibv_create_qp(s->pd, &qa);
}

/* RESET -> RTS towards DQPN at DGID: path MTU 1024, PSNs 0, ACK timeout
 * 12 (16.8 ms), retry 7, rnr_retry 7, ACCESS, max_dest_rd_atomic DEST_RD,
 * max_rd_atomic RD. Returns 0 or ibv_modify_qp's errno. */
static int rc_connect(struct ibv_qp *qp, uint32_t dqpn, const union ibv_gid *dgid,
		      unsigned int access, uint8_t rd, uint8_t dest_rd)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = access };
	int err;

	if ((err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				 IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)))
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *dgid;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	a.max_dest_rd_atomic = dest_rd;
	a.min_rnr_timer = 12;
	if ((err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)))
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 12;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = rd;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int post_atomic(struct ibv_qp *qp, uint64_t wr_id, enum ibv_wr_opcode op,
		       struct side *l, unsigned slot, uint64_t raddr, uint32_t rkey,
		       uint64_t compare_add, uint64_t swap)
{
	struct ibv_sge sg = { (uintptr_t)&l->buf[slot], 8, l->mr->lkey };
	struct ibv_send_wr w = {
		.wr_id = wr_id, .sg_list = &sg, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = raddr, .compare_add = compare_add,
			       .swap = swap, .rkey = rkey },
	};
	struct ibv_send_wr *bad;

	return ibv_post_send(qp, &w, &bad);
}

#define ACC_ATOMIC (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC)

START_TEST(test_device_caps)
{
	struct ibv_context *ctx = tv_open(DEV);
	struct ibv_device_attr a;

	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(ibv_query_device(ctx, &a), 0);
	ck_assert_int_eq(a.atomic_cap, IBV_ATOMIC_HCA);
	ck_assert_int_eq(a.max_qp_rd_atom, 16);
	ck_assert_int_eq(a.max_qp_init_rd_atom, 16);
	ck_assert_int_eq(a.max_res_rd_atom, a.max_qp * 16);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

START_TEST(test_values)
{
	struct side r, t;
	struct ibv_qp *qr, *qt;
	struct ibv_wc wc;
	static const struct { enum ibv_wr_opcode op; uint64_t start, ca, swap, want_word;
			      enum ibv_wc_opcode wc_op; } c[] = {
		{ IBV_WR_ATOMIC_CMP_AND_SWP, 0x1122334455667788ull, 0x1122334455667788ull,
		  0xA5A5A5A5DEADBEEFull, 0xA5A5A5A5DEADBEEFull, IBV_WC_COMP_SWAP },
		{ IBV_WR_ATOMIC_CMP_AND_SWP, 0x1122334455667788ull, 0x1122334455667789ull,
		  0xA5A5A5A5DEADBEEFull, 0x1122334455667788ull, IBV_WC_COMP_SWAP },
		{ IBV_WR_ATOMIC_FETCH_AND_ADD, 0xFFFFFFFFFFFFFFF0ull, 0x20, 0x999, 0x10,
		  IBV_WC_FETCH_ADD },
		{ IBV_WR_ATOMIC_FETCH_AND_ADD, 0xFFFFFFFFull, 1, 0, 0x100000000ull,
		  IBV_WC_FETCH_ADD },
	};

	ck_assert_int_eq(side_open(&r, ACC_ATOMIC, 16), 0);
	ck_assert_int_eq(side_open(&t, ACC_ATOMIC, 16), 0);
	qr = rc_qp(&r, 4);
	qt = rc_qp(&t, 4);
	ck_assert_ptr_nonnull(qr);
	ck_assert_ptr_nonnull(qt);
	ck_assert_int_eq(rc_connect(qr, qt->qp_num, &t.gid, ACC_ATOMIC, 1, 1), 0);
	ck_assert_int_eq(rc_connect(qt, qr->qp_num, &r.gid, ACC_ATOMIC, 1, 1), 0);
	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		t.buf[8] = c[i].start;
		r.buf[0] = 0xEEEEEEEEEEEEEEEEull;
		ck_assert_int_eq(post_atomic(qr, 100 + i, c[i].op, &r, 0,
					     (uintptr_t)&t.buf[8], t.mr->rkey, c[i].ca,
					     c[i].swap), 0);
		ck_assert_int_eq(tv_poll_one(r.cq, WAIT_MS, &wc), 0);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(wc.wr_id, 100 + i);
		ck_assert_int_eq(wc.opcode, c[i].wc_op);
		ck_assert_uint_eq(wc.byte_len, 8);
		ck_assert_uint_eq(wc.qp_num, qr->qp_num);
		ck_assert_uint_eq(r.buf[0], c[i].start);
		ck_assert_uint_eq(r.buf[1], 0);
		ck_assert_uint_eq(__atomic_load_n(&t.buf[8], __ATOMIC_RELAXED), c[i].want_word);
		ck_assert_uint_eq(t.buf[7], 0);
		ck_assert_uint_eq(t.buf[9], 0);
	}
	ck_assert_int_eq(ibv_poll_cq(t.cq, 1, &wc), 0);	/* nothing on the target */
	ck_assert_int_eq(ibv_destroy_qp(qr), 0);
	ck_assert_int_eq(ibv_destroy_qp(qt), 0);
	side_close(&r);
	side_close(&t);
}
END_TEST

static const struct {
	const char *name;
	unsigned int target_mr, target_qp;
	uint8_t dest_rd;
	unsigned off;
	enum ibv_wc_status want;
} errs[] = {
	{ "misaligned remote address", ACC_ATOMIC | IBV_ACCESS_REMOTE_READ, ACC_ATOMIC, 1, 4,
	  IBV_WC_REM_INV_REQ_ERR },
	{ "MR without REMOTE_ATOMIC", IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	  IBV_ACCESS_REMOTE_READ, ACC_ATOMIC, 1, 0, IBV_WC_REM_ACCESS_ERR },
	{ "QP without REMOTE_ATOMIC", ACC_ATOMIC, IBV_ACCESS_LOCAL_WRITE |
	  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, 1, 0, IBV_WC_REM_INV_REQ_ERR },
	{ "max_dest_rd_atomic 0", ACC_ATOMIC, ACC_ATOMIC, 0, 0, IBV_WC_REM_INV_REQ_ERR },
};

START_TEST(test_errors)
{
	struct side r, t;
	struct ibv_qp *qr, *qt;
	struct ibv_wc wc;

	ck_assert_int_eq(side_open(&r, ACC_ATOMIC, 16), 0);
	ck_assert_int_eq(side_open(&t, errs[_i].target_mr, 16), 0);
	qr = rc_qp(&r, 4);
	qt = rc_qp(&t, 4);
	ck_assert_int_eq(rc_connect(qr, qt->qp_num, &t.gid, ACC_ATOMIC, 1, 1), 0);
	ck_assert_int_eq(rc_connect(qt, qr->qp_num, &r.gid, errs[_i].target_qp, 1,
				    errs[_i].dest_rd), 0);
	t.buf[0] = 41;
	ck_assert_int_eq(post_atomic(qr, 7, IBV_WR_ATOMIC_FETCH_AND_ADD, &r, 0,
				     (uintptr_t)t.buf + errs[_i].off, t.mr->rkey, 1, 0), 0);
	ck_assert_int_eq(tv_poll_one(r.cq, WAIT_MS, &wc), 0);
	ck_assert_msg(wc.status == errs[_i].want, "%s: status %s, want %s", errs[_i].name,
		      ibv_wc_status_str(wc.status), ibv_wc_status_str(errs[_i].want));
	ck_assert_uint_eq(wc.wr_id, 7);
	ck_assert_uint_eq(t.buf[0], 41);
	ck_assert_uint_eq(t.buf[1], 0);
	ck_assert_int_eq(ibv_destroy_qp(qr), 0);
	ck_assert_int_eq(ibv_destroy_qp(qt), 0);
	side_close(&r);
	side_close(&t);
}
END_TEST

/* ---- the race ---- */

static int write_all(int fd, const void *p, size_t n)
{
	for (size_t done = 0; done < n;) {
		ssize_t k = write(fd, (const char *)p + done, n - done);

		if (k <= 0)
			return -1;
		done += (size_t)k;
	}
	return 0;
}

static int read_all(int fd, void *p, size_t n)
{
	for (size_t done = 0; done < n;) {
		ssize_t k = read(fd, (char *)p + done, n - done);

		if (k <= 0)
			return -1;
		done += (size_t)k;
	}
	return 0;
}

struct target_info {
	uint64_t addr;
	uint32_t rkey;
	uint32_t qpn[MAX_QP];
	union ibv_gid gid;
};

struct worker_hello {
	uint32_t qpn[MAX_QP];
	union ibv_gid gid;
};

/* One requester process: NQP QPs towards the target, ITERS FETCH_ADDs of
 * 1 each, DEPTH in flight per QP; every original goes back through OUT.
 * Returns the exit status (0 = every completion right). */
static int worker(int in, int out, unsigned nqp, unsigned iters)
{
	struct side s;
	struct ibv_qp *qp[MAX_QP];
	struct worker_hello h;
	struct target_info ti;
	unsigned posted[MAX_QP] = { 0 }, done = 0, total = nqp * iters;
	uint64_t *orig = calloc(total, sizeof(*orig));

	if (!orig || side_open(&s, ACC_ATOMIC, (int)(nqp * DEPTH)))
		return 10;
	memset(&h, 0, sizeof(h));
	h.gid = s.gid;
	for (unsigned q = 0; q < nqp; q++) {
		if (!(qp[q] = rc_qp(&s, DEPTH)))
			return 11;
		h.qpn[q] = qp[q]->qp_num;
	}
	if (write_all(out, &h, sizeof(h)) || read_all(in, &ti, sizeof(ti)))
		return 12;
	for (unsigned q = 0; q < nqp; q++)
		if (rc_connect(qp[q], ti.qpn[q], &ti.gid, ACC_ATOMIC, DEPTH, DEPTH))
			return 13;
	/* local slot of a WQE: q * DEPTH + (its number % DEPTH) */
	for (unsigned q = 0; q < nqp; q++)
		for (; posted[q] < DEPTH && posted[q] < iters; posted[q]++)
			if (post_atomic(qp[q], (uint64_t)q << 32 | posted[q],
					IBV_WR_ATOMIC_FETCH_AND_ADD, &s,
					q * DEPTH + posted[q] % DEPTH, ti.addr, ti.rkey, 1, 0))
				return 14;
	while (done < total) {
		struct ibv_wc wc;
		unsigned q, n;

		if (tv_poll_one(s.cq, WAIT_MS, &wc))
			return 15;
		q = (unsigned)(wc.wr_id >> 32);
		n = (unsigned)wc.wr_id;
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_FETCH_ADD ||
		    wc.byte_len != 8 || q >= nqp) {
			fprintf(stderr, "worker: bad completion: %s opcode %d byte_len %u\n",
				ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len);
			return 16;
		}
		orig[done++] = s.buf[q * DEPTH + n % DEPTH];
		if (posted[q] < iters) {
			if (post_atomic(qp[q], (uint64_t)q << 32 | posted[q],
					IBV_WR_ATOMIC_FETCH_AND_ADD, &s,
					q * DEPTH + posted[q] % DEPTH, ti.addr, ti.rkey, 1, 0))
				return 14;
			posted[q]++;
		}
	}
	if (write_all(out, orig, total * sizeof(*orig)))
		return 12;
	for (unsigned q = 0; q < nqp; q++)
		ibv_destroy_qp(qp[q]);
	side_close(&s);
	free(orig);
	return 0;
}

/* Run the race; 0 if the word and the originals are exact, else a
 * message on stderr and -1. */
static int race(unsigned nproc, unsigned nqp, unsigned iters)
{
	int to[16][2], from[16][2];
	pid_t pid[16];
	struct side t;
	struct ibv_qp *qp[16][MAX_QP];
	unsigned total = nproc * nqp * iters, bad = 0;
	unsigned char *seen = calloc(total, 1);
	uint64_t *orig = calloc((size_t)nqp * iters, sizeof(*orig));
	const char *status_cmd = getenv("TRAFFIC_ATOMIC_STATUS");

	if (nproc > 16 || nqp > MAX_QP || !seen || !orig)
		return -1;
	/* Workers open their own contexts: fork before this process has one. */
	for (unsigned p = 0; p < nproc; p++) {
		if (pipe(to[p]) || pipe(from[p]))
			return -1;
		pid[p] = fork();
		if (pid[p] == 0)
			_exit(worker(to[p][0], from[p][1], nqp, iters));
	}
	if (side_open(&t, ACC_ATOMIC, 16))
		return -1;
	t.buf[0] = 0;
	for (unsigned p = 0; p < nproc; p++) {
		struct worker_hello h;
		struct target_info ti = { .addr = (uintptr_t)t.buf, .rkey = t.mr->rkey,
					  .gid = t.gid };

		if (read_all(from[p][0], &h, sizeof(h)))
			return -1;
		for (unsigned q = 0; q < nqp; q++) {
			if (!(qp[p][q] = rc_qp(&t, 1)) ||
			    rc_connect(qp[p][q], h.qpn[q], &h.gid, ACC_ATOMIC, 1, DEPTH))
				return -1;
			ti.qpn[q] = qp[p][q]->qp_num;
		}
		if (write_all(to[p][1], &ti, sizeof(ti)))
			return -1;
	}
	/* The target never polls: the daemon executes every atomic. */
	for (unsigned p = 0; p < nproc; p++) {
		if (read_all(from[p][0], orig, (size_t)nqp * iters * sizeof(*orig))) {
			fprintf(stderr, "race: worker %u sent no results\n", p);
			bad++;
			continue;
		}
		for (unsigned i = 0; i < nqp * iters; i++) {
			if (orig[i] >= total || seen[orig[i]]++)
				bad++;
		}
	}
	for (unsigned p = 0; p < nproc; p++) {
		int st;

		if (waitpid(pid[p], &st, 0) != pid[p] || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "race: worker %u exit status 0x%x\n", p, st);
			bad++;
		}
	}
	if (status_cmd && system(status_cmd) != 0)
		bad++;
	printf("race: %u processes x %u QPs x %u FETCH_ADDs: word %llu, %u originals wrong or repeated\n",
	       nproc, nqp, iters, (unsigned long long)t.buf[0], bad);
	if (t.buf[0] != total)
		bad++;
	for (unsigned p = 0; p < nproc; p++)
		for (unsigned q = 0; q < nqp; q++)
			ibv_destroy_qp(qp[p][q]);
	side_close(&t);
	free(seen);
	free(orig);
	return bad ? -1 : 0;
}

START_TEST(test_race)
{
	ck_assert_int_eq(race(2, 4, 5000), 0);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s;
	TCase *tc;

	if (argc == 5 && strcmp(argv[1], "race") == 0)
		return race((unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]),
			    (unsigned)atoi(argv[4])) ? EXIT_FAILURE : EXIT_SUCCESS;
	s = suite_create("traffic_atomic");
	tc = tcase_create("atomic");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_device_caps);
	tcase_add_test(tc, test_values);
	tcase_add_loop_test(tc, test_errors, 0, (int)(sizeof(errs) / sizeof(errs[0])));
	tcase_add_test(tc, test_race);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
