/*
 * provider_ucma: librdmacm (linked, -lrdmacm) over the provider's rdma_cm
 * interception (docs/rdma-cm.md, "Provider"). Run under `uroce run` with
 * uroce0 up at 127.0.0.1 (tests/provider_ucma.sh).
 *
 * Case "provider": what the provider answers by itself, without the
 * daemon's connection manager: the channel fd, non-blocking GET_EVENT, ids
 * kept in the provider, the device an address names, options kept before the
 * device is known, the kernel's state errors for a kept id, migration of a
 * kept id, a fork child, a GET_EVENT blocked while another thread closes.
 * librdmacm being linked means it was loaded before libibverbs loaded the
 * provider: the hooks were installed by the provider's constructor.
 *
 * Case "daemon": what needs the daemon's connection manager (bind, resolve,
 * listen/connect/accept inside one process, events_reported, the replay of
 * kept options). Selected with CK_RUN_CASE=daemon by tests/cm_daemon.sh.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#include "check_main.h"

static struct sockaddr_in addr4(const char *a, uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };

	ck_assert_int_eq(inet_pton(AF_INET, a, &sa.sin_addr), 1);
	return sa;
}

/* ------------------------------------------------------------ provider */

START_TEST(channel_fd)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev = NULL;
	struct pollfd p;
	struct stat st;
	int fl;

	ck_assert_ptr_nonnull(ch);
	ck_assert_int_ge(ch->fd, 0);
	/* The application's fstat sees the socket itself; only librdmacm's sees a char device. */
	ck_assert_int_eq(fstat(ch->fd, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	p = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	ck_assert_int_eq(poll(&p, 1, 100), 0); /* pollable, nothing queued */
	fl = fcntl(ch->fd, F_GETFL);
	ck_assert_int_ge(fl, 0);
	ck_assert_int_eq(fl & O_NONBLOCK, 0);
	ck_assert_int_eq(fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK), 0);
	errno = 0;
	ck_assert_int_eq(rdma_get_cm_event(ch, &ev), -1);
	ck_assert_int_eq(errno, EAGAIN);
	ck_assert_ptr_null(ev);
	ck_assert_int_eq(fcntl(ch->fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	rdma_destroy_event_channel(ch);
}
END_TEST

START_TEST(ids_kept)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	static const enum rdma_port_space ps[] = { RDMA_PS_TCP, RDMA_PS_UDP, RDMA_PS_IPOIB, RDMA_PS_IB };
	struct rdma_cm_id *id[4], *bad = NULL;

	ck_assert_ptr_nonnull(ch);
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(rdma_create_id(ch, &id[i], &id[i], ps[i]), 0);
		ck_assert_ptr_eq(id[i]->channel, ch);
		ck_assert_ptr_eq(id[i]->context, &id[i]);
		ck_assert_ptr_null(id[i]->verbs); /* no device decided yet */
	}
	/* A port space the kernel does not know (ucma_get_qp_type): EINVAL. */
	errno = 0;
	ck_assert_int_eq(rdma_create_id(ch, &bad, NULL, (enum rdma_port_space)0x999), -1);
	ck_assert_int_eq(errno, EINVAL);
	for (int i = 3; i >= 0; i--)
		ck_assert_int_eq(rdma_destroy_id(id[i]), 0);
	/* The freed numbers are used again, as the kernel's ids are. */
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(rdma_create_id(ch, &id[i], NULL, RDMA_PS_TCP), 0);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(rdma_destroy_id(id[i]), 0);
	rdma_destroy_event_channel(ch);
}
END_TEST

