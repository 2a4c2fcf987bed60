/*
 * daemon_loopback.c - unit tests of emu/nic/loopback.c, the device's
 * internal loopback, on a real UDP socket bound to 127.0.0.1 (a free port)
 * and a real libev loop, with exact counts and orders:
 * - 700 datagrams to self: the first 512 (LOOPBACK_SLOTS) are held, the
 *   other 188 spill and go through the socket (udp_port_queue); settling
 *   delivers all 700 in the order sent, the held ones from their own source
 *   port, the spilled ones from the socket's; once the socket is empty the
 *   ring takes datagrams again;
 * - a delivery that sends to self: the new datagram waits for the next
 *   drain, behind those held before it; rx_done runs after every 32 and
 *   after the last (ACK coalescing sees batches as from recvmmsg); MAX
 *   bounds a drain;
 * - two QPs answering each other forever cannot keep udp_port_settle: it
 *   returns after UDP_PORT_SELF_ROUNDS drains with the answer held and the
 *   idle watcher active, so the loop polls without sleeping and the next
 *   turn goes on; the idle watcher stops once nothing is held;
 * - a delivery in a settle's last round that sends 600 datagrams (a READ
 *   request's responses): 511 held, 89 spilled, and the read after the
 *   poll delivers the held ones before the spilled ones (all 600 in order);
 * - the rx callback is told verified exactly for the datagrams taken as
 *   verified;
 * - refusals: EMSGSIZE above UDP_PORT_TX_MAX, EPERM when off.
 */
#include "config.h"
#include "emu/nic/loopback.h"
#include "emu/nic/udp_port.h"

#include "check_main.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

#define MAXSEEN 8192

static struct ev_loop *loop;
static struct udp_port u;
static uint32_t seen[MAXSEEN];       /* sequence numbers in delivery order */
static uint16_t seen_port[MAXSEEN];  /* their source ports */
static bool seen_verified[MAXSEEN];
static unsigned int nseen, ndone, nseen_at_done[MAXSEEN];
static unsigned int answer_below;    /* a delivery of seq < this sends seq + 1000 */
static bool answer_forever;          /* every delivery sends seq + 1 */
static unsigned int chain_below;     /* a delivery of seq < this sends seq + 1 */
static uint32_t burst_at;            /* its delivery sends burst_n datagrams 2000.. */
static unsigned int burst_n;

static void put_seq(uint8_t *p, uint32_t seq)
{
	memset(p, 0, 64);
	memcpy(p, &seq, sizeof(seq));
}

static void send_self(uint32_t seq, uint16_t sport, bool verified)
{
	uint8_t p[64];

	put_seq(p, seq);
	if (loopback_take(&u, p, sizeof(p), sport, verified) == ENOBUFS)
		ck_assert_int_eq(udp_port_queue(&u, u.fd, p, sizeof(p), (const struct sockaddr *)&u.self,
						u.self_len, 0, false), 0);
}

static void rx(void *ctx, const uint8_t *buf, size_t len, const struct sockaddr_storage *from,
	       bool verified)
{
	uint32_t seq;

	(void)ctx;
	ck_assert_uint_eq(len, 64);
	ck_assert_int_eq(from->ss_family, AF_INET);
	memcpy(&seq, buf, sizeof(seq));
	ck_assert_uint_lt(nseen, MAXSEEN);
	seen[nseen] = seq;
	seen_port[nseen] = ntohs(((const struct sockaddr_in *)from)->sin_port);
	seen_verified[nseen] = verified;
	nseen++;
	if (seq < answer_below)
		send_self(seq + 1000, 3000, false);
	if (answer_forever)
		send_self(seq + 1, 3000, true);
	if (seq < chain_below)
		send_self(seq + 1, 3000, true);
	if (seq == burst_at)
		for (seq = 0; seq < burst_n; seq++)
			send_self(2000 + seq, 3000, true);
}

static void rx_done(void *ctx)
{
	(void)ctx;
	ck_assert_uint_lt(ndone, MAXSEEN);
	nseen_at_done[ndone++] = nseen;
}

