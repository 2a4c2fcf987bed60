/*
 * mem_wb.h - write-behind of registered-memory writes: the payloads of
 * consecutive packets that land one after the other in a client's memory
 * are copied into one staging buffer and written with ONE pwrite of the
 * client's /proc/self/mem descriptor, instead of one per packet
 * (docs/transport.md "Write-behind"). Only the copy is deferred: every
 * check (key, PD, bounds, access, ODP range) stays in mem_access_qp.
 *
 * Ordering: the pending run is written before anything that announces or
 * could observe it: the engine's mem_sync (a message's last or AckReq
 * packet), a CQE (cq_push), a transmitted ACK, NAK or ATOMIC Acknowledge
 * (port_xmit), a memory read (mem_access_qp READ), an async event, every
 * control request (incl. dereg, destroy, shutdown), client teardown, and
 * as the last thing before the event loop polls (ev_prepare of the lowest
 * priority). docs/transport.md
 * "Write-behind" lists them with the reason for each.
 */
#ifndef UROCE_EMU_MEM_WB_H
#define UROCE_EMU_MEM_WB_H

#include <stdbool.h>
#include <stdint.h>
#include <ev.h>

struct uroce_dev;

/* Largest pending run: 128 KiB, two 64 KiB messages or 32 packets of MTU 4096. */
#define MEM_WB_CAP (128u * 1024u)

/* Counters (uroce status "mem_wb"). */
struct mem_wb_stats {
	uint64_t staged;        /* writes appended to a run */
	uint64_t pwrites;       /* runs written (one pwrite each, resumed if partial) */
	uint64_t bytes;         /* bytes written from runs */
	uint64_t faults;        /* runs whose pwrite failed: data lost (mem_write_faults) */
};

struct mem_wb {
	int fd;                 /* mem descriptor of the pending run; -1: none */
	uint32_t client_id;     /* its owner (for the log line) */
	uint32_t qpn;           /* the QP that wrote it (0: no QP) */
	uint64_t addr;          /* start of the run in the client's address space */
	uint32_t len;           /* bytes pending in buf */
	uint32_t failed_qpn;    /* a QP whose run failed since its last mem_wb_sync */
	bool failed;
	struct mem_wb_stats st;
	uint8_t *buf;           /* MEM_WB_CAP bytes */
	struct uroce_dev *dev;
	ev_prepare prepare;     /* flush before the loop polls */
};

/* Allocate D's write-behind state and start its ev_prepare flush.
 * Returns 0 or ENOMEM. Without it (d->wb NULL) writes are synchronous. */
int mem_wb_init(struct uroce_dev *d);

/* Flush and free (safe when never initialised). */
void mem_wb_fini(struct uroce_dev *d);

/*
 * mem_wb_write - write LEN bytes of BUF at ADDR of the address space behind
 * MEM_FD (a client's /proc/self/mem, client CLIENT_ID) for QP QPN (0: none).
 * Appended to the pending run when it continues it (same fd and QP, ADDR at
 * the run's end, at most MEM_WB_CAP in all); otherwise the pending run is
 * written first. A write of MEM_WB_CAP or more is written at once.
 * Returns 0, or -1 when a write done now (not a deferred one) failed.
 */
int mem_wb_write(struct uroce_dev *d, int mem_fd, uint32_t client_id, uint32_t qpn,
		 uint64_t addr, const void *buf, uint32_t len);

/* Write the pending run of D, if any. A failed pwrite loses the run's data:
 * counted (faults), one log line per run, and remembered for its QP's next
 * mem_wb_sync. Safe with d->wb NULL. */
void mem_wb_flush(struct uroce_dev *d);

/* mem_wb_flush, then: -1 if a run of QP QPN failed since its last
 * mem_wb_sync (consumed), else 0. The body of the engine's mem_sync. */
int mem_wb_sync(struct uroce_dev *d, uint32_t qpn);

/* QPN is being destroyed: forget a failure not yet reported to it. */
void mem_wb_forget_qp(struct uroce_dev *d, uint32_t qpn);

/* Raw copy through a mem descriptor, resumed on partial transfers: 0 or -1
 * (a short transfer of 0 bytes: the mm is gone). */
int mem_copy(int mem_fd, uint64_t addr, void *buf, uint32_t len, bool write);

#endif
