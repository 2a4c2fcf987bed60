/*
 * cm_engine.c - the daemon's connection manager (emu/cm/) in simulated
 * time: two devices, A (127.0.0.1) and B (127.0.0.2), each with its real CM
 * state and one CM connection made by CM_HELLO, driven with UCMA commands
 * through op_ucma as the provider drives them. The CM's cm_env is the
 * test's: every MAD sent is captured (decoded with netstack/cm_mad.c) and
 * handed to the other device's cm_input unless the test drops it; the
 * timers run on a simulated millisecond clock that only moves when no MAD
 * is in flight. Events are read from the event socket as librdmacm reads
 * them. Every case asserts exact MADs, times (ms), resend counts and events
 * (docs/rdma-cm.md "Timers", cm.c's timeouts and duplicates).
 *
 * --cm-timeout-ms is 300 here (as tests/it_cm_daemon.sh): a REQ is sent at
 * 0 and resent at 300, 600, ... 4500 (15 resends), UNREACHABLE at 4800.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <ev.h>

#include "tests/check_main.h"
#include "emu/cm/cm_int.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/nic/device.h"
#include "emu/log.h"
#include "netstack/cm_mad.h"
#include "netstack/packet.h"
#include "uroce/abi_cm.h"

#define TIMEOUT_MS 300u
#define LPORT 7471
#define MAX_LOG 512
#define MAX_TIMERS 32

struct node {
	struct uroce_dev dev;
	struct ctl_client client;
	int evfd[2];            /* [0] the daemon's, [1] the application's */
	union ibv_gid gid;
};

struct sent {                   /* one MAD on the wire */
	uint64_t t;
	int from;
	bool dropped;
	struct cm_msg m;
};

struct got_event {
	uint64_t t;
	struct rdma_ucm_event_resp ev;
};

struct wire_pkt {
	int from, to;
	size_t len;
	uint8_t buf[512];
};

static struct node nd[2];
static uint64_t now_ms;
static struct sent sent[MAX_LOG];
static unsigned nsent;
static struct wire_pkt wire[64];
static unsigned nwire;
static struct { struct cm_id *id; uint64_t when; } timers[MAX_TIMERS];
static struct got_event evs[2][MAX_LOG];
static unsigned nevs[2], evread[2];
/* drop[n][attr - 0x10]: MADs of that attribute from node n still to drop
 * (UINT32_MAX: all) */
static uint32_t drop[2][16];

/* ---- the test's cm_env ---------------------------------------------- */

static int node_of_cm(const struct cm_dev *cm)
{
	return cm == nd[0].dev.cm ? 0 : 1;
}

static int sim_xmit(struct cm_dev *cm, const union ibv_gid *peer, uint8_t tclass, const uint8_t *pkt, size_t len)
{
	int from = node_of_cm(cm), to = memcmp(peer->raw, nd[0].gid.raw, 16) ? 1 : 0;
	struct sent *s = &sent[nsent];
	uint32_t *d;

	(void)tclass;
	ck_assert_uint_lt(nsent, MAX_LOG);
	ck_assert_uint_eq(len, 12 + 8 + CM_MAD_SIZE + 4);   /* BTH, DETH, MAD, ICRC */
	memset(s, 0, sizeof(*s));
	s->t = now_ms;
	s->from = from;
	ck_assert_int_eq(cm_mad_decode(pkt + 20, CM_MAD_SIZE, &s->m), 0);
	nsent++;
	d = &drop[from][s->m.attr_id - CM_ATTR_REQ];
	if (to == from || *d) {
		s->dropped = true;
		if (*d != UINT32_MAX)
			(*d)--;
		return 0;
	}
	ck_assert_uint_lt(nwire, 64);
	wire[nwire].from = from;
	wire[nwire].to = to;
	wire[nwire].len = len;
	memcpy(wire[nwire].buf, pkt, len);
	nwire++;
	return 0;
}

static int timer_slot(struct cm_id *id)
{
	for (int i = 0; i < MAX_TIMERS; i++)
		if (timers[i].id == id)
			return i;
	return -1;
}

static void sim_timer_arm(struct cm_id *id, uint32_t ms)
{
	int i = timer_slot(id);

	if (i < 0)
		i = timer_slot(NULL);
	ck_assert_int_ge(i, 0);
	timers[i].id = id;
	timers[i].when = now_ms + ms;
}

static void sim_timer_stop(struct cm_id *id)
{
	int i = timer_slot(id);

	if (i >= 0)
		timers[i].id = NULL;
}

static const struct cm_env sim_env = { sim_xmit, sim_timer_arm, sim_timer_stop };

/* ---- the world -------------------------------------------------------- */

static void collect_events(void)
{
	struct uroce_cm_event e;

	for (int n = 0; n < 2; n++) {
		ev_run(nd[n].dev.loop, EVRUN_NOWAIT);
		while (recv(nd[n].evfd[1], &e, sizeof(e), MSG_DONTWAIT) == (ssize_t)sizeof(e)) {
			ck_assert_uint_lt(nevs[n], MAX_LOG);
			ck_assert_uint_eq(e.conn_tag, 100 + n);
			evs[n][nevs[n]].t = now_ms;
			evs[n][nevs[n]].ev = e.resp;
			nevs[n]++;
		}
	}
}

