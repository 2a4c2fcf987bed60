/*
 * daemon_datapath.c - end-to-end test of uroced's data path without the
 * provider: two verbs sessions (two contexts of this process) on one daemon,
 * RC QPs connected to each other over 127.0.0.1, WQEs written straight into
 * the shared QP rings (include/uroce/abi.h format), doorbells rung, CQEs read
 * from the shared CQ rings. Real UDP, real ICRC, real copies through the client's /proc/self/mem descriptor.
 *
 * Usage: daemon_datapath SOCK [lossy N | netfuzz N | exec]
 * Checks, with exact values: SEND 3000 bytes (requester REQ CQE with the
 * SEND WQE opcode, responder RESP_SEND with byte count and source QPN, bytes
 * placed, exactly one completion event on the armed CQ's channel); RDMA WRITE with immediate of 10000 bytes (multi-packet at MTU
 * 1024; RESP_WR_IMM with the immediate); RDMA READ of 5000 bytes (byte
 * count, data); a WRITE with a wrong rkey (REQ_ERR, syndrome REMOTE_ACCESS),
 * after which the QP is in ERR and a further SEND is flushed (WR_FLUSH);
 * UC: SEND 2500 bytes and RDMA WRITE 3000 bytes;
 * UD: a WQE without an AH (LOC_QP_OP_ERR), then SEND 1000 bytes through an
 * AH (byte count 40 + 1000, IPv4 header at offset 20 of the GRH area, GRH
 * flag and RoCE packet type 2 in flags_rqpn, payload at offset 40).
 * With "lossy N": N SENDs of mixed sizes through a daemon started with
 * --loss (see lossy() below). With "netfuzz N": N hostile datagrams at live
 * QPs (see netfuzz() below). With "exec": MRs of a process that execs are
 * out of reach afterwards (see exec_test() below).
 * Exit 0 if all pass.
 */
#include "config.h"
#include "daemon_proto.h"
#include "netstack/icrc.h"
#include "netstack/packet.h"
#include "uroce/roce.h"
#include "soft_check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NENT 16
#define BUF (16 * 8192)

struct side {
	struct dp_session ss;
	uint32_t pd, cq, qp, qpn, lkey;
	struct uroce_reg_mr_resp mr;
	struct mlx5_cqe64 *cqes;
	struct uroce_cq_ring_hdr *cqh;
	uint32_t ci;
	struct uroce_qp_ring_hdr *qh;
	struct uroce_qp_ring_layout lay;
	struct ibv_qp_cap cap;
	uint32_t sq_pi, rq_pi;
	unsigned char *buf;
	int chan;            /* our end of the CQ's completion channel */
};


static void die(const char *what, int rc)
{
	fprintf(stderr, "FAIL %s: %s (%d)\n", what, rc > 0 ? strerror(rc) : "error", rc);
	exit(1);
}

static void setup_type(struct side *s, const char *sock, enum ibv_qp_type type);

/* If set, setup_type maps the next side's buffer at this address. */
static uintptr_t fixed_buf;

static void setup(struct side *s, const char *sock)
{
	setup_type(s, sock, IBV_QPT_RC);
}

