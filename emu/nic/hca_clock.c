/*
 * hca_clock.c - the HCA clock page (see hca_clock.h and the clock section of
 * include/uroce/abi.h for the formulas the provider applies to it).
 */
#include "config.h"
#include "emu/nic/hca_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define NSEC_PER_SEC 1000000000ull
#define CLOCK_SHIFT 32

static uint64_t now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* Seqlock write of a new base taken at raw time RAW / real time REAL. */
static void rebase(struct hca_clock *c, uint64_t raw, uint64_t real, uint64_t cycles)
{
	struct uroce_clock_page *p = c->page;

	__atomic_store_n(&p->seq, p->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	p->base_raw_ns = raw;
	p->base_real_ns = real;
	p->base_cycles = cycles;
	__atomic_store_n(&p->seq, p->seq + 1, __ATOMIC_RELEASE);
}

int hca_clock_init(struct hca_clock *c, uint64_t freq_khz, uint32_t bits)
{
	struct uroce_clock_page *p;
	unsigned __int128 wrap_ns;
	uint64_t period;
	int fd;

	if (freq_khz < HCA_CLOCK_KHZ_MIN || freq_khz > HCA_CLOCK_KHZ_MAX || bits < HCA_CLOCK_BITS_MIN ||
	    bits > HCA_CLOCK_BITS_MAX)
		return EINVAL;
	fd = memfd_create("uroce-hca-clock", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return errno;
	if (ftruncate(fd, UROCE_CLOCK_PAGE_SIZE) < 0)
		goto fail;
	p = mmap(NULL, UROCE_CLOCK_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	/* Clients must neither resize the page nor map it writable (it is
	 * shared by all of them); our own writable mapping already exists. */
	fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
#ifdef F_SEAL_FUTURE_WRITE
	fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE);
#endif
	memset(p, 0, UROCE_CLOCK_PAGE_SIZE);
	p->magic = UROCE_CLOCK_MAGIC;
	p->version = UROCE_ABI_VERSION;
	p->bits = bits;
	p->freq_khz = freq_khz;
	p->mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
	p->shift = CLOCK_SHIFT;
	/* ns -> cycles: freq_khz / 1e6 cycles per ns, as a 32.32 fixed-point factor */
	p->mult = (uint64_t)((((unsigned __int128)freq_khz << CLOCK_SHIFT) + 500000) / 1000000);
	p->ns_shift = CLOCK_SHIFT;
	p->ns_mult = (uint64_t)((((unsigned __int128)1000000 << CLOCK_SHIFT) + freq_khz / 2) / freq_khz);
	/* Re-base at least 4 times per wrap so every live timestamp is within
	 * half a wrap of the base, and at least once a second (NTP). */
	wrap_ns = ((unsigned __int128)p->mask + 1) * 1000000 / freq_khz;
	period = NSEC_PER_SEC;
	if (wrap_ns / 4 < period)
		period = (uint64_t)(wrap_ns / 4);
	p->update_period_ns = period;
	c->fd = fd;
	c->page = p;
	c->freq_khz = freq_khz;
	c->bits = bits;
	c->is_virtual = false;
	rebase(c, now_ns(CLOCK_MONOTONIC_RAW), now_ns(CLOCK_REALTIME), 0);
	return 0;
fail:
	{
		int e = errno;

		close(fd);
		return e;
	}
}

uint64_t hca_clock_now(const struct hca_clock *c)
{
	return uroce_clock_now(c->page);
}

void hca_clock_update(struct hca_clock *c)
{
	struct uroce_clock_snap s;
	uint64_t raw, real;

	if (c->is_virtual)
		return;
	uroce_clock_snapshot(c->page, &s);
	raw = now_ns(CLOCK_MONOTONIC_RAW);
	real = now_ns(CLOCK_REALTIME);
	rebase(c, raw, real, uroce_clock_cycles_at(&s, raw));
}

void hca_clock_set_virtual(struct hca_clock *c, uint64_t now_ns)
{
	struct uroce_clock_page *p = c->page;
	uint64_t cycles = (uint64_t)(((unsigned __int128)now_ns * c->freq_khz) / 1000000) & p->mask;

	if (!c->is_virtual) {
		c->is_virtual = true;
		__atomic_store_n(&p->seq, p->seq + 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		p->mult = 0; /* the counter stands still between updates */
		p->update_period_ns = 0;
		__atomic_store_n(&p->seq, p->seq + 1, __ATOMIC_RELEASE);
	}
	rebase(c, 0, now_ns, cycles);
}

void hca_clock_fini(struct hca_clock *c)
{
	if (c->page)
		munmap(c->page, UROCE_CLOCK_PAGE_SIZE);
	if (c->fd >= 0)
		close(c->fd);
	c->page = NULL;
	c->fd = -1;
}