/* Put M on the wire as node FROM's (a peer's MAD the test makes up). */
static void inject(int from, const struct cm_msg *m)
{
	struct roce_hdrs h;
	uint8_t mad[CM_MAD_SIZE];
	size_t len;

	ck_assert_int_eq(cm_mad_encode(m, mad), 0);
	memset(&h, 0, sizeof(h));
	h.opcode = ROCE_OP_UD_SEND_ONLY;
	h.pkey = 0xffff;
	h.dqpn = CM_GSI_QPN;
	h.deth.qkey = CM_GSI_QKEY;
	h.deth.sqpn = CM_GSI_QPN;
	ck_assert_uint_lt(nwire, 64);
	ck_assert_int_eq(roce_build_bth(wire[nwire].buf, sizeof(wire[nwire].buf), &h, mad, CM_MAD_SIZE, &len),
			 ROCE_OK);
	wire[nwire].from = from;
	wire[nwire].to = !from;
	wire[nwire].len = len;
	nwire++;
}

/* Deliver the MADs in flight (and those they cause); then, until UNTIL (ms),
 * fire the earliest timer and deliver again. */
static void run_until(uint64_t until)
{
	for (;;) {
		while (nwire) {
			struct wire_pkt p = wire[0];

			memmove(wire, wire + 1, (nwire - 1) * sizeof(wire[0]));
			nwire--;
			cm_input(&nd[p.to].dev, p.buf, p.len, &nd[p.from].gid, &nd[p.to].gid, 49152, true);
		}
		collect_events();
		int best = -1;

		for (int i = 0; i < MAX_TIMERS; i++)
			if (timers[i].id && (best < 0 || timers[i].when < timers[best].when))
				best = i;
		if (best < 0 || timers[best].when > until) {
			now_ms = until;
			return;
		}
		struct cm_id *id = timers[best].id;

		now_ms = timers[best].when;
		timers[best].id = NULL;
		cm_wire_expired(id);
	}
}

static void run(uint64_t ms)
{
	run_until(now_ms + ms);
}

static void node_init(int n)
{
	struct node *x = &nd[n];
	struct sockaddr_in *sin = (struct sockaddr_in *)&x->dev.addr;
	struct uroce_cm_hello_req req;
	struct uroce_cm_hello_resp resp;
	struct ctl_call call;
	int fds[1];

	memset(x, 0, sizeof(*x));
	snprintf(x->dev.name, sizeof(x->dev.name), "uroce%d", n);
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(0x7f000001 + n);
	sin->sin_port = htons(4791);
	x->dev.addr_len = sizeof(*sin);
	x->dev.port = 4791;
	x->dev.mtu = 1024;
	x->dev.active_mtu = IBV_MTU_1024;
	x->dev.attr.local_ca_ack_delay = 15;
	x->dev.node_guid = 0x0200fffe7f000001ull + n;
	x->dev.loop = ev_loop_new(EVFLAG_AUTO);
	x->dev.pid = getpid();
	x->dev.uid = getuid();
	ck_assert_ptr_nonnull(x->dev.loop);
	ck_assert_int_eq(cm_dev_init(&x->dev, TIMEOUT_MS, 0), 0);
	x->dev.cm->env = &sim_env;
	cm_dev_gid(x->dev.cm, &x->gid);
	x->client.dev = &x->dev;
	x->client.id = 1;
	x->client.pid = getpid();
	x->client.uid = getuid();
	x->client.fd = -1;
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, x->evfd), 0);
	memset(&req, 0, sizeof(req));
	req.abi_version = UROCE_ABI_VERSION;
	req.pid = (uint32_t)getpid();
	req.conn_tag = 100 + n;
	fds[0] = x->evfd[0];
	memset(&call, 0, sizeof(call));
	call.req = &req;
	call.resp = &resp;
	call.fds = fds;
	call.nfds = 1;
	ck_assert_int_eq(op_cm_hello(&x->client, &call), 0);
}

static void setup(void)
{
	ulog_set_level(ULOG_ERR);
	now_ms = 0;
	nsent = nwire = 0;
	memset(timers, 0, sizeof(timers));
	memset(nevs, 0, sizeof(nevs));
	memset(evread, 0, sizeof(evread));
	memset(drop, 0, sizeof(drop));
	node_init(0);
	node_init(1);
}

static void teardown(void)
{
	for (int n = 0; n < 2; n++) {
		cm_client_gone(&nd[n].client);
		cm_dev_fini(&nd[n].dev);
		ev_loop_destroy(nd[n].dev.loop);
		close(nd[n].evfd[1]);
	}
}

/* A UCMA command of node N; returns the daemon's errno. */
static int ucma(int n, uint32_t cmd, const void *in, size_t in_len, void *out, size_t out_len)
{
	struct uroce_ucma_req req;
	struct uroce_ucma_resp resp;
	struct ctl_call call;
	int rc;

	memset(&req, 0, sizeof(req));
	memset(&resp, 0, sizeof(resp));
	req.cmd = cmd;
	req.in_len = (uint16_t)in_len;
	req.out_len = (uint16_t)out_len;
	memcpy(req.in, in, in_len);
	memset(&call, 0, sizeof(call));
	call.req = &req;
	call.resp = &resp;
	rc = op_ucma(&nd[n].client, &call);
	if (!rc && out)
		memcpy(out, resp.out, out_len);
	return rc;
}

static uint32_t create_id(int n, uint64_t uid)
{
	struct rdma_ucm_create_id c = { .uid = uid, .ps = RDMA_PS_TCP, .qp_type = IBV_QPT_RC };
	struct rdma_ucm_create_id_resp r;

	ck_assert_int_eq(ucma(n, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), &r, sizeof(r)), 0);
	return r.id;
}

