/*
 * fault.c - seeded packet loss (see fault.h).
 */
#include "config.h"
#include "emu/nic/fault.h"
#include "emu/nic/device.h"

bool fault_lose_packet(struct uroce_dev *d)
{
	uint64_t s = d->loss_state, x;

	if (d->loss_percent <= 0)
		return false;
	if (!s)
		s = d->seed * 0x9E3779B97F4A7C15ull + 1;
	s ^= s >> 12;
	s ^= s << 25;
	s ^= s >> 27;
	d->loss_state = s;
	x = (s * 0x2545F4914F6CDD1Dull) >> 11;
	return (double)x / (double)(1ull << 53) * 100.0 < d->loss_percent;
}
