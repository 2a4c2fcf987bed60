/*
 * mem_access.c - registered-memory access for the data path (see
 * mem_access.h). Every value may come from the network: the checks are
 * written so that no addr/len combination can overflow.
 */
#include "config.h"
#include "emu/mem_access.h"
#include "emu/client.h"
#include "emu/device.h"
#include "emu/objects.h"

#include <errno.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* Copy LEN bytes between BUF and ADDR in process PID (partial transfers
 * resumed). Returns 0 or -1. */
static int vm_copy(pid_t pid, uint64_t addr, void *buf, uint32_t len, bool write)
{
	uint32_t done = 0;

	while (done < len) {
		struct iovec local = { .iov_base = (char *)buf + done, .iov_len = len - done };
		struct iovec remote = { .iov_base = (void *)(uintptr_t)(addr + done), .iov_len = len - done };
		ssize_t n = write ? process_vm_writev(pid, &local, 1, &remote, 1, 0)
				  : process_vm_readv(pid, &local, 1, &remote, 1, 0);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return -1;
		}
		done += (uint32_t)n;
	}
	return 0;
}

enum xport_mem_status mem_access(struct uroce_dev *d, uint32_t pdn, bool is_rkey, uint32_t key,
				 uint64_t addr, void *buf, uint32_t len, unsigned int access,
				 enum xport_mem_op op)
{
	const struct mr *mr = keytab_lookup(&d->keys, key);

	(void)is_rkey;
	if (!mr)
		return XPORT_MEM_BAD_KEY;
	if (mr->pd->pdn != pdn)
		return XPORT_MEM_BAD_PD;
	if ((access & mr->access) != access)
		return XPORT_MEM_ACCESS;
	if (len == 0)
		return XPORT_MEM_OK;
	/* inside [mr->addr, mr->addr + mr->length), without overflow */
	if (addr < mr->addr || len > mr->length || addr - mr->addr > mr->length - len)
		return XPORT_MEM_BOUNDS;
	if (op == XPORT_MEM_CHECK)
		return XPORT_MEM_OK;
	/* The client may have died with its disconnect not handled yet; its
	 * pid could then name another process. Its pidfd knows. */
	if (mr->owner->pidfd >= 0 && syscall(SYS_pidfd_send_signal, mr->owner->pidfd, 0, NULL, 0) < 0)
		return XPORT_MEM_FAULT;
	if (vm_copy(mr->owner->pid, addr, buf, len, op == XPORT_MEM_WRITE))
		return XPORT_MEM_FAULT;
	return XPORT_MEM_OK;
}