static void fill_sin(struct sockaddr_in6 *s6, int n, uint16_t port)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)s6;

	memset(s6, 0, sizeof(*s6));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(0x7f000001 + n);
	sin->sin_port = htons(port);
}

/* The next unread event of node N: must be EVENT with STATUS at time T. */
static const struct rdma_ucm_event_resp *expect_event(int n, uint32_t event, int32_t status, uint64_t t)
{
	const struct got_event *g;

	ck_assert_msg(evread[n] < nevs[n], "node %d: no event, expected %u", n, event);
	g = &evs[n][evread[n]++];
	ck_assert_uint_eq(g->ev.event, event);
	ck_assert_int_eq((int32_t)g->ev.status, status);
	ck_assert_uint_eq(g->t, t);
	return &g->ev;
}

static void no_event(int n)
{
	ck_assert_msg(evread[n] == nevs[n], "node %d: unexpected event %u", n, evs[n][evread[n]].ev.event);
}

/* B listens on LPORT; returns the listener's handle. */
static uint32_t listen_b(void)
{
	uint32_t h = create_id(1, 0xb0);
	struct rdma_ucm_bind_ip b = { .id = h };
	struct rdma_ucm_listen l = { .id = h, .backlog = 8 };

	fill_sin(&b.addr, 1, LPORT);
	ck_assert_int_eq(ucma(1, RDMA_USER_CM_CMD_BIND_IP, &b, sizeof(b), NULL, 0), 0);
	ck_assert_int_eq(ucma(1, RDMA_USER_CM_CMD_LISTEN, &l, sizeof(l), NULL, 0), 0);
	return h;
}

/* A resolves B:LPORT and CONNECTs with QPN 0xa1; returns A's handle. */
static uint32_t connect_a(void)
{
	uint32_t h = create_id(0, 0xa0);
	struct rdma_ucm_resolve_ip r = { .id = h, .timeout_ms = 1000 };
	struct rdma_ucm_resolve_route rr = { .id = h };
	struct rdma_ucm_connect c = { .id = h };

	fill_sin(&r.dst_addr, 1, LPORT);
	ck_assert_int_eq(ucma(0, RDMA_USER_CM_CMD_RESOLVE_IP, &r, sizeof(r), NULL, 0), 0);
	run(0);
	expect_event(0, RDMA_CM_EVENT_ADDR_RESOLVED, 0, now_ms);
	ck_assert_int_eq(ucma(0, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &rr, sizeof(rr), NULL, 0), 0);
	run(0);
	expect_event(0, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, now_ms);
	c.conn_param.valid = 1;
	c.conn_param.qp_num = 0xa1;
	c.conn_param.responder_resources = 1;
	c.conn_param.initiator_depth = 1;
	c.conn_param.retry_count = 7;
	c.conn_param.rnr_retry_count = 7;
	ck_assert_int_eq(ucma(0, RDMA_USER_CM_CMD_CONNECT, &c, sizeof(c), NULL, 0), 0);
	return h;
}

static int accept_id(int n, uint32_t h, uint32_t qpn)
{
	struct rdma_ucm_accept a = { .id = h, .uid = 0xbb };

	if (qpn) {
		a.conn_param.valid = 1;
		a.conn_param.qp_num = qpn;
		a.conn_param.responder_resources = 1;
		a.conn_param.initiator_depth = 1;
		a.conn_param.rnr_retry_count = 7;
	}
	return ucma(n, RDMA_USER_CM_CMD_ACCEPT, &a, sizeof(a), NULL, 0);
}

static int disconnect_id(int n, uint32_t h)
{
	struct rdma_ucm_disconnect d = { .id = h };

	return ucma(n, RDMA_USER_CM_CMD_DISCONNECT, &d, sizeof(d), NULL, 0);
}

/* The I-th MAD sent: ATTR from node FROM at T, dropped or not. */
static const struct cm_msg *mad_at(unsigned i, uint16_t attr, int from, uint64_t t, bool dropped)
{
	ck_assert_msg(i < nsent, "MAD %u not sent (%u sent)", i, nsent);
	ck_assert_msg(sent[i].m.attr_id == attr, "MAD %u: attribute 0x%x, expected 0x%x", i, sent[i].m.attr_id,
		      attr);
	ck_assert_int_eq(sent[i].from, from);
	ck_assert_uint_eq(sent[i].t, t);
	ck_assert_int_eq(sent[i].dropped, dropped);
	return &sent[i].m;
}

static unsigned count(uint16_t attr, int from)
{
	unsigned c = 0;

	for (unsigned i = 0; i < nsent; i++)
		c += sent[i].m.attr_id == attr && sent[i].from == from;
	return c;
}

/* Connect A to B (CONNECT_REQUEST accepted with QPN 0xb1, the RTU sent);
 * *HA / *HB: the connected ids. */
static void establish(uint32_t *ha, uint32_t *hb)
{
	const struct rdma_ucm_event_resp *e;

	listen_b();
	*ha = connect_a();
	run(0);
	e = expect_event(1, RDMA_CM_EVENT_CONNECT_REQUEST, 0, now_ms);
	*hb = e->id;
	ck_assert_int_eq(accept_id(1, *hb, 0xb1), 0);
	run(0);
	expect_event(0, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, now_ms);
	ck_assert_int_eq(accept_id(0, *ha, 0), 0);
	run(0);
	expect_event(1, RDMA_CM_EVENT_ESTABLISHED, 0, now_ms);
}

/* ---- cases ------------------------------------------------------------ */

/* The whole life of a connection without loss: REQ, REP, RTU, DREQ, DREP
 * with their comm IDs and TIDs; timewait 512 ms on both sides. */
