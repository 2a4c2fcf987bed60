/*
 * capture.c - the device's packet capture (see capture.h).
 */
#include "config.h"
#include "emu/nic/capture.h"
#include "emu/nic/capture_stream.h"
#include "emu/nic/device.h"
#include "emu/nic/nic_time.h"
#include "netstack/packet.h"
#include "netstack/pcap_writer.h"

#include <time.h>

void capture_packet(struct uroce_dev *d, const struct roce_l3 *l3, const void *pkt, size_t len)
{
	uint8_t frame[4224 + 64];
	size_t n;

	if (!d->capture)
		return;
	if (roce_wrap_ip(frame, sizeof(frame), l3, pkt, len, &n) != 0)
		return;
	/* a pipe's reader may lag: drop a whole record rather than block */
	if (d->capture_stream && !capture_stream_room(d->capture_stream, 16 + n))
		return;
	if (d->vt.on) {
		/* deterministic mode: virtual time, so that replays compare equal */
		uint64_t now = nic_now_ns(d);
		struct timespec ts = { .tv_sec = (time_t)(now / 1000000000u), .tv_nsec = (long)(now % 1000000000u) };

		pcapw_write(d->capture, frame, n, &ts);
	} else {
		pcapw_write(d->capture, frame, n, NULL);
	}
}