static void setup_type(struct side *s, const char *sock, enum ibv_qp_type type)
{
	struct uroce_create_cq_req cq = { 0 };
	struct uroce_create_cq_resp cqr;
	struct uroce_create_qp_req qp = { 0 };
	struct uroce_create_qp_resp qpr;
	uint32_t nent = NENT;
	int fd, rc, i;
	void *p;

	if ((rc = dp_open(&s->ss, sock)))
		die("HELLO", rc);
	if ((rc = dp_alloc_pd(&s->ss, &s->pd)))
		die("ALLOC_PD", rc);
	if (fixed_buf) {
		p = mmap((void *)fixed_buf, BUF, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p != (void *)fixed_buf)
			die("mmap fixed buffer", errno);
		s->buf = p;
	} else {
		s->buf = aligned_alloc(4096, BUF);
	}
	memset(s->buf, 0, BUF);
	if ((rc = dp_reg_mr(&s->ss, s->pd, (uintptr_t)s->buf, BUF,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, &s->mr)))
		die("REG_MR", rc);
	/* CQ ring, mapped here too */
	fd = dp_ring_memfd(uroce_cq_ring_size(nent), 1);
	p = mmap(NULL, uroce_cq_ring_size(nent), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap CQ", errno);
	s->cqh = p;
	s->cqes = (struct mlx5_cqe64 *)((char *)p + UROCE_CQ_RING_HDR_SIZE);
	for (i = 0; i < (int)nent; i++)
		s->cqes[i].op_own = 0xF0;
	dp_hdr(&cq, UROCE_OP_CREATE_CQ, 20);
	cq.user_handle = 0xC0;
	cq.cqe = nent - 1;
	cq.nent = nent;
	{
		int sp[2], fds[2];

		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
			die("socketpair", errno);
		fds[0] = fd;
		fds[1] = sp[1];
		if ((rc = dp_call(s->ss.s, &cq, fds, 2, &cqr, sizeof(cqr), NULL, NULL)))
			die("CREATE_CQ", rc);
		close(sp[1]);
		s->chan = sp[0];
	}
	close(fd);
	s->cq = cqr.handle;
	/* QP ring */
	s->cap = (struct ibv_qp_cap){ .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 };
	dp_hdr(&qp, UROCE_OP_CREATE_QP, 21);
	qp.user_handle = 2;
	qp.qp_type = type;
	qp.pd_handle = s->pd;
	qp.send_cq_handle = qp.recv_cq_handle = s->cq;
	qp.cap = s->cap;
	uroce_qp_caps_round(&s->cap);
	uroce_qp_ring_layout(&s->cap, &s->lay);
	fd = dp_ring_memfd(s->lay.size, 1);
	p = mmap(NULL, s->lay.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap QP", errno);
	s->qh = p;
	if ((rc = dp_call(s->ss.s, &qp, &fd, 1, &qpr, sizeof(qpr), NULL, NULL)))
		die("CREATE_QP", rc);
	close(fd);
	s->qp = qpr.handle;
	s->qpn = qpr.qpn;
}

static uint8_t qp_timeout = 14;
static const char *status_sock;

/* The GID of 127.0.0.1 (IPv4-mapped, ::ffff:127.0.0.1). */
static void loopback_gid(union ibv_gid *g)
{
	memset(g, 0, sizeof(*g));
	g->raw[10] = g->raw[11] = 0xff;
	g->raw[12] = 127;
	g->raw[15] = 1;
}

/* RESET -> INIT on port 1 with ACCESS; dies with WHAT on error. */
static void qp_init(struct side *s, unsigned int access, const char *what)
{
	struct ibv_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = access;
	if ((rc = dp_modify_qp(&s->ss, s->qp, &a,
			       IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)))
		die(what, rc);
}

/* The RTR attributes RC and UC share: path MTU 1024, DEST, PSN, a GRH to
 * 127.0.0.1 with hop limit 1 (mask: STATE, AV, PATH_MTU, DEST_QPN, RQ_PSN). */
static void rtr_attr(struct ibv_qp_attr *a, uint32_t dest, uint32_t psn)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTR;
	a->path_mtu = IBV_MTU_1024;
	a->dest_qp_num = dest;
	a->rq_psn = psn;
	a->ah_attr.is_global = 1;
	a->ah_attr.port_num = 1;
	a->ah_attr.grh.hop_limit = 1;
	loopback_gid(&a->ah_attr.grh.dgid);
}

static void connect_qp(struct side *s, uint32_t dest)
{
	struct ibv_qp_attr a;
	int rc;

	qp_init(s, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, "INIT");
	rtr_attr(&a, dest, 0x100);
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	if ((rc = dp_modify_qp(&s->ss, s->qp, &a,
			       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)))
		die("RTR", rc);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x100;
	a.timeout = qp_timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	if ((rc = dp_modify_qp(&s->ss, s->qp, &a,
			       IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				       IBV_QP_MAX_QP_RD_ATOMIC)))
		die("RTS", rc);
}

static void doorbell(struct side *s)
{
	if (eventfd_write(s->ss.db_fd, 1) < 0)
		die("doorbell", errno);
}

/* UD destination for the next post_send (ah 0: none). */
static struct {
	uint32_t ah, qpn;
} ud_target;

static void post_send(struct side *s, enum ibv_wr_opcode op, uint32_t off, uint32_t len, uint64_t raddr,
		      uint32_t rkey, uint32_t imm)
{
	struct uroce_send_wqe *w = (void *)((char *)s->qh + s->lay.sq_offset +
					     (s->sq_pi & (s->cap.max_send_wr - 1)) * s->lay.sq_stride);
	struct uroce_sge *g = (void *)(w + 1);

	memset(w, 0, s->lay.sq_stride);
	w->opcode = (uint8_t)op;
	w->flags = UROCE_WQE_SIGNALED;
	w->num_sge = 1;
	w->wqe_index = (uint16_t)s->sq_pi;
	w->byte_len = len;
	w->imm_data = imm;
	w->remote_addr = raddr;
	w->rkey = rkey;
	w->ah_handle = ud_target.ah;
	w->remote_qpn = ud_target.qpn;
	w->remote_qkey = 0x11111111;
	g->addr = (uintptr_t)s->buf + off;
	g->length = len;
	g->lkey = s->mr.lkey;
	s->sq_pi++;
	__atomic_store_n(&s->qh->sq_pi, s->sq_pi, __ATOMIC_RELEASE);
	doorbell(s);
}

static void post_recv(struct side *s, uint32_t off, uint32_t len)
{
	struct uroce_recv_wqe *w = (void *)((char *)s->qh + s->lay.rq_offset +
					     (s->rq_pi & (s->cap.max_recv_wr - 1)) * s->lay.rq_stride);
	struct uroce_sge *g = (void *)(w + 1);

	memset(w, 0, s->lay.rq_stride);
	w->wqe_index = (uint16_t)s->rq_pi;
	w->num_sge = 1;
	g->addr = (uintptr_t)s->buf + off;
	g->length = len;
	g->lkey = s->mr.lkey;
	s->rq_pi++;
	__atomic_store_n(&s->qh->rq_pi, s->rq_pi, __ATOMIC_RELEASE);
	doorbell(s);
}

/* Close the session and free what setup() allocated. */
static void side_close(struct side *s)
{
	dp_close(&s->ss);
	munmap(s->cqh, uroce_cq_ring_size(NENT));
	munmap(s->qh, s->lay.size);
	close(s->chan);
	free(s->buf);
}

/* UC QP connected to DEST: the UC masks (no RDMA READ or ACK attributes). */
static void uc_connect(struct side *s, uint32_t dest)
{
	struct ibv_qp_attr a;
	int rc;

	qp_init(s, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, "UC INIT");
	rtr_attr(&a, dest, 0x700);
	if ((rc = dp_modify_qp(&s->ss, s->qp, &a,
			       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN)))
		die("UC RTR", rc);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x700;
	if ((rc = dp_modify_qp(&s->ss, s->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN)))
		die("UC RTS", rc);
}

/* UD QP to RTS (Q_Key 0x11111111). */
static void ud_ready(struct side *s)
{
	struct ibv_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = 0x11111111;
	if ((rc = dp_modify_qp(&s->ss, s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)))
		die("UD INIT", rc);
	a.qp_state = IBV_QPS_RTR;
	if ((rc = dp_modify_qp(&s->ss, s->qp, &a, IBV_QP_STATE)))
		die("UD RTR", rc);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x500;
	if ((rc = dp_modify_qp(&s->ss, s->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN)))
		die("UD RTS", rc);
}

/* ibv_req_notify_cq: arm word in dbrec[1], then the doorbell. */
static void arm_cq(struct side *s, uint32_t sn)
{
	__atomic_store_n(&s->cqh->dbrec[1], htobe32(UROCE_CQ_ARM_CMD | (sn & 3) << UROCE_CQ_ARM_SN_SHIFT |
						     (s->ci & UROCE_CQ_CI_MASK)),
			 __ATOMIC_RELEASE);
	doorbell(s);
}

/* Completion events waiting on S's channel (up to 10 s for the first if
 * WAIT, else none expected: poll without waiting). */
static int comp_events(struct side *s, int wait)
{
	struct ib_uverbs_comp_event_desc ev;
	struct pollfd p = { .fd = s->chan, .events = POLLIN };
	int n = 0;

	while (poll(&p, 1, n == 0 && wait ? 10000 : 0) == 1 &&
	       recv(s->chan, &ev, sizeof(ev), MSG_DONTWAIT) == (ssize_t)sizeof(ev)) {
		if (ev.cq_handle != 0xC0)
			return -1;
		n++;
	}
	return n;
}

/* Next CQE of S (waits up to 10 s), consumed. */
static struct mlx5_cqe64 poll_cqe(struct side *s, const char *what)
{
	struct mlx5_cqe64 *c = &s->cqes[s->ci & (NENT - 1)];
	struct mlx5_cqe64 copy;
	int i;

	for (i = 0; i < 10000; i++) {
		uint8_t op_own = __atomic_load_n(&c->op_own, __ATOMIC_ACQUIRE);

		if ((op_own >> 4) != 0xF && (op_own & 1) == !!(s->ci & NENT)) {
			copy = *c;
			s->ci++;
			s->cqh->dbrec[0] = htobe32(s->ci & 0xFFFFFF);
			return copy;
		}
		usleep(1000);
	}
	fprintf(stderr, "FAIL %s: no CQE within 10 s\n", what);
	exit(1);
}

/* Message k's size and content byte i. */
static uint32_t msg_size(uint32_t k)
{
	static const uint32_t sizes[] = { 1, 100, 1023, 1024, 1025, 3000, 4096, 8000 };

	return sizes[(k * 7 + k / 8) % 8];
}

static unsigned char msg_byte(uint32_t k, uint32_t i)
{
	return (unsigned char)(k * 131 + i * 7 + (i >> 8));
}

/*
 * N RC SENDs of mixed sizes (1 .. 8000 bytes, 1-8 packets at MTU 1024)
 * through a daemon that drops packets (--loss): up to 4 in flight, each
 * receive checked in order for its exact size and bytes, each completion
 * exactly once (a duplicate or missing one breaks the sequence).
 */
static int lossy(struct side *a, struct side *b, uint32_t n)
{
	uint32_t sent = 0, done_send = 0, done_recv = 0, i;
	struct mlx5_cqe64 c;

	while (done_recv < n || done_send < n) {
		while (sent < n && sent - done_send < 4 && sent - done_recv < 4) {
			uint32_t slot = sent % 8, len = msg_size(sent);

			for (i = 0; i < len; i++)
				a->buf[slot * 8192 + i] = msg_byte(sent, i);
			post_recv(b, slot * 8192, 8192);
			post_send(a, IBV_WR_SEND, slot * 8192, len, 0, 0, 0);
			sent++;
		}
		if (done_send < sent) {
			struct mlx5_cqe64 *p = &a->cqes[a->ci & (NENT - 1)];
			uint8_t op_own = __atomic_load_n(&p->op_own, __ATOMIC_ACQUIRE);

			if ((op_own >> 4) != 0xF && (op_own & 1) == !!(a->ci & NENT)) {
				c = poll_cqe(a, "lossy send");
				if (c.op_own >> 4 != MLX5_CQE_REQ || be16toh(c.wqe_counter) != (uint16_t)(a->sq_pi - sent + done_send)) {
					fprintf(stderr, "FAIL lossy: send completion %u: opcode %u wqe_counter %u\n",
						done_send, c.op_own >> 4, be16toh(c.wqe_counter));
					return 1;
				}
				done_send++;
				continue;
			}
		}
		if (done_recv < sent) {
			struct mlx5_cqe64 *p = &b->cqes[b->ci & (NENT - 1)];
			uint8_t op_own = __atomic_load_n(&p->op_own, __ATOMIC_ACQUIRE);

			if ((op_own >> 4) != 0xF && (op_own & 1) == !!(b->ci & NENT)) {
				uint32_t slot = done_recv % 8, len = msg_size(done_recv);

				c = poll_cqe(b, "lossy recv");
				if (c.op_own >> 4 != MLX5_CQE_RESP_SEND || be32toh(c.byte_cnt) != len) {
					fprintf(stderr, "FAIL lossy: message %u: opcode %u byte_cnt %u, expected %u\n",
						done_recv, c.op_own >> 4, be32toh(c.byte_cnt), len);
					return 1;
				}
				for (i = 0; i < len; i++)
					if (b->buf[slot * 8192 + i] != msg_byte(done_recv, i)) {
						fprintf(stderr, "FAIL lossy: message %u byte %u differs\n", done_recv, i);
						return 1;
					}
				done_recv++;
				continue;
			}
		}
		usleep(50);
	}
	printf("ok   %u RC SENDs of 1..8000 bytes over a lossy link: in order, byte-exact, each completed once\n", n);
	{
		/* the losses show in the sender's per-QP counters in `status` */
		static char text[65536];
		char want[64], *line;
		unsigned long long tx = 0, re = 0;

		if (dp_status_text(status_sock, text, sizeof(text)))
			die("status", EIO);
		snprintf(want, sizeof(want), "  qp qpn=0x%x ", a->qpn);
		line = strstr(text, want);
		if (!line || !strstr(line, "tx_pkts=") ||
		    sscanf(strstr(line, "tx_pkts="), "tx_pkts=%llu", &tx) != 1 ||
		    sscanf(strstr(line, "retransmits="), "retransmits=%llu", &re) != 1 || tx < n || re == 0) {
			fprintf(stderr, "FAIL lossy: status counters of qpn 0x%x: tx_pkts %llu retransmits %llu\n",
				a->qpn, tx, re);
			return 1;
		}
		printf("ok   status: qpn 0x%x tx_pkts=%llu retransmits=%llu\n", a->qpn, tx, re);
	}
	return 0;
}

/* xorshift64*, fixed seed: the same packets every run */
static uint64_t rs = 0x2545F4914F6CDD1Dull;
static uint32_t rnd(void)
{
	rs ^= rs >> 12;
	rs ^= rs << 25;
	rs ^= rs >> 27;
	return (uint32_t)((rs * 0x2545F4914F6CDD1Dull) >> 32);
}

/*
 * Hostile network input: N datagrams to the daemon's port from a plain UDP
 * socket, aimed at live RC and UD QPs: 40% well-formed RoCEv2 packets with
 * random PSNs, keys, addresses, lengths, syndromes (READ/WRITE requests
 * with the real rkey and random ranges among them), 40% random bytes with a
 * valid ICRC behind a real opcode and QPN, 20% garbage. Afterwards the
 * daemon must still be up and carry a SEND between two fresh QPs.
 */
static int netfuzz(const char *sock, uint32_t n)
{
	static const uint8_t ops[] = {
		ROCE_OP_RC_SEND_ONLY, ROCE_OP_RC_SEND_FIRST, ROCE_OP_RC_SEND_MIDDLE, ROCE_OP_RC_SEND_LAST,
		ROCE_OP_RC_WRITE_ONLY, ROCE_OP_RC_WRITE_FIRST, ROCE_OP_RC_WRITE_LAST_IMM, ROCE_OP_RC_READ_REQUEST,
		ROCE_OP_RC_READ_RESP_ONLY, ROCE_OP_RC_READ_RESP_FIRST, ROCE_OP_RC_ACK, ROCE_OP_RC_CMP_SWAP,
		ROCE_OP_RC_SEND_ONLY_INV, ROCE_OP_UC_SEND_ONLY, ROCE_OP_UD_SEND_ONLY, ROCE_OP_UD_SEND_ONLY_IMM,
	};
	struct side a, b, u, v, x, y;
	struct sockaddr_in me = { .sin_family = AF_INET }, to = { .sin_family = AF_INET };
	socklen_t ml = sizeof(me);
	uint8_t pkt[4224], payload[2048];
	uint32_t qpns[5], i, built = 0;
	struct mlx5_cqe64 c;
	int s;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&u, 0, sizeof(u));
	memset(&v, 0, sizeof(v));
	setup(&a, sock);
	setup(&b, sock);
	connect_qp(&a, b.qpn);
	connect_qp(&b, a.qpn);
	setup_type(&u, sock, IBV_QPT_UD);
	setup_type(&v, sock, IBV_QPT_UD);
	ud_ready(&u);
	ud_ready(&v);
	for (i = 0; i < 8; i++)
		post_recv(&b, i * 8192, 8192);
	for (i = 0; i < 8; i++)
		post_recv(&v, i * 8192, 8192);
	qpns[0] = a.qpn, qpns[1] = b.qpn, qpns[2] = u.qpn, qpns[3] = v.qpn, qpns[4] = 0x1234;
	s = socket(AF_INET, SOCK_DGRAM, 0);
	me.sin_addr.s_addr = htonl(0x7F000001);
	if (s < 0 || bind(s, (struct sockaddr *)&me, sizeof(me)) < 0 || getsockname(s, (struct sockaddr *)&me, &ml) < 0)
		die("fuzz socket", errno);
	to.sin_addr.s_addr = htonl(0x7F000001);
	to.sin_port = htons(a.ss.hello.udp_port);
	for (i = 0; i < n; i++) {
		struct roce_l3 l3 = { .kind = ROCE_L3_IPV4, .sport = ntohs(me.sin_port), .dport = a.ss.hello.udp_port };
		uint32_t kind = rnd() % 10, k, crc;
		size_t len = 0;

		roce_addr_from_ipv4(l3.src, 0x7F000001);
		roce_addr_from_ipv4(l3.dst, 0x7F000001);
		for (k = 0; k < sizeof(payload); k++)
			payload[k] = (uint8_t)rnd();
		if (kind < 4) {
			struct roce_hdrs h;
			uint32_t plen;

			memset(&h, 0, sizeof(h));
			h.opcode = ops[rnd() % sizeof(ops)];
			h.pkey = 0xFFFF;
			h.dqpn = qpns[rnd() % 5];
			h.psn = rnd() % 2 ? (0x100 + rnd() % 64) & 0xFFFFFF : rnd() & 0xFFFFFF;
			h.ackreq = rnd() % 2;
			h.se = rnd() % 2;
			h.reth.va = rnd() % 2 ? (uintptr_t)b.buf + rnd() % (BUF + 64) : ((uint64_t)rnd() << 32 | rnd());
			h.reth.rkey = rnd() % 2 ? b.mr.rkey : rnd();
			h.reth.dma_len = rnd() % 3 ? rnd() % 9000 : rnd();
			h.aeth.syndrome = (uint8_t)rnd();
			h.aeth.msn = rnd() & 0xFFFFFF;
			h.deth.qkey = rnd() % 2 ? 0x11111111 : rnd();
			h.deth.sqpn = qpns[rnd() % 5];
			h.imm = rnd();
			h.ieth_rkey = rnd();
			h.atomic.va = h.reth.va;
			h.atomic.rkey = h.reth.rkey;
			plen = rnd() % 2 ? 1024 : (rnd() % 256) * 4;
			if (roce_build_udp(pkt, sizeof(pkt), &l3, &h, payload, plen, &len) &&
			    roce_build_udp(pkt, sizeof(pkt), &l3, &h, payload, 0, &len))
				continue;
			built++;
		} else {
			len = 12 + rnd() % 1200;
			memcpy(pkt, payload, len > sizeof(payload) ? sizeof(payload) : len);
			pkt[0] = ops[rnd() % sizeof(ops)];
			pkt[5] = (uint8_t)(qpns[rnd() % 5] >> 16);
			pkt[6] = (uint8_t)(qpns[rnd() % 5] >> 8);
			pkt[7] = (uint8_t)qpns[rnd() % 5];
			if (kind < 8 && roce_icrc_udp(pkt, len, &l3, &crc) == 0)
				roce_icrc_put(pkt + len - 4, crc);
		}
		sendto(s, pkt, len, 0, (struct sockaddr *)&to, sizeof(to));
		if (i % 128 == 127)
			usleep(2000); /* let the daemon drain its socket */
	}
	close(s);
	usleep(200000);
	side_close(&a);
	side_close(&b);
	side_close(&u);
	side_close(&v);
	/* still serving: a SEND between two fresh QPs */
	memset(&x, 0, sizeof(x));
	memset(&y, 0, sizeof(y));
	setup(&x, sock);
	setup(&y, sock);
	connect_qp(&x, y.qpn);
	connect_qp(&y, x.qpn);
	memset(x.buf, 0x77, 500);
	post_recv(&y, 0, 4096);
	post_send(&x, IBV_WR_SEND, 0, 500, 0, 0, 0);
	c = poll_cqe(&x, "SEND after the fuzz");
	CHECK(c.op_own >> 4 == MLX5_CQE_REQ, "SEND after the fuzz: opcode %u", c.op_own >> 4);
	c = poll_cqe(&y, "RECV after the fuzz");
	CHECK(c.op_own >> 4 == MLX5_CQE_RESP_SEND && be32toh(c.byte_cnt) == 500 && y.buf[499] == 0x77,
	      "RECV after the fuzz: opcode %u byte_cnt %u", c.op_own >> 4, be32toh(c.byte_cnt));
	side_close(&x);
	side_close(&y);
	printf("ok   %u hostile datagrams (%u well-formed RoCEv2) at live RC/UD QPs; daemon still carries a SEND\n",
	       n, built);
	return failures ? 1 : 0;
}