START_TEST(lossless)
{
	uint32_t ha, hb;
	const struct cm_msg *req, *rep, *rtu, *dreq, *drep;

	establish(&ha, &hb);
	req = mad_at(0, CM_ATTR_REQ, 0, 0, false);
	rep = mad_at(1, CM_ATTR_REP, 1, 0, false);
	rtu = mad_at(2, CM_ATTR_RTU, 0, 0, false);
	ck_assert_uint_eq(nsent, 3);
	ck_assert_uint_eq(req->f[CMF_LOCAL_QPN], 0xa1);
	ck_assert_uint_eq(req->f[CMF_SERVICE_ID], (uint64_t)RDMA_PS_TCP << 16 | LPORT);
	ck_assert_uint_eq(req->f[CMF_REMOTE_CM_RESPONSE_TIMEOUT], 20);
	ck_assert_uint_eq(req->f[CMF_LOCAL_CM_RESPONSE_TIMEOUT], 20);
	ck_assert_uint_eq(req->f[CMF_MAX_CM_RETRIES], 15);
	ck_assert_uint_eq(req->f[CMF_PRI_LOCAL_ACK_TIMEOUT], 17);
	ck_assert_uint_eq(rep->tid, req->tid);
	ck_assert_uint_eq(rep->f[CMF_REMOTE_COMM_ID], req->f[CMF_LOCAL_COMM_ID]);
	ck_assert_uint_eq(rep->f[CMF_LOCAL_QPN], 0xb1);
	ck_assert_uint_eq(rtu->f[CMF_LOCAL_COMM_ID], req->f[CMF_LOCAL_COMM_ID]);
	ck_assert_uint_eq(rtu->f[CMF_REMOTE_COMM_ID], rep->f[CMF_LOCAL_COMM_ID]);
	run(10000);   /* nothing waits for an answer */
	ck_assert_uint_eq(nsent, 3);
	ck_assert_int_eq(disconnect_id(0, ha), 0);
	run(0);
	dreq = mad_at(3, CM_ATTR_DREQ, 0, 10000, false);
	drep = mad_at(4, CM_ATTR_DREP, 1, 10000, false);
	ck_assert_uint_eq(dreq->f[CMF_REMOTE_QPN], 0xb1);
	ck_assert_uint_eq(drep->f[CMF_LOCAL_COMM_ID], rep->f[CMF_LOCAL_COMM_ID]);
	ck_assert_uint_eq(drep->f[CMF_REMOTE_COMM_ID], req->f[CMF_LOCAL_COMM_ID]);
	expect_event(1, RDMA_CM_EVENT_DISCONNECTED, 0, 10000);
	expect_event(0, RDMA_CM_EVENT_DISCONNECTED, 0, 10000);
	ck_assert_int_eq(disconnect_id(1, hb), 0);   /* answered already: nothing sent */
	run(100000);
	expect_event(1, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, 10512);
	expect_event(0, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, 10512);
	ck_assert_uint_eq(nsent, 5);
	no_event(0);
	no_event(1);
	ck_assert_uint_eq(nd[0].dev.cm->st.retransmits + nd[1].dev.cm->st.retransmits, 0);
	ck_assert_uint_eq(nd[0].dev.cm->st.dup + nd[1].dev.cm->st.dup, 0);
}
END_TEST

/* Every REQ lost: 15 resends, one per CM response timeout, then
 * UNREACHABLE -ETIMEDOUT; the same MAD bytes each time. */
START_TEST(req_lost)
{
	drop[0][CM_ATTR_REQ - CM_ATTR_REQ] = UINT32_MAX;
	listen_b();
	connect_a();
	run(100000);
	ck_assert_uint_eq(nsent, 16);
	for (unsigned i = 0; i < 16; i++) {
		const struct cm_msg *m = mad_at(i, CM_ATTR_REQ, 0, i * TIMEOUT_MS, true);

		ck_assert_int_eq(memcmp(m, &sent[0].m, sizeof(*m)), 0);
	}
	expect_event(0, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, 16 * TIMEOUT_MS);
	no_event(0);
	no_event(1);
	ck_assert_uint_eq(nd[0].dev.cm->st.retransmits, 15);
	ck_assert_uint_eq(nd[0].dev.cm->st.timeouts, 1);
}
END_TEST

/* The 14 first REQs lost: the 15th resend gets through at 4500 ms. */
START_TEST(req_last_resend)
{
	drop[0][CM_ATTR_REQ - CM_ATTR_REQ] = 15;
	listen_b();
	connect_a();
	run(100000);
	mad_at(14, CM_ATTR_REQ, 0, 14 * TIMEOUT_MS, true);
	mad_at(15, CM_ATTR_REQ, 0, 15 * TIMEOUT_MS, false);
	expect_event(1, RDMA_CM_EVENT_CONNECT_REQUEST, 0, 4500);
	/* no resend left: A gives up at 4800 whatever B does */
	expect_event(0, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, 4800);
	ck_assert_uint_eq(nsent, 16);
}
END_TEST

/* The application on B is slow: A's REQ is resent; each duplicate REQ gets
 * an MRA (REQ, service timeout 24) and never a second CONNECT_REQUEST; the
 * first MRA makes A wait 2^16 + 2^9 ms (cm_convert_to_ms(24) +
 * cm_convert_to_ms(17)) before each resend; a later MRA is a duplicate. */