/* An address that is no uroce device's (nor loopback): ENODEV, as the kernel for a local address without RDMA device. */
START_TEST(bind_enodev)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in sa = addr4("192.0.2.99", 7471);
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(7471) };
	struct rdma_cm_id *id;

	ck_assert_ptr_nonnull(ch);
	ck_assert_int_eq(inet_pton(AF_INET6, "2001:db8::99", &s6.sin6_addr), 1);
	ck_assert_int_eq(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	errno = 0;
	ck_assert_int_eq(rdma_bind_addr(id, (struct sockaddr *)&sa), -1);
	ck_assert_int_eq(errno, ENODEV);
	errno = 0;
	ck_assert_int_eq(rdma_bind_addr(id, (struct sockaddr *)&s6), -1);
	ck_assert_int_eq(errno, ENODEV);
	/* A resolve from such a source: ENODEV too, before any daemon is asked. */
	errno = 0;
	ck_assert_int_eq(rdma_resolve_addr(id, (struct sockaddr *)&sa, (struct sockaddr *)&sa, 1000), -1);
	ck_assert_int_eq(errno, ENODEV);
	ck_assert_int_eq(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}
END_TEST

/*
 * The kernel's cma_any_addr: a loopback address that is no device's (127.0.0.99,
 * ::1) binds as the wildcard does, and neither attaches a device (id->verbs NULL,
 * the address kept as bound); the device's own address attaches it. Listening
 * there works.
 */
START_TEST(bind_loopback_any)
{
	static const struct { const char *ip; bool dev; } rows[] = {
		{ "127.0.0.99", false }, { "::1", false }, { "0.0.0.0", false }, { "127.0.0.1", true },
	};
	struct rdma_event_channel *ch = rdma_create_event_channel();
	unsigned int i;

	ck_assert_ptr_nonnull(ch);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct sockaddr_storage ss = { 0 }, got;
		struct rdma_cm_id *id;
		socklen_t len;

		if (strchr(rows[i].ip, ':')) {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

			s6->sin6_family = AF_INET6;
			ck_assert_int_eq(inet_pton(AF_INET6, rows[i].ip, &s6->sin6_addr), 1);
			len = sizeof(*s6);
		} else {
			*(struct sockaddr_in *)&ss = addr4(rows[i].ip, 0);
			len = sizeof(struct sockaddr_in);
		}
		ck_assert_int_eq(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
		ck_assert_msg(rdma_bind_addr(id, (struct sockaddr *)&ss) == 0, "bind %s: %s", rows[i].ip, strerror(errno));
		ck_assert_msg((id->verbs != NULL) == rows[i].dev, "%s: verbs %p", rows[i].ip, (void *)id->verbs);
		memcpy(&got, rdma_get_local_addr(id), len);
		ck_assert_int_eq(got.ss_family, ss.ss_family);
		if (ss.ss_family == AF_INET)
			ck_assert_uint_eq(((struct sockaddr_in *)&got)->sin_addr.s_addr, ((struct sockaddr_in *)&ss)->sin_addr.s_addr);
		else
			ck_assert_mem_eq(&((struct sockaddr_in6 *)&got)->sin6_addr, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
		ck_assert_uint_ne(rdma_get_src_port(id), 0);
		ck_assert_int_eq(rdma_listen(id, 4), 0);
		ck_assert_msg((id->verbs != NULL) == rows[i].dev, "%s listening: verbs %p", rows[i].ip, (void *)id->verbs);
		ck_assert_int_eq(rdma_destroy_id(id), 0);
	}
	rdma_destroy_event_channel(ch);
}
END_TEST

/* Options before the device is known are kept; the kernel's length checks apply at once. */
START_TEST(set_option_kept)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id;
	uint8_t tos = 32, timeout = 14;
	int one = 1, big = 0;

	ck_assert_ptr_nonnull(ch);
	ck_assert_int_eq(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	ck_assert_int_eq(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof(tos)), 0);
	ck_assert_int_eq(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof(one)), 0);
	ck_assert_int_eq(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &one, sizeof(one)), 0);
	ck_assert_int_eq(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout,
					 sizeof(timeout)), 0);
	errno = 0;
	ck_assert_int_eq(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &big, sizeof(big)), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &tos, sizeof(tos)), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(rdma_set_option(id, RDMA_OPTION_ID, 77, &one, sizeof(one)), -1);
	ck_assert_int_eq(errno, ENOSYS);
	errno = 0; /* a path record needs a resolved id */
	ck_assert_int_eq(rdma_set_option(id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, &one, sizeof(one)), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}
END_TEST

/*
 * The kernel's answers for an id without a device (cma.c state checks): EINVAL.
 * librdmacm itself reads id->verbs in rdma_resolve_route and rdma_disconnect,
 * and its device's limits in rdma_connect of a TCP id: those are not tried,
 * CONNECT is tried on a UDP id.
 */
