/*
 * cm_churn - connections through librdmacm over uroce, for tests/cm_churn.sh
 * (docs/rdma-cm.md "Robustness").
 *
 *   cm_churn server ADDR PORT N churn|hold|survive
 *   cm_churn client ADDR PORT N INFLIGHT churn|hold|survive
 *
 * Every connection is RC with its own QP (rdma_create_qp on one PD and CQ
 * of the device), so the daemon's QP tables churn with the CM's.
 *
 * churn: the client keeps INFLIGHT connections in progress, N in all; each
 * goes create_id, resolve_addr, resolve_route, create_qp, connect,
 * ESTABLISHED, rdma_disconnect, DISCONNECTED, destroy. The server accepts
 * each and destroys it at DISCONNECTED. Each side exits 0 after exactly N
 * connections with exactly N of each event it expects (printed), and 1 at
 * the first event of another type or with a status other than 0.
 *
 * hold: connect N (INFLIGHT at once on the client), print "established N"
 * and wait to be killed. survive: the same, then wait until each of the N
 * ids has had DISCONNECTED (status 0) and then TIMEWAIT_EXIT (status 0), as
 * the kernel's CM gives them when the peer's process dies, and nothing
 * else; the survivor calls rdma_disconnect at DISCONNECTED as rping does.
 */
#include <errno.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

enum end { END_CHURN, END_HOLD, END_SURVIVE };

struct side {
	struct rdma_event_channel *ch;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct sockaddr_storage addr;
	enum end end;
	unsigned int n, inflight;
	unsigned int started, live, max_live, established, disconnected, timewait;
	unsigned int counts[32];
};

/* What an id has seen in survive mode: 0 nothing yet, 1 DISCONNECTED, 2 TIMEWAIT_EXIT. */
struct conn {
	struct rdma_cm_id *id;
	int seen;
};

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("cm_churn: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static enum end parse_end(const char *s)
{
	if (!strcmp(s, "churn"))
		return END_CHURN;
	if (!strcmp(s, "hold"))
		return END_HOLD;
	if (!strcmp(s, "survive"))
		return END_SURVIVE;
	die("unknown end %s", s);
	return END_CHURN;
}

static void parse_addr(struct side *s, const char *host, const char *port)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV }, *res;

	if (getaddrinfo(host, port, &hints, &res))
		die("bad address %s port %s", host, port);
	memcpy(&s->addr, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
}

/* The PD and CQ of the device, made with the first id that knows it. */
static void verbs_init(struct side *s, struct rdma_cm_id *id)
{
	if (s->pd)
		return;
	s->pd = ibv_alloc_pd(id->verbs);
	if (!s->pd)
		die("ibv_alloc_pd: %s", strerror(errno));
	s->cq = ibv_create_cq(id->verbs, 64, NULL, NULL, 0);
	if (!s->cq)
		die("ibv_create_cq: %s", strerror(errno));
}

static void make_qp(struct side *s, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr a;

	verbs_init(s, id);
	memset(&a, 0, sizeof(a));
	a.send_cq = a.recv_cq = s->cq;
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = a.cap.max_recv_wr = 2;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, s->pd, &a))
		die("rdma_create_qp: %s", strerror(errno));
}

static void conn_param(struct rdma_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	p->responder_resources = 1;
	p->initiator_depth = 1;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
}

static void start_one(struct side *s)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c)
		die("out of memory");
	if (rdma_create_id(s->ch, &c->id, c, RDMA_PS_TCP))
		die("rdma_create_id: %s", strerror(errno));
	if (rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&s->addr, 2000))
		die("rdma_resolve_addr: %s", strerror(errno));
	s->started++;
	s->live++;
	if (s->live > s->max_live)
		s->max_live = s->live;
}

static void finish(struct side *s, struct rdma_cm_id *id)
{
	struct conn *c = id->context;

	rdma_destroy_qp(id);
	if (rdma_destroy_id(id))
		die("rdma_destroy_id: %s", strerror(errno));
	free(c);
	s->live--;
}

/* All N connected in hold/survive mode: say so for the script. */
static void all_up(struct side *s)
{
	printf("established %u\n", s->n);
	fflush(stdout);
	if (s->end == END_HOLD)
		for (;;)
			pause();
}