START_TEST(slow_accept_mra)
{
	const struct rdma_ucm_event_resp *e;
	const struct cm_msg *req, *mra;
	uint32_t ha, hb;

	listen_b();
	ha = connect_a();
	run(0);
	e = expect_event(1, RDMA_CM_EVENT_CONNECT_REQUEST, 0, 0);
	hb = e->id;
	run(TIMEOUT_MS);
	req = mad_at(0, CM_ATTR_REQ, 0, 0, false);
	mad_at(1, CM_ATTR_REQ, 0, 300, false);
	mra = mad_at(2, CM_ATTR_MRA, 1, 300, false);
	ck_assert_uint_eq(mra->tid, req->tid);
	ck_assert_uint_eq(mra->f[CMF_REMOTE_COMM_ID], req->f[CMF_LOCAL_COMM_ID]);
	ck_assert_uint_ne(mra->f[CMF_LOCAL_COMM_ID], 0);
	ck_assert_uint_eq(mra->f[CMF_MSG_MRAED], CM_MSG_REQ);
	ck_assert_uint_eq(mra->f[CMF_SERVICE_TIMEOUT], 24);
	ck_assert_uint_eq(nsent, 3);
	run_until(300 + 66048 - 1);
	ck_assert_uint_eq(nsent, 3);
	run_until(300 + 66048);
	mad_at(3, CM_ATTR_REQ, 0, 66348, false);
	mad_at(4, CM_ATTR_MRA, 1, 66348, false);   /* still not answered */
	ck_assert_uint_eq(nd[0].dev.cm->st.dup, 1);   /* the second MRA */
	run_until(66348 + 66048);
	mad_at(5, CM_ATTR_REQ, 0, 132396, false);
	mad_at(6, CM_ATTR_MRA, 1, 132396, false);
	no_event(1);
	ck_assert_int_eq(accept_id(1, hb, 0xb1), 0);
	run(0);
	mad_at(7, CM_ATTR_REP, 1, 132396, false);
	expect_event(0, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, 132396);
	ck_assert_uint_eq(nd[1].dev.cm->st.dup, 3);
	ck_assert_uint_eq(nd[0].dev.cm->st.retransmits, 3);
	(void)ha;
}
END_TEST

/* REPs lost twice: resent at 300 and 600 by its own timer; a duplicate
 * REQ while the REP waits gets nothing (cm_dup_req_handler); the RTU goes
 * when A's application ACCEPTs. */
START_TEST(rep_lost)
{
	drop[1][CM_ATTR_REP - CM_ATTR_REQ] = 2;
	listen_b();
	uint32_t ha = connect_a();

	run(0);
	uint32_t hb = expect_event(1, RDMA_CM_EVENT_CONNECT_REQUEST, 0, 0)->id;

	ck_assert_int_eq(accept_id(1, hb, 0xb1), 0);
	run(1000);
	mad_at(0, CM_ATTR_REQ, 0, 0, false);
	mad_at(1, CM_ATTR_REP, 1, 0, true);
	/* at 300 both timers run out: A's first (armed first) */
	mad_at(2, CM_ATTR_REQ, 0, 300, false);
	mad_at(3, CM_ATTR_REP, 1, 300, true);
	mad_at(4, CM_ATTR_REQ, 0, 600, false);
	mad_at(5, CM_ATTR_REP, 1, 600, false);
	expect_event(0, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, 600);
	/* the REP's next resend finds A's application not done yet: MRA */
	mad_at(6, CM_ATTR_REP, 1, 900, false);
	mad_at(7, CM_ATTR_MRA, 0, 900, false);
	ck_assert_uint_eq(nsent, 8);
	ck_assert_uint_eq(nd[1].dev.cm->st.dup, 2);   /* the REQs at 300 and 600 */
	ck_assert_uint_eq(nd[0].dev.cm->st.dup, 1);   /* the REP at 900 */
	ck_assert_int_eq(accept_id(0, ha, 0), 0);
	run(0);
	mad_at(8, CM_ATTR_RTU, 0, 1000, false);
	expect_event(1, RDMA_CM_EVENT_ESTABLISHED, 0, 1000);
}
END_TEST

/* A slow to send its RTU: B's resent REP gets an MRA (REP) from A, so B
 * waits 66048 ms before its next resend. */
START_TEST(slow_rtu_mra)
{
	listen_b();
	uint32_t ha = connect_a();

	run(0);
	uint32_t hb = expect_event(1, RDMA_CM_EVENT_CONNECT_REQUEST, 0, 0)->id;

	ck_assert_int_eq(accept_id(1, hb, 0xb1), 0);
	run(0);
	expect_event(0, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, 0);
	run(TIMEOUT_MS);
	mad_at(2, CM_ATTR_REP, 1, 300, false);
	const struct cm_msg *mra = mad_at(3, CM_ATTR_MRA, 0, 300, false);

	ck_assert_uint_eq(mra->f[CMF_MSG_MRAED], CM_MSG_REP);
	ck_assert_uint_eq(mra->f[CMF_SERVICE_TIMEOUT], 24);
	ck_assert_uint_eq(mra->f[CMF_LOCAL_COMM_ID], sent[0].m.f[CMF_LOCAL_COMM_ID]);
	ck_assert_uint_eq(mra->f[CMF_REMOTE_COMM_ID], sent[1].m.f[CMF_LOCAL_COMM_ID]);
	run_until(300 + 66048 - 1);
	ck_assert_uint_eq(nsent, 4);
	ck_assert_int_eq(accept_id(0, ha, 0), 0);
	run(0);
	mad_at(4, CM_ATTR_RTU, 0, 66347, false);
	expect_event(1, RDMA_CM_EVENT_ESTABLISHED, 0, 66347);
	run(100000);
	ck_assert_uint_eq(nsent, 5);
}
END_TEST

