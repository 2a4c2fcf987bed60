/*
 * fault.c - the fault injector's decisions (see fault.h).
 */
#include "config.h"
#include "emu/nic/fault.h"

#include <string.h>

/* BTH byte 4 (FECN, BECN, resv6): masked out of the ICRC. */
#define BTH_VARIANT_BYTE 4

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

/* xorshift64*: 64 random bits. */
static uint64_t next64(struct fault_dir *f)
{
	uint64_t s = f->rng;

	s ^= s >> 12;
	s ^= s << 25;
	s ^= s >> 27;
	f->rng = s;
	return s * 0x2545F4914F6CDD1Dull;
}

/* True with probability PPM / 10^6; draws only when 0 < PPM < 10^6. */
static bool chance(struct fault_dir *f, uint32_t ppm)
{
	if (ppm == 0)
		return false;
	if (ppm >= FAULT_PPM)
		return true;
	return (next64(f) >> 32) % FAULT_PPM < ppm;
}

/* Uniform in 0..n-1 (n > 0). */
static uint64_t below(struct fault_dir *f, uint64_t n)
{
	return next64(f) % n;
}

void fault_dir_init(struct fault_dir *f, uint64_t seed, enum fault_dir_id dir)
{
	memset(f, 0, sizeof(*f));
	f->rng = splitmix64(seed ^ ((uint64_t)dir << 56)) | 1;
	f->cfg.queue_cap = FAULT_QUEUE_CAP;
}

void fault_dir_set(struct fault_dir *f, const struct fault_cfg *cfg)
{
	f->cfg = *cfg;
	if (!f->cfg.queue_cap)
		f->cfg.queue_cap = FAULT_QUEUE_CAP;
	f->ge_bad = false;
	f->rate_free_ns = 0;
}

bool fault_cfg_active(const struct fault_cfg *c)
{
	return c->loss || c->dup || c->corrupt || c->reorder || c->delay_ns || c->jitter_ns ||
	       c->rate_pps || c->rate_Bps || c->ge_on;
}

/* Gilbert-Elliott: move the state, then lose the packet with its state's rate. */
static bool burst_lose(struct fault_dir *f)
{
	const struct fault_cfg *c = &f->cfg;

	if (!c->ge_on)
		return false;
	if (f->ge_bad ? chance(f, c->ge_r) : chance(f, c->ge_p))
		f->ge_bad = !f->ge_bad;
	return chance(f, f->ge_bad ? c->ge_loss_bad : c->ge_loss_good);
}

/* Shaper: the time the packet leaves the link; 0 when its buffer is full. */
static uint64_t shape(struct fault_dir *f, size_t len, uint64_t now)
{
	const struct fault_cfg *c = &f->cfg;
	uint64_t start = f->rate_free_ns > now ? f->rate_free_ns : now, cost = 0;

	if (!c->rate_pps && !c->rate_Bps)
		return now;
	if (start - now > FAULT_RATE_MAX_WAIT_NS)
		return 0;
	if (c->rate_pps)
		cost = 1000000000ull / c->rate_pps;
	if (c->rate_Bps && (uint64_t)len * 1000000000ull / c->rate_Bps > cost)
		cost = (uint64_t)len * 1000000000ull / c->rate_Bps;
	f->rate_free_ns = start + cost;
	return start;
}

void fault_decide(struct fault_dir *f, size_t len, uint64_t now, uint32_t held,
		  struct fault_verdict *v)
{
	const struct fault_cfg *c = &f->cfg;
	uint64_t t;

	v->drop = false;
	v->copies = 1;
	v->flip_bit = -1;
	v->release_ns = now;
	f->st.packets++;
	if (burst_lose(f)) {
		f->st.burst_lost++;
		goto drop;
	}
	if (chance(f, c->loss)) {
		f->st.lost++;
		goto drop;
	}
	if (chance(f, c->corrupt) && len > BTH_VARIANT_BYTE + 1) {
		/* any bit of the payload except the 8 of the variant byte */
		uint64_t bit = below(f, (uint64_t)(len - 1) * 8);

		if (bit >= BTH_VARIANT_BYTE * 8)
			bit += 8;
		v->flip_bit = (int64_t)bit;
		f->st.corrupted++;
	}
	if (chance(f, c->dup)) {
		v->copies = 2;
		f->st.duplicated++;
	}
	t = shape(f, len, now);
	if (!t) {
		f->st.rate_dropped++;
		goto drop;
	}
	if (t > now)
		f->st.rate_delayed++;
	if (c->delay_ns || c->jitter_ns) {
		t += c->delay_ns + (c->jitter_ns ? below(f, c->jitter_ns + 1) : 0);
		f->st.delayed++;
	}
	if (c->reorder_max_ns && chance(f, c->reorder)) {
		t += 1 + below(f, c->reorder_max_ns);
		f->st.reordered++;
	}
	if (t > now && held >= c->queue_cap) {
		f->st.queue_dropped++;
		goto drop;
	}
	v->release_ns = t;
	return;
drop:
	v->drop = true;
	v->copies = 0;
}
