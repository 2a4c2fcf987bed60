/*
 * fault_units.c - unit tests of the fault injector (emu/nic/fault.c,
 * fault_spec.c): the same seed gives the same decisions (exact counts per
 * seed pinned), rates within binomial bounds, Gilbert-Elliott burst lengths,
 * the rate shaper's and delay's exact release times, the queue cap, the
 * spec text both ways, and that every corruption is caught by the ICRC
 * check of the receiving side (netstack/icrc.c), IPv6 and IPv4.
 */
#include "config.h"
#include "emu/nic/fault.h"
#include "emu/nic/fault_spec.h"
#include "netstack/icrc.h"
#include "netstack/packet.h"

#include "check_main.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N 100000u
#define NOW 1000000000ull

static struct fault_cfg spec(const char *s)
{
	struct fault_cfg c;
	char err[512];

	ck_assert_msg(fault_spec_parse(s, &c, err, sizeof(err)) == 0, "%s: %s", s, err);
	return c;
}

/* |got - n p| <= 5 sd of Binomial(n, p). */
static void binomial_ok(const char *what, uint64_t got, uint64_t n, double p)
{
	double mu = (double)n * p, sd = sqrt((double)n * p * (1 - p));

	ck_assert_msg(fabs((double)got - mu) <= 5 * sd, "%s: %llu, mean %.1f, 5 sd %.1f", what,
		      (unsigned long long)got, mu, 5 * sd);
}

static void run(struct fault_dir *f, uint64_t seed, enum fault_dir_id dir, const char *s, uint32_t n,
		struct fault_verdict *out)
{
	struct fault_cfg c = spec(s);
	struct fault_verdict v;

	fault_dir_init(f, seed, dir);
	fault_dir_set(f, &c);
	for (uint32_t i = 0; i < n; i++) {
		fault_decide(f, 1024, NOW, 0, out ? &out[i] : &v);
	}
}

#define MIX "loss=10% dup=5% reorder=10%:2ms corrupt=1%"

START_TEST(same_seed_same_decisions)
{
	struct fault_verdict *a = calloc(N, sizeof(*a)), *b = calloc(N, sizeof(*b)), *c = calloc(N, sizeof(*c));
	struct fault_dir fa, fb, fc;

	run(&fa, 42, FAULT_TX, MIX, N, a);
	run(&fb, 42, FAULT_TX, MIX, N, b);
	run(&fc, 43, FAULT_TX, MIX, N, c);
	ck_assert_int_eq(memcmp(a, b, N * sizeof(*a)), 0);
	ck_assert_int_ne(memcmp(a, c, N * sizeof(*a)), 0);
	ck_assert_int_eq(memcmp(&fa.st, &fb.st, sizeof(fa.st)), 0);
	/* the exact counts of seed 42 (pins the generator and the draw order) */
	ck_assert_uint_eq(fa.st.packets, N);
	ck_assert_uint_eq(fa.st.lost, 10061);
	ck_assert_uint_eq(fa.st.duplicated, 4483);
	ck_assert_uint_eq(fa.st.reordered, 9068);
	ck_assert_uint_eq(fa.st.corrupted, 882);
	ck_assert_uint_eq(fa.st.burst_lost + fa.st.delayed + fa.st.rate_delayed + fa.st.queue_dropped, 0);
	free(a);
	free(b);
	free(c);
}
END_TEST

START_TEST(rates_binomial)
{
	struct fault_dir f;
	uint64_t seeds[] = { 1, 7, 8, 1234567 };

	for (unsigned i = 0; i < 4; i++) {
		run(&f, seeds[i], FAULT_RX, MIX, N, NULL);
		binomial_ok("lost", f.st.lost, N, 0.10);
		/* the later decisions apply to the packets not lost */
		binomial_ok("corrupted", f.st.corrupted, N - f.st.lost, 0.01);
		binomial_ok("duplicated", f.st.duplicated, N - f.st.lost, 0.05);
		binomial_ok("reordered", f.st.reordered, N - f.st.lost, 0.10);
	}
	/* tx and rx of one seed are different streams */
	{
		struct fault_verdict *t = calloc(1000, sizeof(*t)), *r = calloc(1000, sizeof(*r));
		struct fault_dir ft, fr;

		run(&ft, 9, FAULT_TX, MIX, 1000, t);
		run(&fr, 9, FAULT_RX, MIX, 1000, r);
		ck_assert_int_ne(memcmp(t, r, 1000 * sizeof(*t)), 0);
		free(t);
		free(r);
	}
	run(&f, 5, FAULT_TX, "loss=0%", 1000, NULL);
	ck_assert_uint_eq(f.st.lost, 0);
	run(&f, 5, FAULT_TX, "loss=100%", 1000, NULL);
	ck_assert_uint_eq(f.st.lost, 1000);
}
END_TEST