/* Every RTU lost: B resends its REP 15 times; each duplicate REP gets the
 * RTU again from A (cm_dup_rep_handler); then B's id is UNREACHABLE
 * -ETIMEDOUT, while A stays connected. NOTIFY (COMM_EST) instead stops the
 * resends with ESTABLISHED. */
START_TEST(rtu_lost)
{
	uint32_t ha, hb;

	drop[0][CM_ATTR_RTU - CM_ATTR_REQ] = UINT32_MAX;
	listen_b();
	ha = connect_a();
	run(0);
	hb = expect_event(1, RDMA_CM_EVENT_CONNECT_REQUEST, 0, 0)->id;
	ck_assert_int_eq(accept_id(1, hb, 0xb1), 0);
	run(0);
	expect_event(0, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, 0);
	ck_assert_int_eq(accept_id(0, ha, 0), 0);
	run(100000);
	ck_assert_uint_eq(count(CM_ATTR_REP, 1), 16);
	ck_assert_uint_eq(count(CM_ATTR_RTU, 0), 16);
	for (unsigned i = 1; i <= 15; i++) {
		mad_at(1 + 2 * i, CM_ATTR_REP, 1, i * TIMEOUT_MS, false);
		mad_at(2 + 2 * i, CM_ATTR_RTU, 0, i * TIMEOUT_MS, true);
	}
	expect_event(1, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, 4800);
	no_event(0);
	no_event(1);
	ck_assert_uint_eq(nd[0].dev.cm->st.dup, 15);
	ck_assert_uint_eq(nd[1].dev.cm->st.retransmits, 15);
}
END_TEST

START_TEST(rtu_lost_notify)
{
	uint32_t ha, hb;
	struct rdma_ucm_notify nt;

	drop[0][CM_ATTR_RTU - CM_ATTR_REQ] = UINT32_MAX;
	listen_b();
	ha = connect_a();
	run(0);
	hb = expect_event(1, RDMA_CM_EVENT_CONNECT_REQUEST, 0, 0)->id;
	ck_assert_int_eq(accept_id(1, hb, 0xb1), 0);
	run(0);
	expect_event(0, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, 0);
	ck_assert_int_eq(accept_id(0, ha, 0), 0);
	run(700);
	ck_assert_uint_eq(count(CM_ATTR_REP, 1), 3);
	/* the first data packet reached B's QP: the application says so */
	nt.id = hb;
	nt.event = IBV_EVENT_COMM_EST;
	ck_assert_int_eq(ucma(1, RDMA_USER_CM_CMD_NOTIFY, &nt, sizeof(nt), NULL, 0), 0);
	run(100000);
	expect_event(1, RDMA_CM_EVENT_ESTABLISHED, 0, 700);
	ck_assert_uint_eq(count(CM_ATTR_REP, 1), 3);
	no_event(1);
}
END_TEST

/* Every DREQ lost: 15 resends, then DISCONNECTED -ETIMEDOUT and timewait
 * (512 ms) on A; B never hears of it. */
START_TEST(dreq_lost)
{
	uint32_t ha, hb;

	establish(&ha, &hb);
	drop[0][CM_ATTR_DREQ - CM_ATTR_REQ] = UINT32_MAX;
	ck_assert_int_eq(disconnect_id(0, ha), 0);
	run(100000);
	ck_assert_uint_eq(count(CM_ATTR_DREQ, 0), 16);
	for (unsigned i = 0; i < 16; i++)
		mad_at(3 + i, CM_ATTR_DREQ, 0, i * TIMEOUT_MS, true);
	expect_event(0, RDMA_CM_EVENT_DISCONNECTED, -ETIMEDOUT, 4800);
	expect_event(0, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, 4800 + 512);
	no_event(0);
	no_event(1);
	ck_assert_uint_eq(nd[0].dev.cm->st.timeouts, 1);
}
END_TEST

/* The DREP lost: A resends the DREQ; B, in timewait, answers it with the
 * DREP again; after B's timewait, a DREQ for the connection it no longer
 * knows gets a DREP all the same (cm_issue_drep), counted as a duplicate. */
START_TEST(drep_lost)
{
	uint32_t ha, hb;
	const struct cm_msg *dreq, *drep;

	establish(&ha, &hb);
	drop[1][CM_ATTR_DREP - CM_ATTR_REQ] = 1;
	ck_assert_int_eq(disconnect_id(0, ha), 0);
	run(0);
	expect_event(1, RDMA_CM_EVENT_DISCONNECTED, 0, 0);
	run(TIMEOUT_MS);
	mad_at(3, CM_ATTR_DREQ, 0, 0, false);
	mad_at(4, CM_ATTR_DREP, 1, 0, true);
	mad_at(5, CM_ATTR_DREQ, 0, 300, false);
	mad_at(6, CM_ATTR_DREP, 1, 300, false);
	expect_event(0, RDMA_CM_EVENT_DISCONNECTED, 0, 300);
	ck_assert_uint_eq(nd[1].dev.cm->st.dup, 1);
	run(100000);
	expect_event(1, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, 512);
	expect_event(0, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, 812);
	/* B's id destroyed; A's DREQ comes again, for no connection of B's */
	struct rdma_ucm_destroy_id d = { .id = hb };
	struct rdma_ucm_destroy_id_resp dr;

	ck_assert_int_eq(ucma(1, RDMA_USER_CM_CMD_DESTROY_ID, &d, sizeof(d), &dr, sizeof(dr)), 0);
	dreq = &sent[5].m;
	inject(0, dreq);
	run(0);
	ck_assert_uint_eq(nsent, 8);
	drep = mad_at(7, CM_ATTR_DREP, 1, now_ms, false);
	ck_assert_uint_eq(drep->tid, dreq->tid);
	ck_assert_uint_eq(drep->f[CMF_LOCAL_COMM_ID], dreq->f[CMF_REMOTE_COMM_ID]);
	ck_assert_uint_eq(drep->f[CMF_REMOTE_COMM_ID], dreq->f[CMF_LOCAL_COMM_ID]);
	ck_assert_uint_eq(nd[1].dev.cm->st.dup, 2);
	ck_assert_uint_eq(nd[1].dev.cm->st.drops, 0);
	ck_assert_uint_eq(nd[0].dev.cm->st.dup, 1);   /* the DREP, for an id long done */
	no_event(0);
	no_event(1);
}
END_TEST