/*
 * Registered memory does not follow an execve: a client could exec a
 * setuid program and keep its control socket. A child process ("victim")
 * opens two sessions, each with an MR
 * of pattern 0xA5 at a fixed address and an RC QP connected to a QP of
 * this process, clears FD_CLOEXEC on both control sockets and execs this
 * program ("exec-victim"), which maps the same addresses with pattern 0x5A.
 * Then an RDMA WRITE and an RDMA READ at the old rkeys must fail with
 * REMOTE_ACCESS_ERR (the daemon reaches the old mm only), and the new
 * image's memory must be unchanged. Exit 0 if all pass.
 */
#define EXEC_ADDR 0x5a5a00000000ull

static int exec_victim(char **argv)
{
	int rfd = atoi(argv[3]), wfd = atoi(argv[4]), i;
	unsigned char *m[2];
	char c;

	for (i = 0; i < 2; i++) {
		m[i] = mmap((void *)(uintptr_t)(EXEC_ADDR + (uint64_t)i * BUF), BUF, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (m[i] != (void *)(uintptr_t)(EXEC_ADDR + (uint64_t)i * BUF))
			return 3;
		memset(m[i], 0x5A, BUF);
	}
	if (write(wfd, "R", 1) != 1 || read(rfd, &c, 1) != 1)
		return 4;
	for (i = 0; i < BUF; i++)
		if (m[0][i] != 0x5A || m[1][i] != 0x5A) {
			fprintf(stderr, "FAIL exec: the new image's memory was changed at +%d\n", i);
			return 1;
		}
	return 0;
}

static int exec_test(const char *self, const char *sock)
{
	struct side a[2], b[2];
	int c2p[2], p2c[2], i, st;
	uint32_t info[4];
	pid_t child;
	char arg[2][16], c;
	struct mlx5_cqe64 q;
	struct mlx5_err_cqe *e = (struct mlx5_err_cqe *)&q;

	if (pipe(c2p) || pipe(p2c))
		die("pipe", errno);
	child = fork();
	if (child < 0)
		die("fork", errno);
	if (child == 0) {
		for (i = 0; i < 2; i++) {
			memset(&a[i], 0, sizeof(a[i]));
			fixed_buf = EXEC_ADDR + (uint64_t)i * BUF;
			setup(&a[i], sock);
			memset(a[i].buf, 0xA5, BUF);
			info[2 * i] = a[i].qpn;
			info[2 * i + 1] = a[i].mr.rkey;
		}
		if (write(c2p[1], info, sizeof(info)) != sizeof(info) ||
		    read(p2c[0], info, 2 * sizeof(uint32_t)) != 2 * sizeof(uint32_t))
			_exit(5);
		for (i = 0; i < 2; i++) {
			connect_qp(&a[i], info[i]);
			/* keep the control connection over the exec */
			fcntl(a[i].ss.s, F_SETFD, 0);
		}
		snprintf(arg[0], sizeof(arg[0]), "%d", p2c[0]);
		snprintf(arg[1], sizeof(arg[1]), "%d", c2p[1]);
		execl(self, self, sock, "exec-victim", arg[0], arg[1], (char *)NULL);
		_exit(6);
	}
	if (read(c2p[0], info, sizeof(info)) != sizeof(info))
		die("victim setup", EIO);
	for (i = 0; i < 2; i++) {
		memset(&b[i], 0, sizeof(b[i]));
		setup(&b[i], sock);
	}
	{
		uint32_t qpns[2] = { b[0].qpn, b[1].qpn };

		if (write(p2c[1], qpns, sizeof(qpns)) != sizeof(qpns))
			die("pipe write", EIO);
	}
	for (i = 0; i < 2; i++)
		connect_qp(&b[i], info[2 * i]);
	if (read(c2p[0], &c, 1) != 1 || c != 'R')
		die("victim exec", EIO);

	memset(b[0].buf, 0x11, BUF);
	post_send(&b[0], IBV_WR_RDMA_WRITE, 0, 4096, EXEC_ADDR, info[1], 0);
	q = poll_cqe(&b[0], "WRITE after exec");
	CHECK(q.op_own >> 4 == MLX5_CQE_REQ_ERR && e->syndrome == MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR,
	      "WRITE after exec: opcode %u syndrome 0x%x (want REQ_ERR 0x%x)", q.op_own >> 4, e->syndrome,
	      MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	memset(b[1].buf, 0, BUF);
	post_send(&b[1], IBV_WR_RDMA_READ, 0, 4096, EXEC_ADDR + BUF, info[3], 0);
	q = poll_cqe(&b[1], "READ after exec");
	CHECK(q.op_own >> 4 == MLX5_CQE_REQ_ERR && e->syndrome == MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR,
	      "READ after exec: opcode %u syndrome 0x%x (want REQ_ERR 0x%x)", q.op_own >> 4, e->syndrome,
	      MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	CHECK(b[1].buf[0] == 0 && b[1].buf[4095] == 0, "READ after exec: bytes 0x%02x.. arrived", b[1].buf[0]);
	if (write(p2c[1], "C", 1) != 1 || waitpid(child, &st, 0) != child)
		die("victim", EIO);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "victim status 0x%x", st);
	if (!failures)
		printf("ok   after execve: RDMA WRITE and READ at the old MRs -> REMOTE_ACCESS_ERR, new image untouched\n");
	for (i = 0; i < 2; i++)
		side_close(&b[i]);
	return failures ? 1 : 0;
}

/*
 * SEND 3000 bytes a -> b, b's CQ armed: one completion event
 */
static void rc_send(struct side *a, struct side *b)
{
	struct mlx5_cqe64 c;

	arm_cq(b, 0);
	post_recv(b, 0, 4096);
	post_send(a, IBV_WR_SEND, 0, 3000, 0, 0, 0);
	c = poll_cqe(a, "SEND requester");
	CHECK(c.op_own >> 4 == MLX5_CQE_REQ, "SEND: requester opcode %u", c.op_own >> 4);
	CHECK(be32toh(c.sop_drop_qpn) == (MLX5_OPCODE_SEND << 24 | a->qpn), "SEND: sop_drop_qpn 0x%x",
	      be32toh(c.sop_drop_qpn));
	CHECK(be16toh(c.wqe_counter) == 0, "SEND: wqe_counter %u", be16toh(c.wqe_counter));
	CHECK(be64toh(c.timestamp) != 0, "SEND: no timestamp");
	c = poll_cqe(b, "SEND responder");
	CHECK(c.op_own >> 4 == MLX5_CQE_RESP_SEND, "SEND: responder opcode %u", c.op_own >> 4);
	CHECK(be32toh(c.byte_cnt) == 3000, "SEND: byte_cnt %u", be32toh(c.byte_cnt));
	CHECK((be32toh(c.flags_rqpn) & 0xFFFFFF) == a->qpn, "SEND: src qpn 0x%x", be32toh(c.flags_rqpn));
	CHECK(be32toh(c.sop_drop_qpn) == b->qpn, "SEND: responder qpn");
	CHECK(!memcmp(b->buf, a->buf, 3000) && b->buf[3000] == 0, "SEND: bytes placed");
	CHECK(__atomic_load_n(&a->qh->sq_ci, __ATOMIC_ACQUIRE) == 1, "SEND: sq_ci %u", a->qh->sq_ci);
	CHECK(__atomic_load_n(&b->qh->rq_ci, __ATOMIC_ACQUIRE) == 1, "SEND: rq_ci %u", b->qh->rq_ci);
	CHECK(comp_events(b, 1) == 1, "SEND: armed CQ: completion events != 1");
	CHECK(comp_events(a, 0) == 0, "SEND: unarmed CQ got an event");
	printf("ok   SEND 3000 bytes: REQ and RESP_SEND CQEs, bytes placed, one completion event\n");
}

/*
 * RDMA WRITE with immediate, 10000 bytes (10 packets at MTU 1024)
 */
static void rc_write_imm(struct side *a, struct side *b)
{
	struct mlx5_cqe64 c;

	post_recv(b, 0, 16);
	post_send(a, IBV_WR_RDMA_WRITE_WITH_IMM, 4000, 10000, (uintptr_t)b->buf + 5000, b->mr.rkey, htobe32(0xfeedbeef));
	c = poll_cqe(a, "WRITE requester");
	CHECK(be32toh(c.sop_drop_qpn) >> 24 == MLX5_OPCODE_RDMA_WRITE_IMM, "WRITE: WQE opcode");
	CHECK(be16toh(c.wqe_counter) == 1, "WRITE: wqe_counter");
	c = poll_cqe(b, "WRITE responder");
	CHECK(c.op_own >> 4 == MLX5_CQE_RESP_WR_IMM, "WRITE: responder opcode %u", c.op_own >> 4);
	CHECK(be32toh(c.imm_inval_pkey) == 0xfeedbeef, "WRITE: imm 0x%x", be32toh(c.imm_inval_pkey));
	CHECK(be32toh(c.byte_cnt) == 10000, "WRITE: byte_cnt %u", be32toh(c.byte_cnt));
	CHECK(!memcmp(b->buf + 5000, a->buf + 4000, 10000) && b->buf[15000] == 0, "WRITE: bytes placed");
	printf("ok   RDMA WRITE with immediate, 10000 bytes: CQEs, immediate, bytes placed\n");
}

/*
 * RDMA READ 5000 bytes of b into a
 */
static void rc_read(struct side *a, struct side *b)
{
	struct mlx5_cqe64 c;

	memset(a->buf + 8000, 0, 5000);
	post_send(a, IBV_WR_RDMA_READ, 8000, 5000, (uintptr_t)b->buf + 6000, b->mr.rkey, 0);
	c = poll_cqe(a, "READ requester");
	CHECK(c.op_own >> 4 == MLX5_CQE_REQ, "READ: opcode %u", c.op_own >> 4);
	CHECK(be32toh(c.sop_drop_qpn) >> 24 == MLX5_OPCODE_RDMA_READ, "READ: WQE opcode");
	CHECK(be32toh(c.byte_cnt) == 5000, "READ: byte_cnt %u", be32toh(c.byte_cnt));
	CHECK(!memcmp(a->buf + 8000, b->buf + 6000, 5000), "READ: bytes");
	printf("ok   RDMA READ 5000 bytes: byte count and data\n");
}

/*
 * a wrong rkey: remote access error, QP to ERR, the next WQE flushed
 */
static void rc_bad_rkey_then_flush(struct side *a, struct side *b)
{
	struct mlx5_cqe64 c;
	struct mlx5_err_cqe *e = (struct mlx5_err_cqe *)&c;

	post_send(a, IBV_WR_RDMA_WRITE, 0, 100, (uintptr_t)b->buf, b->mr.rkey + 1, 0);
	c = poll_cqe(a, "bad rkey");
	CHECK(c.op_own >> 4 == MLX5_CQE_REQ_ERR, "bad rkey: opcode %u", c.op_own >> 4);
	CHECK(e->syndrome == MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, "bad rkey: syndrome 0x%x", e->syndrome);
	CHECK((be32toh(e->s_wqe_opcode_qpn) & 0xFFFFFF) == a->qpn, "bad rkey: qpn");
	CHECK(be16toh(e->wqe_counter) == 3, "bad rkey: wqe_counter %u", be16toh(e->wqe_counter));
	post_send(a, IBV_WR_SEND, 0, 10, 0, 0, 0);
	c = poll_cqe(a, "flush");
	CHECK(c.op_own >> 4 == MLX5_CQE_REQ_ERR && e->syndrome == MLX5_CQE_SYNDROME_WR_FLUSH_ERR,
	      "flush: opcode %u syndrome 0x%x", c.op_own >> 4, e->syndrome);
	CHECK(be16toh(e->wqe_counter) == 4, "flush: wqe_counter %u", be16toh(e->wqe_counter));
	printf("ok   wrong rkey: REQ_ERR remote access, then WR_FLUSH\n");
}

/*
 * RESET empties the queues: a receive still posted on b is discarded
 * and every slot is free again (ci = pi).
 */
static void reset_discards_wqes(struct side *b)
{
	struct ibv_qp_attr r = { .qp_state = IBV_QPS_RESET };
	int rc;

	post_recv(b, 0, 64);
	rc = dp_modify_qp(&b->ss, b->qp, &r, IBV_QP_STATE);
	CHECK(rc == 0, "RESET: %d", rc);
	CHECK(__atomic_load_n(&b->qh->rq_ci, __ATOMIC_ACQUIRE) == b->rq_pi, "RESET: rq_ci %u, rq_pi %u",
	      b->qh->rq_ci, b->rq_pi);
	CHECK(__atomic_load_n(&b->qh->sq_ci, __ATOMIC_ACQUIRE) == b->sq_pi, "RESET: sq_ci %u, sq_pi %u",
	      b->qh->sq_ci, b->sq_pi);
	printf("ok   RESET discards posted WQEs: ci = pi on both queues\n");
}

/*
 * UC: SEND 2500 bytes (3 packets) and RDMA WRITE 3000 bytes
 */
static void uc_send_and_write(const char *sock)
{
	struct side u, v;
	struct mlx5_cqe64 c;
	int i;

	memset(&u, 0, sizeof(u));
	memset(&v, 0, sizeof(v));
	setup_type(&u, sock, IBV_QPT_UC);
	setup_type(&v, sock, IBV_QPT_UC);
	uc_connect(&u, v.qpn);
	uc_connect(&v, u.qpn);
	for (i = 0; i < 6000; i++)
		u.buf[i] = (unsigned char)(i * 13 + 1);
	post_recv(&v, 0, 4096);
	post_send(&u, IBV_WR_SEND, 0, 2500, 0, 0, 0);
	c = poll_cqe(&u, "UC send");
	CHECK(c.op_own >> 4 == MLX5_CQE_REQ && be32toh(c.sop_drop_qpn) >> 24 == MLX5_OPCODE_SEND,
	      "UC send: opcode %u", c.op_own >> 4);
	c = poll_cqe(&v, "UC recv");
	CHECK(c.op_own >> 4 == MLX5_CQE_RESP_SEND && be32toh(c.byte_cnt) == 2500, "UC recv: opcode %u len %u",
	      c.op_own >> 4, be32toh(c.byte_cnt));
	CHECK(!memcmp(v.buf, u.buf, 2500), "UC recv: bytes");
	post_send(&u, IBV_WR_RDMA_WRITE, 3000, 3000, (uintptr_t)v.buf + 8192, v.mr.rkey, 0);
	c = poll_cqe(&u, "UC write");
	CHECK(c.op_own >> 4 == MLX5_CQE_REQ && be32toh(c.sop_drop_qpn) >> 24 == MLX5_OPCODE_RDMA_WRITE,
	      "UC write: opcode %u", c.op_own >> 4);
	/* UC has no ACK: the requester completes when sent; wait for the bytes */
	for (i = 0; i < 10000 && memcmp(v.buf + 8192, u.buf + 3000, 3000); i++)
		usleep(1000);
	CHECK(!memcmp(v.buf + 8192, u.buf + 3000, 3000), "UC write: bytes");
	side_close(&u);
	side_close(&v);
	printf("ok   UC SEND 2500 bytes and RDMA WRITE 3000 bytes\n");
}

/* Two fresh UD QPs u and v on sock, ready to send; an AH to 127.0.0.1 in
 * u's PD; u's first 1000 bytes patterned; one receive posted on v.
 * Returns the AH's handle. */
static uint32_t ud_pair(const char *sock, struct side *u, struct side *v)
{
	struct uroce_create_ah_req ah = { 0 };
	struct uroce_handle_resp ahr;
	int rc, i;

	memset(u, 0, sizeof(*u));
	memset(v, 0, sizeof(*v));
	setup_type(u, sock, IBV_QPT_UD);
	setup_type(v, sock, IBV_QPT_UD);
	ud_ready(u);
	ud_ready(v);
	dp_hdr(&ah, UROCE_OP_CREATE_AH, 30);
	ah.pd_handle = u->pd;
	ah.attr.is_global = 1;
	ah.attr.port_num = 1;
	ah.attr.grh.hop_limit = 64;
	loopback_gid(&ah.attr.grh.dgid);
	if ((rc = dp_call(u->ss.s, &ah, NULL, 0, &ahr, sizeof(ahr), NULL, NULL)))
		die("CREATE_AH", rc);
	for (i = 0; i < 1000; i++)
		u->buf[i] = (unsigned char)(i ^ 0x5a);
	post_recv(v, 0, 2048);
	return ahr.handle;
}

/*
 * UD: SEND 1000 bytes through an AH; 40-byte GRH area with the IPv4
 * header at offset 20; GRH flag and RoCE packet type 2 in the CQE.
 */
static void ud_send(const char *sock)
{
	struct side u, v;
	struct mlx5_cqe64 c;
	struct mlx5_err_cqe *e = (struct mlx5_err_cqe *)&c;
	uint32_t ah;

	/* first a UD WQE naming no AH (ah_handle 0): refused with a
	 * local QP operation error, the QP goes to ERR */
	ud_pair(sock, &u, &v);
	post_send(&u, IBV_WR_SEND, 0, 1000, 0, 0, 0);
	c = poll_cqe(&u, "UD send without AH");
	CHECK(c.op_own >> 4 == MLX5_CQE_REQ_ERR && e->syndrome == MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR,
	      "UD WQE without an AH: opcode %u syndrome 0x%x", c.op_own >> 4, e->syndrome);
	side_close(&u);
	side_close(&v);
	/* a fresh pair, WQE with its AH */
	ah = ud_pair(sock, &u, &v);
	ud_target.ah = ah;
	ud_target.qpn = v.qpn;
	post_send(&u, IBV_WR_SEND, 0, 1000, 0, 0, 0);
	ud_target.ah = 0;
	c = poll_cqe(&u, "UD send");
	CHECK(c.op_own >> 4 == MLX5_CQE_REQ, "UD send: opcode %u", c.op_own >> 4);
	c = poll_cqe(&v, "UD recv");
	CHECK(c.op_own >> 4 == MLX5_CQE_RESP_SEND, "UD recv: opcode %u", c.op_own >> 4);
	CHECK(be32toh(c.byte_cnt) == 1040, "UD recv: byte_cnt %u (expected 40 + 1000)", be32toh(c.byte_cnt));
	CHECK(be32toh(c.flags_rqpn) == (1u << 28 | 2u << 24 | u.qpn), "UD recv: flags_rqpn 0x%x",
	      be32toh(c.flags_rqpn));
	CHECK(v.buf[20] == 0x45, "UD recv: no IPv4 header at offset 20 (0x%02x)", v.buf[20]);
	CHECK(!memcmp(v.buf + 40, u.buf, 1000), "UD recv: payload");
	side_close(&u);
	side_close(&v);
	printf("ok   UD SEND 1000 bytes via an AH: GRH area with IPv4 header, GRH flag, packet type 2\n");
}

int main(int argc, char **argv)
{
	struct side a, b;
	int i;

	if (argc != 2 && !(argc == 3 && !strcmp(argv[2], "exec")) && !(argc == 5 && !strcmp(argv[2], "exec-victim")) &&
	    !(argc == 4 && (!strcmp(argv[2], "lossy") || !strcmp(argv[2], "netfuzz")))) {
		fprintf(stderr, "usage: daemon_datapath SOCK [lossy N | netfuzz N | exec]\n");
		return 2;
	}
	if (argc == 5 && !strcmp(argv[2], "exec-victim"))
		return exec_victim(argv);
	if (argc == 3 && !strcmp(argv[2], "exec"))
		return exec_test("/proc/self/exe", argv[1]);
	if (argc == 4 && !strcmp(argv[2], "netfuzz"))
		return netfuzz(argv[1], (uint32_t)atoi(argv[3]));
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	status_sock = argv[1];
	if (argc == 4) {
		/* retransmit after 4.096 us * 2^8 = 1 ms: losses cost little time */
		qp_timeout = 8;
		setup(&a, argv[1]);
		setup(&b, argv[1]);
		connect_qp(&a, b.qpn);
		connect_qp(&b, a.qpn);
		i = lossy(&a, &b, (uint32_t)atoi(argv[3]));
		side_close(&a);
		side_close(&b);
		return i;
	}
	setup(&a, argv[1]);
	setup(&b, argv[1]);
	connect_qp(&a, b.qpn);
	connect_qp(&b, a.qpn);
	for (i = 0; i < BUF; i++)
		a.buf[i] = (unsigned char)(i * 31 + 7);

	rc_send(&a, &b);
	rc_write_imm(&a, &b);
	rc_read(&a, &b);
	rc_bad_rkey_then_flush(&a, &b);
	reset_discards_wqes(&b);
	uc_send_and_write(argv[1]);
	ud_send(argv[1]);

	side_close(&a);
	side_close(&b);
	printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