START_TEST(burst_gilbert_elliott)
{
	/* p 1%, r 20%, all lost in bad, none in good: stationary loss
	 * p / (p + r) = 4.76%, bursts of mean length 1 / r = 5 */
	struct fault_verdict *v = calloc(400000, sizeof(*v));
	struct fault_dir f;
	uint64_t bursts = 0, lost = 0;

	run(&f, 3, FAULT_TX, "burst=1%:20%", 400000, v);
	for (uint32_t i = 0; i < 400000; i++) {
		lost += v[i].drop;
		bursts += v[i].drop && (i == 0 || !v[i - 1].drop);
	}
	ck_assert_uint_eq(lost, f.st.burst_lost);
	ck_assert_msg(lost > 400000 * 0.040 && lost < 400000 * 0.056, "burst loss %llu of 400000",
		      (unsigned long long)lost);
	ck_assert_msg((double)lost / (double)bursts > 4.5 && (double)lost / (double)bursts < 5.5,
		      "mean burst %.2f", (double)lost / (double)bursts);
	free(v);
}
END_TEST

START_TEST(shaper_delay_reorder_times)
{
	struct fault_cfg c = spec("rate=1000pps");
	struct fault_verdict v;
	struct fault_dir f;
	uint32_t i;

	fault_dir_init(&f, 1, FAULT_TX);
	fault_dir_set(&f, &c);
	/* 1 ms per packet; at most 100 ms of backlog, then dropped */
	for (i = 0; i <= 100; i++) {
		fault_decide(&f, 100, NOW, 0, &v);
		ck_assert(!v.drop);
		ck_assert_uint_eq(v.release_ns, NOW + i * 1000000ull);
	}
	fault_decide(&f, 100, NOW, 0, &v);
	ck_assert(v.drop);
	ck_assert_uint_eq(f.st.rate_dropped, 1);
	ck_assert_uint_eq(f.st.rate_delayed, 100);
	/* bytes: 1000-byte packets at 1 MB/s leave 1 ms apart */
	c = spec("rate=1MBps");
	fault_dir_set(&f, &c);
	fault_decide(&f, 1000, NOW, 0, &v);
	fault_decide(&f, 1000, NOW, 0, &v);
	ck_assert_uint_eq(v.release_ns, NOW + 1000000);
	c = spec("delay=1ms");
	fault_dir_set(&f, &c);
	fault_decide(&f, 64, NOW, 0, &v);
	ck_assert_uint_eq(v.release_ns, NOW + 1000000);
	c = spec("delay=1ms:500us reorder=100%:2ms");
	fault_dir_set(&f, &c);
	for (i = 0; i < 10000; i++) {
		fault_decide(&f, 64, NOW, 0, &v);
		ck_assert(v.release_ns > NOW + 1000000 && v.release_ns <= NOW + 3500000);
	}
	/* the cap: a packet that would be held beyond queue=4 is dropped */
	c = spec("delay=1ms queue=4");
	fault_dir_set(&f, &c);
	fault_decide(&f, 64, NOW, 3, &v);
	ck_assert(!v.drop);
	fault_decide(&f, 64, NOW, 4, &v);
	ck_assert(v.drop);
	ck_assert_uint_eq(f.st.queue_dropped, 1);
}
END_TEST

START_TEST(spec_text)
{
	static const char *const good[] = {
		"loss=5% dup=5% reorder=10%:2ms corrupt=1%",
		"loss=0.0001%",
		"delay=1ms:500us",
		"rate=1000pps",
		"rate=12500000Bps",
		"burst=1%:20%:90%:0.5%",
		"loss=12.5% queue=16",
	};
	static const char *const bad[] = {
		"loss=101%", "loss=5%%", "loss=0.00001%", "reorder=10%", "reorder=10%:0ms", "delay=5",
		"delay=11s", "rate=10", "rate=0pps", "burst=1%", "queue=0", "jitter=1ms", "loss", "loss=-1",
	};
	struct fault_cfg c, d;
	char buf[FAULT_SPEC_MAX + 64], err[512];

	for (unsigned i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		c = spec(good[i]);
		fault_spec_format(&c, buf, sizeof(buf));
		d = spec(buf);
		ck_assert_msg(!memcmp(&c, &d, sizeof(c)), "%s -> %s", good[i], buf);
	}
	c = spec("loss=10%,dup=5% reorder=10%:2ms  corrupt=1%");
	ck_assert_str_eq(fault_spec_format(&c, buf, sizeof(buf)), MIX);
	ck_assert_uint_eq(c.loss, 100000);
	ck_assert_uint_eq(c.reorder_max_ns, 2000000);
	ck_assert_str_eq(fault_spec_format(&(struct fault_cfg){ 0 }, buf, sizeof(buf)), "none");
	c = spec("none");
	ck_assert(!fault_cfg_active(&c));
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(fault_spec_parse(bad[i], &c, err, sizeof(err)) == EINVAL, "%s accepted", bad[i]);
		ck_assert_msg(strstr(err, bad[i]) != NULL, "message names '%s': %s", bad[i], err);
	}
}
END_TEST