/* One event; returns true when the side is done. */
static bool handle(struct side *s, struct rdma_cm_event *e, bool active)
{
	struct rdma_cm_id *id = e->id;
	enum rdma_cm_event_type type = e->event;
	int status = e->status;
	struct rdma_conn_param p;
	struct conn *c;

	if ((unsigned int)type < 32)
		s->counts[type]++;
	if (status)
		die("%s: %s with status %d", active ? "client" : "server", rdma_event_str(type), status);
	switch (type) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (!active || rdma_resolve_route(id, 2000))
			die("rdma_resolve_route: %s", strerror(errno));
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (!active)
			die("server: ROUTE_RESOLVED");
		make_qp(s, id);
		conn_param(&p);
		if (rdma_connect(id, &p))
			die("rdma_connect: %s", strerror(errno));
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		if (active)
			die("client: CONNECT_REQUEST");
		c = calloc(1, sizeof(*c));
		if (!c)
			die("out of memory");
		c->id = id;
		id->context = c;
		make_qp(s, id);
		conn_param(&p);
		if (rdma_accept(id, &p))
			die("rdma_accept: %s", strerror(errno));
		s->live++;
		if (s->live > s->max_live)
			s->max_live = s->live;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		s->established++;
		if (s->end == END_CHURN) {
			if (active && rdma_disconnect(id))
				die("rdma_disconnect: %s", strerror(errno));
		} else if (s->established == s->n) {
			rdma_ack_cm_event(e);
			all_up(s);
			return false;
		}
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		s->disconnected++;
		c = id->context;
		if (s->end == END_SURVIVE) {
			if (c->seen != 0)
				die("a second DISCONNECTED");
			c->seen = 1;
			/* the DREP went already: nothing to send, and no error */
			if (rdma_disconnect(id))
				die("rdma_disconnect after DISCONNECTED: %s", strerror(errno));
			break;
		}
		rdma_ack_cm_event(e);
		finish(s, id);
		if (active && s->started < s->n)
			start_one(s);
		return s->disconnected == s->n;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		c = id->context;
		if (s->end != END_SURVIVE || c->seen != 1)
			die("%s: TIMEWAIT_EXIT before DISCONNECTED", active ? "client" : "server");
		c->seen = 2;
		s->timewait++;
		rdma_ack_cm_event(e);
		finish(s, id);
		return s->timewait == s->n;
	default:
		die("%s: unexpected %s (status %d)", active ? "client" : "server", rdma_event_str(type), status);
	}
	rdma_ack_cm_event(e);
	return false;
}

static void run(struct side *s, bool active)
{
	struct rdma_cm_event *e;

	for (;;) {
		if (rdma_get_cm_event(s->ch, &e))
			die("rdma_get_cm_event: %s", strerror(errno));
		if (handle(s, e, active))
			return;
	}
}

int main(int argc, char **argv)
{
	struct side s;
	struct rdma_cm_id *listen_id;
	bool active;
	unsigned int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&s, 0, sizeof(s));
	if (argc == 6 && !strcmp(argv[1], "server")) {
		active = false;
		s.n = (unsigned int)strtoul(argv[4], NULL, 0);
		s.end = parse_end(argv[5]);
	} else if (argc == 7 && !strcmp(argv[1], "client")) {
		active = true;
		s.n = (unsigned int)strtoul(argv[4], NULL, 0);
		s.inflight = (unsigned int)strtoul(argv[5], NULL, 0);
		s.end = parse_end(argv[6]);
	} else {
		fprintf(stderr, "usage: cm_churn server ADDR PORT N churn|hold|survive\n"
				"       cm_churn client ADDR PORT N INFLIGHT churn|hold|survive\n");
		return 2;
	}
	if (!s.n)
		die("N must be at least 1");
	parse_addr(&s, argv[2], argv[3]);
	printf("pid %d\n", (int)getpid());
	s.ch = rdma_create_event_channel();
	if (!s.ch)
		die("rdma_create_event_channel: %s", strerror(errno));
	if (active) {
		for (i = 0; i < s.inflight && s.started < s.n; i++)
			start_one(&s);
	} else {
		if (rdma_create_id(s.ch, &listen_id, NULL, RDMA_PS_TCP))
			die("rdma_create_id: %s", strerror(errno));
		if (rdma_bind_addr(listen_id, (struct sockaddr *)&s.addr))
			die("rdma_bind_addr: %s", strerror(errno));
		if (rdma_listen(listen_id, 64))
			die("rdma_listen: %s", strerror(errno));
		printf("listening\n");
	}
	run(&s, active);
	if (active)
		printf("client: %u connections, %u ADDR_RESOLVED %u ROUTE_RESOLVED %u ESTABLISHED %u DISCONNECTED "
		       "%u TIMEWAIT_EXIT, at most %u in flight\n",
		       s.started, s.counts[RDMA_CM_EVENT_ADDR_RESOLVED], s.counts[RDMA_CM_EVENT_ROUTE_RESOLVED],
		       s.counts[RDMA_CM_EVENT_ESTABLISHED], s.counts[RDMA_CM_EVENT_DISCONNECTED],
		       s.counts[RDMA_CM_EVENT_TIMEWAIT_EXIT], s.max_live);
	else
		printf("server: %u CONNECT_REQUEST %u ESTABLISHED %u DISCONNECTED %u TIMEWAIT_EXIT, at most %u at once\n",
		       s.counts[RDMA_CM_EVENT_CONNECT_REQUEST], s.counts[RDMA_CM_EVENT_ESTABLISHED],
		       s.counts[RDMA_CM_EVENT_DISCONNECTED], s.counts[RDMA_CM_EVENT_TIMEWAIT_EXIT], s.max_live);
	if (!active)
		rdma_destroy_id(listen_id);
	if (s.pd) {
		ibv_destroy_cq(s.cq);
		ibv_dealloc_pd(s.pd);
	}
	rdma_destroy_event_channel(s.ch);
	return 0;
}
