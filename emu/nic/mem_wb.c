/*
 * mem_wb.c - write-behind of registered-memory writes (see mem_wb.h): one
 * staging buffer per device, one pwrite per run of contiguous payloads.
 * A staging copy rather than a pwritev of the packet buffers: those may be
 * reused (receive batch) or freed (fault injector's delay queue) before the
 * run is written, and one pwrite is one kernel mem_rw call (one bounce page).
 */
#include "config.h"
#include "emu/nic/mem_wb.h"
#include "emu/log.h"
#include "emu/nic/device.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int mem_copy(int mem_fd, uint64_t addr, void *buf, uint32_t len, bool write)
{
	uint32_t done = 0;

	if (mem_fd < 0 || addr > (uint64_t)INT64_MAX - len)
		return -1;
	while (done < len) {
		ssize_t n = write ? pwrite(mem_fd, (const char *)buf + done, len - done, (off_t)(addr + done))
				  : pread(mem_fd, (char *)buf + done, len - done, (off_t)(addr + done));

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return -1;
		}
		done += (uint32_t)n;
	}
	return 0;
}

static void wb_prepare_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct mem_wb *wb = w->data;

	(void)loop;
	(void)revents;
	mem_wb_flush(wb->dev);
}

int mem_wb_init(struct uroce_dev *d)
{
	struct mem_wb *wb = calloc(1, sizeof(*wb));

	if (!wb || !(wb->buf = malloc(MEM_WB_CAP))) {
		free(wb);
		return ENOMEM;
	}
	wb->fd = -1;
	wb->dev = d;
	ev_prepare_init(&wb->prepare, wb_prepare_cb);
	/* lowest priority: after every other prepare watcher of the turn, so
	 * also after the datagrams the transmit flush reads back
	 * (udp_port_settle) and the doorbell watchers have staged writes */
	ev_set_priority(&wb->prepare, EV_MINPRI);
	wb->prepare.data = wb;
	if (d->loop)
		ev_prepare_start(d->loop, &wb->prepare);
	d->wb = wb;
	return 0;
}

void mem_wb_fini(struct uroce_dev *d)
{
	struct mem_wb *wb = d->wb;

	if (!wb)
		return;
	mem_wb_flush(d);
	if (d->loop)
		ev_prepare_stop(d->loop, &wb->prepare);
	d->wb = NULL;
	free(wb->buf);
	free(wb);
}

void mem_wb_flush(struct uroce_dev *d)
{
	struct mem_wb *wb = d->wb;

	if (!wb || wb->fd < 0)
		return;
	wb->st.pwrites++;
	errno = 0;
	if (mem_copy(wb->fd, wb->addr, wb->buf, wb->len, true)) {
		/* A NIC would have written into the MR's pinned pages; here the
		 * mapping is gone (munmap under a non-ODP MR) or the process is
		 * (its teardown follows). The data is lost; the QP learns it
		 * at its next mem_wb_sync. */
		wb->st.faults++;
		wb->failed = true;
		wb->failed_qpn = wb->qpn;
		ulog_limited(ULOG_LIMIT_MEM_WB, ULOG_WARN,
			     "client#%u qpn 0x%x: deferred write of %u bytes at 0x%llx failed (memory unmapped or process gone): %s",
			     wb->client_id, wb->qpn, wb->len, (unsigned long long)wb->addr,
			     errno ? strerror(errno) : "address space gone");
	} else {
		wb->st.bytes += wb->len;
	}
	wb->fd = -1;
	wb->len = 0;
}

int mem_wb_sync(struct uroce_dev *d, uint32_t qpn)
{
	struct mem_wb *wb = d->wb;

	if (!wb)
		return 0;
	mem_wb_flush(d);
	if (wb->failed && wb->failed_qpn == qpn) {
		wb->failed = false;
		return -1;
	}
	return 0;
}

void mem_wb_forget_qp(struct uroce_dev *d, uint32_t qpn)
{
	/* the same flush and consumption; nobody is left to tell */
	(void)mem_wb_sync(d, qpn);
}

int mem_wb_write(struct uroce_dev *d, int mem_fd, uint32_t client_id, uint32_t qpn,
		 uint64_t addr, const void *buf, uint32_t len)
{
	struct mem_wb *wb = d->wb;

	if (!wb || mem_fd < 0)
		return mem_copy(mem_fd, addr, (void *)buf, len, true);
	if (wb->fd >= 0 && (wb->fd != mem_fd || wb->qpn != qpn || wb->addr + wb->len != addr ||
			    len > MEM_WB_CAP - wb->len))
		mem_wb_flush(d);
	if (len >= MEM_WB_CAP) {
		if (mem_copy(mem_fd, addr, (void *)buf, len, true))
			return -1;
		wb->st.pwrites++;
		wb->st.bytes += len;
		return 0;
	}
	if (wb->fd < 0) {
		wb->fd = mem_fd;
		wb->client_id = client_id;
		wb->qpn = qpn;
		wb->addr = addr;
	}
	memcpy(wb->buf + wb->len, buf, len);
	wb->len += len;
	wb->st.staged++;
	return 0;
}