/* A RoCEv2 UDP payload: BTH (RC SEND ONLY) + LEN - 16 payload bytes + ICRC. */
static void make_packet(uint8_t *p, size_t len, const struct roce_l3 *l3)
{
	uint32_t crc;

	memset(p, 0, len);
	p[0] = 0x04;
	p[2] = 0xff;
	p[3] = 0xff;
	p[7] = 0x11;
	for (size_t k = 12; k < len - 4; k++)
		p[k] = (uint8_t)(k * 29 + 3);
	ck_assert_int_eq(roce_icrc_udp(p, len, l3, &crc), 0);
	roce_icrc_put(p + len - 4, crc);
	ck_assert_int_eq(roce_icrc_udp_check(p, len, l3, NULL, NULL), ROCE_OK);
}

START_TEST(corruption_caught_by_icrc)
{
	static const size_t lens[] = { 16, 64, 1040, 1056 };
	struct roce_l3 l3 = { .kind = ROCE_L3_IPV6, .sport = 49152, .dport = 4791 };
	struct fault_cfg c = spec("corrupt=100%");
	uint8_t pkt[1056], bad[1056];
	struct fault_verdict v;
	struct fault_dir f;

	l3.src[15] = 1;
	l3.dst[15] = 2;
	fault_dir_init(&f, 77, FAULT_TX);
	fault_dir_set(&f, &c);
	for (unsigned li = 0; li < 4; li++) {
		size_t len = lens[li];
		bool first = false, last = false;

		make_packet(pkt, len, &l3);
		for (int i = 0; i < 20000; i++) {
			fault_decide(&f, len, NOW, 0, &v);
			ck_assert(v.flip_bit >= 0 && (uint64_t)v.flip_bit < len * 8);
			ck_assert_msg(v.flip_bit / 8 != 4, "BTH byte 4 is not covered by the ICRC");
			memcpy(bad, pkt, len);
			bad[v.flip_bit / 8] ^= (uint8_t)(0x80u >> (v.flip_bit % 8));
			ck_assert_int_eq(roce_icrc_udp_check(bad, len, &l3, NULL, NULL), ROCE_E_ICRC);
			first |= v.flip_bit < 8;
			last |= (uint64_t)v.flip_bit >= (len - 1) * 8;
		}
		ck_assert(first && last);
	}
	ck_assert_uint_eq(f.st.corrupted, 80000);
	/* IPv4: the receiver recovers the IP ID from the ICRC (icrc.h), so a
	 * damaged packet could pass as one with another ID; no single flipped
	 * bit the injector can choose does, at these lengths */
	l3.kind = ROCE_L3_IPV4;
	memset(l3.src, 0, 16);
	l3.src[10] = l3.src[11] = 0xff;
	l3.src[12] = 127;
	memcpy(l3.dst, l3.src, 16);
	l3.src[15] = 1;
	l3.dst[15] = 2;
	for (unsigned li = 0; li < 4; li++) {
		size_t len = lens[li];

		make_packet(pkt, len, &l3);
		for (size_t bit = 0; bit < len * 8; bit++) {
			if (bit / 8 == 4)
				continue;
			memcpy(bad, pkt, len);
			bad[bit / 8] ^= (uint8_t)(0x80u >> (bit % 8));
			ck_assert_msg(roce_icrc_udp_check(bad, len, &l3, NULL, NULL) == ROCE_E_ICRC,
				      "IPv4, %zu bytes, bit %zu flipped: not caught", len, bit);
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fault");
	TCase *tc = tcase_create("fault");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, same_seed_same_decisions);
	tcase_add_test(tc, rates_binomial);
	tcase_add_test(tc, burst_gilbert_elliott);
	tcase_add_test(tc, shaper_delay_reorder_times);
	tcase_add_test(tc, spec_text);
	tcase_add_test(tc, corruption_caught_by_icrc);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