/* The REQ again while B is in timewait: REJ "stale connection" (10) naming
 * the REQ, both comm IDs, the REQ's TID; no event on either side. */
START_TEST(stale_req_in_timewait)
{
	uint32_t ha, hb;
	const struct cm_msg *req, *rej;

	establish(&ha, &hb);
	ck_assert_int_eq(disconnect_id(1, hb), 0);
	run(0);
	expect_event(0, RDMA_CM_EVENT_DISCONNECTED, 0, 0);
	expect_event(1, RDMA_CM_EVENT_DISCONNECTED, 0, 0);
	run(100);
	req = &sent[0].m;
	inject(0, req);
	run(0);
	ck_assert_uint_eq(nsent, 6);
	rej = mad_at(5, CM_ATTR_REJ, 1, 100, false);
	ck_assert_uint_eq(rej->tid, req->tid);
	ck_assert_uint_eq(rej->f[CMF_REASON], CM_REJ_STALE_CONN);
	ck_assert_uint_eq(rej->f[CMF_MSG_REJECTED], CM_MSG_REQ);
	ck_assert_uint_eq(rej->f[CMF_REMOTE_COMM_ID], req->f[CMF_LOCAL_COMM_ID]);
	ck_assert_uint_eq(rej->f[CMF_LOCAL_COMM_ID], sent[1].m.f[CMF_LOCAL_COMM_ID]);
	ck_assert_uint_eq(nd[1].dev.cm->st.dup, 1);
	/* A, in timewait too, takes the REJ as a duplicate */
	ck_assert_uint_eq(nd[0].dev.cm->st.dup, 1);
	run(100000);
	expect_event(1, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, 512);
	expect_event(0, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, 512);
	no_event(0);
	no_event(1);
}
END_TEST

/* A REQ (from a peer made up by the test) asking for 3 CM retries: B's REP,
 * never answered, is resent 3 times, then UNREACHABLE at 4 x 300 ms. */
START_TEST(rep_retries_of_req)
{
	struct cm_msg req;
	uint32_t hb;

	listen_b();
	drop[0][0] = 1;   /* A's own REQ never reaches B: the test sends its copy */
	connect_a();
	run(0);
	req = sent[0].m;
	req.f[CMF_MAX_CM_RETRIES] = 3;
	req.f[CMF_LOCAL_COMM_ID] ^= 0x5a5a;   /* another connection of A's address */
	inject(0, &req);
	run(0);
	hb = expect_event(1, RDMA_CM_EVENT_CONNECT_REQUEST, 0, 0)->id;
	drop[1][CM_ATTR_REP - CM_ATTR_REQ] = UINT32_MAX;
	ck_assert_int_eq(accept_id(1, hb, 0xb1), 0);
	drop[0][0] = UINT32_MAX;   /* A's own REQ resends: not of interest */
	run(100000);
	ck_assert_uint_eq(count(CM_ATTR_REP, 1), 4);
	expect_event(1, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, 4 * TIMEOUT_MS);
	no_event(1);
	ck_assert_uint_eq(nd[1].dev.cm->st.retransmits, 3);
}
END_TEST

/* MRAs that do not fit: one of the REP while the REQ waits (message MRAed
 * must be the MAD out), one from another address, a second one of the REQ
 * (MRA_REQ_RCVD): each moves nothing; the REQ is resent on time. */
START_TEST(mra_refused)
{
	struct cm_msg m;

	listen_b();
	drop[0][CM_ATTR_REQ - CM_ATTR_REQ] = UINT32_MAX;
	connect_a();
	run(0);
	memset(&m, 0, sizeof(m));
	m.attr_id = CM_ATTR_MRA;
	m.method = CM_METHOD_SEND;
	m.tid = sent[0].m.tid;
	m.f[CMF_LOCAL_COMM_ID] = 0x1234;
	m.f[CMF_REMOTE_COMM_ID] = sent[0].m.f[CMF_LOCAL_COMM_ID];
	m.f[CMF_SERVICE_TIMEOUT] = 24;
	m.f[CMF_MSG_MRAED] = CM_MSG_REP;
	inject(1, &m);
	run(0);
	ck_assert_uint_eq(nd[0].dev.cm->st.dup, 1);
	run_until(TIMEOUT_MS);
	mad_at(1, CM_ATTR_REQ, 0, 300, true);
	/* the same MRA from 127.0.0.3: not the peer */
	m.f[CMF_MSG_MRAED] = CM_MSG_REQ;
	inject(1, &m);
	{
		union ibv_gid other = nd[1].gid;

		other.raw[15] = 3;
		cm_input(&nd[0].dev, wire[0].buf, wire[0].len, &other, &nd[0].gid, 49152, true);
		nwire = 0;
	}
	ck_assert_uint_eq(nd[0].dev.cm->st.drops, 1);
	run_until(2 * TIMEOUT_MS);
	mad_at(2, CM_ATTR_REQ, 0, 600, true);
	/* the right one at 700: the next resend at 700 + 66048 */
	run_until(700);
	inject(1, &m);
	run(0);
	inject(1, &m);   /* a second MRA: a duplicate */
	run(0);
	ck_assert_uint_eq(nd[0].dev.cm->st.dup, 2);
	run_until(700 + 66048 - 1);
	ck_assert_uint_eq(nsent, 3);
	run_until(700 + 66048);
	mad_at(3, CM_ATTR_REQ, 0, 66748, true);
	run_until(700 + 2 * 66048);
	mad_at(4, CM_ATTR_REQ, 0, 132796, true);
	no_event(0);
}
END_TEST