static void setup(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	loop = ev_loop_new(EVFLAG_AUTO);
	ck_assert_ptr_nonnull(loop);
	memset(&u, 0, sizeof(u));
	ck_assert_int_eq(udp_port_open(&u, loop, (const struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(u.self.ss_family, AF_INET);
	ck_assert(!u.lb.off);
	u.rx = rx;
	u.rx_done = rx_done;
	nseen = ndone = answer_below = 0;
	answer_forever = false;
	chain_below = burst_n = 0;
	burst_at = UINT32_MAX;
}

static void teardown(void)
{
	udp_port_close(&u, loop);
	ev_loop_destroy(loop);
}

static uint16_t own_port(void)
{
	return ntohs(((const struct sockaddr_in *)&u.self)->sin_port);
}

START_TEST(spill_keeps_order)
{
	unsigned int i, turns;

	for (i = 0; i < 700; i++)
		send_self(i, (uint16_t)(49152 + i % 3), false);
	ck_assert_uint_eq(u.lb.n, LOOPBACK_SLOTS);
	ck_assert_uint_eq(u.lb.spilled, 700 - LOOPBACK_SLOTS);
	ck_assert(u.lb.spill);
	/* the loop's prepare watcher would settle; a read after the poll
	 * (udp_readable) may take what settle left in the socket */
	for (turns = 0; nseen < 700 && turns < 10; turns++)
		udp_port_settle(&u);
	ck_assert_uint_eq(nseen, 700);
	for (i = 0; i < 700; i++) {
		ck_assert_uint_eq(seen[i], i);
		ck_assert_uint_eq(seen_port[i], i < LOOPBACK_SLOTS ? 49152 + i % 3 : own_port());
	}
	ck_assert_uint_eq(u.lb.packets, LOOPBACK_SLOTS);
	ck_assert_uint_eq(u.rx_packets, 700);
	ck_assert_uint_eq(u.tx_packets, 700);
	ck_assert_uint_eq(u.lb.n, 0);
	/* the socket was read empty: the ring is open again */
	ck_assert(!u.lb.spill);
	send_self(900, 49152, false);
	ck_assert_uint_eq(u.lb.n, 1);
	ck_assert_uint_eq(u.lb.spilled, 700 - LOOPBACK_SLOTS);
}
END_TEST

START_TEST(answers_wait_for_next_drain)
{
	unsigned int i;

	answer_below = 40;
	for (i = 0; i < 40; i++)
		send_self(i, 50000, false);
	ck_assert_uint_eq(loopback_drain(&u, UDP_PORT_RX_BATCH), 40);
	ck_assert_uint_eq(nseen, 40);
	ck_assert_uint_eq(u.lb.n, 40);
	/* batches of 32: after 32 and after the last (40) */
	ck_assert_uint_eq(ndone, 2);
	ck_assert_uint_eq(nseen_at_done[0], 32);
	ck_assert_uint_eq(nseen_at_done[1], 40);
	ck_assert_uint_eq(loopback_drain(&u, UDP_PORT_RX_BATCH), 40);
	ck_assert_uint_eq(nseen, 80);
	for (i = 0; i < 40; i++) {
		ck_assert_uint_eq(seen[i], i);
		ck_assert_uint_eq(seen_port[i], 50000);
		ck_assert_uint_eq(seen[40 + i], 1000 + i);
		ck_assert_uint_eq(seen_port[40 + i], 3000);
	}
	ck_assert_uint_eq(ndone, 4);
	ck_assert_uint_eq(u.lb.spilled, 0);
	/* MAX bounds a drain */
	answer_below = 0;
	send_self(7, 50000, false);
	send_self(8, 50000, false);
	ck_assert_uint_eq(loopback_drain(&u, 1), 1);
	ck_assert_uint_eq(u.lb.n, 1);
}
END_TEST

START_TEST(endless_answers_are_bounded)
{
	unsigned int i;

	answer_forever = true;
	send_self(0, 50000, true);
	udp_port_settle(&u);
	/* each round delivers the one datagram held, whose answer waits for
	 * the next round: the settle stops after UDP_PORT_SELF_ROUNDS */
	ck_assert_uint_eq(nseen, UDP_PORT_SELF_ROUNDS);
	ck_assert_uint_eq(u.lb.n, 1);
	ck_assert(ev_is_active(&u.lb_idle));
	/* the loop turns without sleeping and the next settle goes on */
	ev_run(loop, EVRUN_ONCE);
	ck_assert_uint_eq(nseen, 2 * UDP_PORT_SELF_ROUNDS);
	answer_forever = false;
	udp_port_settle(&u);
	ck_assert_uint_eq(u.lb.n, 0);
	ck_assert_uint_eq(nseen, 2 * UDP_PORT_SELF_ROUNDS + 1);
	for (i = 0; i < nseen; i++)
		ck_assert_uint_eq(seen[i], i);
	/* with nothing held the idle watcher stops, so the loop may sleep */
	ev_run(loop, EVRUN_NOWAIT);
	ck_assert(!ev_is_active(&u.lb_idle));
}
END_TEST

/* A READ request delivered in the last round of a settle answered by more
 * responses than the ring has free: the first ones are held, the rest spill
 * into the socket, and the settle ends with both. The read after the poll
 * (udp_readable) must not deliver the spilled ones before the held ones. */
START_TEST(spill_after_last_round_keeps_order)
{
	unsigned int i, turns;

	chain_below = UDP_PORT_SELF_ROUNDS - 1;
	burst_at = UDP_PORT_SELF_ROUNDS - 1;
	burst_n = 600;
	send_self(0, 50000, true);
	/* the loop's prepare watcher settles, then the loop polls and finds
	 * the socket readable */
	for (turns = 0; nseen < UDP_PORT_SELF_ROUNDS + 600 && turns < 10; turns++)
		ev_run(loop, EVRUN_NOWAIT);
	ck_assert_uint_eq(nseen, UDP_PORT_SELF_ROUNDS + 600);
	for (i = 0; i < UDP_PORT_SELF_ROUNDS; i++)
		ck_assert_uint_eq(seen[i], i);
	for (i = 0; i < 600; i++)
		ck_assert_uint_eq(seen[UDP_PORT_SELF_ROUNDS + i], 2000 + i);
	ck_assert_uint_eq(u.rx_packets, UDP_PORT_SELF_ROUNDS + 600);
	/* the slot of the request was still taken: 511 held, 89 spilled */
	ck_assert_uint_eq(u.lb.spilled, 600 - (LOOPBACK_SLOTS - 1));
	ck_assert_uint_eq(u.lb.packets, UDP_PORT_SELF_ROUNDS + LOOPBACK_SLOTS - 1);
	ck_assert_uint_eq(u.lb.n, 0);
	ck_assert(!u.lb.spill);
}
END_TEST

START_TEST(verified_per_datagram)
{
	send_self(1, 50000, true);
	send_self(2, 50000, false);
	send_self(3, 50000, true);
	ck_assert_uint_eq(loopback_drain(&u, 10), 3);
	ck_assert(seen_verified[0]);
	ck_assert(!seen_verified[1]);
	ck_assert(seen_verified[2]);
}
END_TEST

START_TEST(refusals)
{
	static uint8_t big[UDP_PORT_TX_MAX + 1];

	ck_assert_int_eq(loopback_take(&u, big, sizeof(big), 50000, true), EMSGSIZE);
	ck_assert_int_eq(loopback_take(&u, big, UDP_PORT_TX_MAX, 50000, true), 0);
	u.lb.off = true;
	ck_assert_int_eq(loopback_take(&u, big, 64, 50000, true), EPERM);
	ck_assert_uint_eq(u.lb.n, 1);
	ck_assert_uint_eq(u.lb.spilled, 0);
	ck_assert_uint_eq(u.tx_packets, 1);
	ck_assert_uint_eq(u.tx_bytes, UDP_PORT_TX_MAX);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("loopback");
	TCase *tc = tcase_create("internal_loopback");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, spill_keeps_order);
	tcase_add_test(tc, answers_wait_for_next_drain);
	tcase_add_test(tc, endless_answers_are_bounded);
	tcase_add_test(tc, spill_after_last_round_keeps_order);
	tcase_add_test(tc, verified_per_datagram);
	tcase_add_test(tc, refusals);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
