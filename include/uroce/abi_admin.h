/*
 * abi_admin.h - the administration messages (`uroced --admin`, the `uroce`
 * commands status / link / capture / down / fault). Part of the provider <->
 * daemon contract; included by uroce/abi.h (see there for transport,
 * versioning and the opcodes).
 */
#ifndef UROCE_ABI_ADMIN_H
#define UROCE_ABI_ADMIN_H

#include <stdint.h>

/* ADMIN_STATUS: uroce_hdr only. Reply: uroce_hdr + fds [memfd] holding the
 * status text (UTF-8 lines, length = file size; format in docs/daemon.md). */
struct uroce_admin_status_resp {
	struct uroce_hdr hdr;
	uint64_t text_bytes;
};

/* ADMIN_LINK: up = 1 → PORT_ACTIVE + IBV_EVENT_PORT_ACTIVE to every client;
 * up = 0 → PORT_DOWN + IBV_EVENT_PORT_ERR. Other values EINVAL. No event if the
 * state does not change. Reply: uroce_hdr only. */
struct uroce_admin_link_req {
	struct uroce_hdr hdr;
	uint32_t up;
	uint32_t reserved;
};

/* ADMIN_CAPTURE_START: fds [a writable regular file, opened by the admin]; the
 * daemon writes a pcap (libpcap, LINKTYPE_RAW) of every packet the device sends
 * or receives into it. EBUSY if a capture runs, EBADF if the fd is not writable.
 * ADMIN_CAPTURE_STOP: flushes and closes; ENOENT if none runs.
 * ADMIN_SHUTDOWN: the daemon writes IBV_EVENT_DEVICE_FATAL to every client,
 * replies, and exits 0. All three: uroce_hdr only, both directions. */

/* ADMIN_FAULT: set the fault injector of direction dir (0 = tx, 1 = rx,
 * 2 = both) to spec, a NUL-terminated fault spec (docs/fault-injection.md;
 * "none" or "" clears). EINVAL for a bad dir, reserved bytes not 0, no NUL
 * in spec, or a spec that does not parse (the daemon logs why). Counters and
 * held packets are kept. Reply: uroce_hdr only. */
#define UROCE_FAULT_SPEC_BYTES 256
struct uroce_admin_fault_req {
	struct uroce_hdr hdr;
	uint32_t dir;
	uint32_t reserved;
	char spec[UROCE_FAULT_SPEC_BYTES];
};

#endif /* UROCE_ABI_ADMIN_H */