START_TEST(kept_id_state_errors)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1 };
	struct ibv_qp_attr qa;
	struct rdma_cm_id *id;
	int mask;

	ck_assert_ptr_nonnull(ch);
	ck_assert_int_eq(rdma_create_id(ch, &id, NULL, RDMA_PS_UDP), 0);
	errno = 0;
	ck_assert_int_eq(rdma_connect(id, &cp), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	qa.qp_state = IBV_QPS_INIT;
	ck_assert_int_eq(rdma_init_qp_attr(id, &qa, &mask), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(rdma_notify(id, IBV_EVENT_COMM_EST), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}
END_TEST

/* A kept id moves to another channel; its events_reported is 0. */
START_TEST(migrate_kept)
{
	struct rdma_event_channel *a = rdma_create_event_channel(), *b = rdma_create_event_channel();
	struct rdma_cm_id *id;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_ne(a->fd, b->fd);
	ck_assert_int_eq(rdma_create_id(a, &id, NULL, RDMA_PS_TCP), 0);
	ck_assert_int_eq(rdma_migrate_id(id, b), 0);
	ck_assert_ptr_eq(id->channel, b);
	/* Destroyed through b: the id is b's now. */
	rdma_destroy_event_channel(a);
	ck_assert_int_eq(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(b);
}
END_TEST

/* A fork child's use of its parent's channel fails with EIO. */
START_TEST(fork_child_eio)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id;
	int status;
	pid_t pid;

	ck_assert_ptr_nonnull(ch);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		errno = 0;
		if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) != -1)
			_exit(2);
		_exit(errno == EIO ? 0 : 3);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	/* The parent's channel is unharmed. */
	ck_assert_int_eq(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	ck_assert_int_eq(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}
END_TEST

struct waiter {
	struct rdma_event_channel *ch;
	int ret, err;
	struct rdma_cm_event *ev;
};

static void *wait_event(void *arg)
{
	struct waiter *w = arg;

	w->ret = rdma_get_cm_event(w->ch, &w->ev);
	w->err = errno;
	return NULL;
}

/* A GET_EVENT blocked while another thread closes the channel goes on waiting
 * (the kernel's blocked write holds the file); it neither returns nor reads
 * anything. The test's forked process ends it. */
START_TEST(close_wakes_get_event)
{
	struct waiter w = { .ret = 7 };
	struct timespec d = { 0, 300 * 1000 * 1000 };
	pthread_t t;

	struct rdma_event_channel *copy;

	w.ch = rdma_create_event_channel();
	ck_assert_ptr_nonnull(w.ch);
	ck_assert_int_eq(pthread_create(&t, NULL, wait_event, &w), 0);
	nanosleep(&d, NULL); /* let it block; if it has not yet, its write finds the fd closed */
	/* librdmacm's close of the fd, through a copy: the waiter's struct stays valid. */
	copy = malloc(sizeof(*copy));
	ck_assert_ptr_nonnull(copy);
	*copy = *w.ch;
	rdma_destroy_event_channel(copy);
	d.tv_nsec = 500 * 1000 * 1000;
	nanosleep(&d, NULL);
	ck_assert_int_eq(pthread_tryjoin_np(t, NULL), EBUSY);
	ck_assert_int_eq(w.ret, 7);
	ck_assert_ptr_null(w.ev);
}
END_TEST

/* rdma_get_devices lists uroce0 (librdmacm's device list through libibverbs). */
START_TEST(devices)
{
	struct ibv_context **l;
	int n = -1;

	l = rdma_get_devices(&n);
	ck_assert_ptr_nonnull(l);
	ck_assert_int_ge(n, 1);
	ck_assert_str_eq(ibv_get_device_name(l[0]->device), "uroce0");
	rdma_free_devices(l);
}
END_TEST

/* ------------------------------------------------------------ daemon */

static struct rdma_cm_event *next_event(struct rdma_event_channel *ch, enum rdma_cm_event_type want)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	ck_assert_int_eq(poll(&p, 1, 20000), 1);
	ck_assert_int_eq(rdma_get_cm_event(ch, &ev), 0);
	ck_assert_msg(ev->event == want, "event %s, want %s (status %d)", rdma_event_str(ev->event),
		      rdma_event_str(want), ev->status);
	return ev;
}

START_TEST(bind_query)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in sa = addr4("127.0.0.1", 0);
	struct rdma_cm_id *id;
	uint8_t tos = 32;

	ck_assert_ptr_nonnull(ch);
	ck_assert_int_eq(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	ck_assert_int_eq(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof(tos)), 0);
	ck_assert_int_eq(rdma_bind_addr(id, (struct sockaddr *)&sa), 0);
	ck_assert_ptr_nonnull(id->verbs);
	ck_assert_str_eq(ibv_get_device_name(id->verbs->device), "uroce0");
	ck_assert_int_eq(id->port_num, 1);
	ck_assert_int_ne(rdma_get_src_port(id), 0);
	ck_assert_int_eq(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}
END_TEST

START_TEST(connect_in_process)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in sa = addr4("127.0.0.1", 0);
	struct rdma_cm_id *lid, *cid, *sid;
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .retry_count = 7, .rnr_retry_count = 7 };
	struct ibv_qp_init_attr qa = { .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = 1, .max_recv_sge = 1 },
				       .qp_type = IBV_QPT_RC };
	struct rdma_cm_event *ev;

	ck_assert_ptr_nonnull(ch);
	ck_assert_int_eq(rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP), 0);
	ck_assert_int_eq(rdma_bind_addr(lid, (struct sockaddr *)&sa), 0);
	ck_assert_int_eq(rdma_listen(lid, 4), 0);
	sa.sin_port = rdma_get_src_port(lid);
	ck_assert_int_eq(rdma_create_id(ch, &cid, NULL, RDMA_PS_TCP), 0);
	ck_assert_int_eq(rdma_resolve_addr(cid, NULL, (struct sockaddr *)&sa, 5000), 0);
	ev = next_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
	ck_assert_ptr_eq(ev->id, cid);
	rdma_ack_cm_event(ev);
	ck_assert_int_eq(rdma_resolve_route(cid, 5000), 0);
	ev = next_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
	rdma_ack_cm_event(ev);
	ck_assert_int_eq(rdma_create_qp(cid, NULL, &qa), 0);
	ck_assert_int_eq(rdma_connect(cid, &cp), 0);
	ev = next_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	ck_assert_ptr_eq(ev->listen_id, lid);
	sid = ev->id;
	rdma_ack_cm_event(ev);
	ck_assert_int_eq(rdma_create_qp(sid, NULL, &qa), 0);
	ck_assert_int_eq(rdma_accept(sid, &cp), 0);
	for (int i = 0; i < 2; i++) {
		ev = next_event(ch, RDMA_CM_EVENT_ESTABLISHED);
		ck_assert(ev->id == sid || ev->id == cid);
		rdma_ack_cm_event(ev);
	}
	ck_assert_int_eq(rdma_disconnect(cid), 0);
	for (int i = 0; i < 2; i++) {
		ev = next_event(ch, RDMA_CM_EVENT_DISCONNECTED);
		rdma_ack_cm_event(ev);
	}
	rdma_destroy_qp(cid);
	rdma_destroy_qp(sid);
	/* rdma_destroy_id waits for events_reported acks: returns only if the counts agree. */
	ck_assert_int_eq(rdma_destroy_id(sid), 0);
	ck_assert_int_eq(rdma_destroy_id(cid), 0);
	ck_assert_int_eq(rdma_destroy_id(lid), 0);
	rdma_destroy_event_channel(ch);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("provider_ucma");
	TCase *p = tcase_create("provider"), *d = tcase_create("daemon");

	tcase_set_timeout(p, 60);
	tcase_add_test(p, channel_fd);
	tcase_add_test(p, ids_kept);
	tcase_add_test(p, bind_enodev);
	tcase_add_test(p, bind_loopback_any);
	tcase_add_test(p, set_option_kept);
	tcase_add_test(p, kept_id_state_errors);
	tcase_add_test(p, migrate_kept);
	tcase_add_test(p, fork_child_eio);
	tcase_add_test(p, close_wakes_get_event);
	tcase_add_test(p, devices);
	suite_add_tcase(s, p);
	tcase_set_timeout(d, 120);
	tcase_add_test(d, bind_query);
	tcase_add_test(d, connect_in_process);
	suite_add_tcase(s, d);
	return check_main_run(s, CK_NORMAL);
}