/* A DREQ while B's CONNECT_REQUEST is not answered yet (cm.c
 * cm_dreq_handler): one naming B's comm ID, which A learned from B's MRA,
 * finds the id in REQ_RCVD / MRA_REQ_SENT and is dropped: no DREP, no event,
 * counted as a drop, not a duplicate; one naming no comm ID of B matches no
 * connection and gets a DREP with the IDs swapped (cm_issue_drep). Neither
 * ends the request: B's ACCEPT then connects as usual. */
START_TEST(dreq_before_accept)
{
	const struct rdma_ucm_event_resp *e;
	const struct cm_msg *req, *mra, *drep;
	struct cm_msg m;
	uint32_t ha, hb;

	listen_b();
	ha = connect_a();
	run(0);
	e = expect_event(1, RDMA_CM_EVENT_CONNECT_REQUEST, 0, 0);
	hb = e->id;
	run(TIMEOUT_MS);
	req = mad_at(0, CM_ATTR_REQ, 0, 0, false);
	mad_at(1, CM_ATTR_REQ, 0, 300, false);
	mra = mad_at(2, CM_ATTR_MRA, 1, 300, false);
	ck_assert_uint_eq(nsent, 3);
	ck_assert_uint_eq(nd[1].dev.cm->st.dup, 1);   /* the second REQ */
	memset(&m, 0, sizeof(m));
	m.attr_id = CM_ATTR_DREQ;
	m.method = CM_METHOD_SEND;
	m.tid = 0x77;
	m.f[CMF_LOCAL_COMM_ID] = req->f[CMF_LOCAL_COMM_ID];
	m.f[CMF_REMOTE_COMM_ID] = mra->f[CMF_LOCAL_COMM_ID];
	m.f[CMF_REMOTE_QPN] = 0;   /* A does not know B's QPN before the REP */
	inject(0, &m);
	run(0);
	ck_assert_uint_eq(nsent, 3);
	no_event(1);
	ck_assert_uint_eq(nd[1].dev.cm->st.drops, 1);
	ck_assert_uint_eq(nd[1].dev.cm->st.dup, 1);
	/* the same DREQ naming B's QPN as the REP will: dropped as well */
	m.f[CMF_REMOTE_QPN] = 0xb1;
	inject(0, &m);
	run(0);
	ck_assert_uint_eq(nsent, 3);
	no_event(1);
	ck_assert_uint_eq(nd[1].dev.cm->st.drops, 2);
	/* without B's comm ID: no connection of B, a DREP answers */
	m.f[CMF_REMOTE_COMM_ID] = 0;
	m.tid = 0x78;
	inject(0, &m);
	run(0);
	drep = mad_at(3, CM_ATTR_DREP, 1, 300, false);
	ck_assert_uint_eq(drep->tid, 0x78);
	ck_assert_uint_eq(drep->f[CMF_LOCAL_COMM_ID], 0);
	ck_assert_uint_eq(drep->f[CMF_REMOTE_COMM_ID], req->f[CMF_LOCAL_COMM_ID]);
	ck_assert_uint_eq(nd[1].dev.cm->st.dup, 2);
	ck_assert_uint_eq(nd[1].dev.cm->st.drops, 2);
	no_event(0);
	no_event(1);
	/* the request is still B's to answer */
	ck_assert_int_eq(accept_id(1, hb, 0xb1), 0);
	run(0);
	mad_at(4, CM_ATTR_REP, 1, 300, false);
	expect_event(0, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, 300);
	ck_assert_int_eq(accept_id(0, ha, 0), 0);
	run(0);
	mad_at(5, CM_ATTR_RTU, 0, 300, false);
	expect_event(1, RDMA_CM_EVENT_ESTABLISHED, 0, 300);
	ck_assert_uint_eq(nsent, 6);
	no_event(0);
	no_event(1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cm_engine");
	TCase *tc = tcase_create("cm_engine");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, lossless);
	tcase_add_test(tc, req_lost);
	tcase_add_test(tc, req_last_resend);
	tcase_add_test(tc, slow_accept_mra);
	tcase_add_test(tc, rep_lost);
	tcase_add_test(tc, slow_rtu_mra);
	tcase_add_test(tc, rtu_lost);
	tcase_add_test(tc, rtu_lost_notify);
	tcase_add_test(tc, dreq_lost);
	tcase_add_test(tc, drep_lost);
	tcase_add_test(tc, stale_req_in_timewait);
	tcase_add_test(tc, mra_refused);
	tcase_add_test(tc, rep_retries_of_req);
	tcase_add_test(tc, dreq_before_accept);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
