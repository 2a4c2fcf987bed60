/*
 * mem_access.c - registered-memory access for the data path (see
 * mem_access.h). Every value may come from the network: the checks are
 * written so that no addr/len combination can overflow.
 */
#include "config.h"
#include "emu/nic/mem_access.h"
#include "emu/obj/client.h"
#include "emu/nic/device.h"
#include "emu/obj/objects.h"
#include "emu/nic/mem_wb.h"
#include "emu/nic/mem_window.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum xport_mem_status mem_access(struct uroce_dev *d, uint32_t pdn, bool is_rkey, uint32_t key,
				 uint64_t addr, void *buf, uint32_t len, unsigned int access,
				 enum xport_mem_op op)
{
	return mem_access_qp(d, pdn, 0, is_rkey, key, addr, buf, len, access, op);
}

enum xport_mem_status mem_access_qp(struct uroce_dev *d, uint32_t pdn, uint32_t qpn, bool is_rkey,
				    uint32_t key, uint64_t addr, void *buf, uint32_t len,
				    unsigned int access, enum xport_mem_op op)
{
	enum keytab_kind kind;
	const void *obj = keytab_lookup_kind(&d->keys, key, &kind);
	const struct ctl_mr *mr = obj;

	if (!obj)
		return XPORT_MEM_BAD_KEY;
	if (kind == KEYTAB_MW) {
		/* a window's rkey: remote access only, in its own bounds
		 * and rights, then through the MR behind it */
		enum xport_mem_status st;

		if (!is_rkey)
			return XPORT_MEM_BAD_KEY;
		st = mw_resolve(obj, pdn, qpn, addr, len, access, &mr);
		if (st || len == 0)
			return st;
	} else {
		if (mr->pd->pdn != pdn)
			return XPORT_MEM_BAD_PD;
		if ((access & mr->access) != access)
			return XPORT_MEM_ACCESS;
		if (len == 0)
			return XPORT_MEM_OK;
	}
	/* inside [mr->addr, mr->addr + mr->length), without overflow */
	if (addr < mr->addr || len > mr->length || addr - mr->addr > mr->length - len)
		return XPORT_MEM_BOUNDS;
	if (op == XPORT_MEM_CHECK)
		return XPORT_MEM_OK;
	/* device memory: the daemon's own mapping, zero-based from dm_offset */
	if (mr->dm) {
		uint8_t *p = (uint8_t *)mr->dm->mem + mr->dm_offset + (addr - mr->addr);

		if (op == XPORT_MEM_WRITE)
			memcpy(p, buf, len);
		else
			memcpy(buf, p, len);
		return XPORT_MEM_OK;
	}
	/* On-demand paging: the mapping as it is now, with its protection
	 * (the mem descriptor's FOLL_FORCE access would pass PROT_NONE and
	 * read-only pages, a page fault on a NIC would not). */
	if (mr->odp && mem_range_check(mr->owner, addr, len, op == XPORT_MEM_WRITE))
		return XPORT_MEM_FAULT;
	/* The fd reaches the mm the client had when it opened it only: not
	 * the image of a later execve. Its writes are FOLL_FORCE (they pass a
	 * read-only mapping): the access flags above are the guard. */
	if (op == XPORT_MEM_WRITE)
		return mem_wb_write(d, mr->owner->mem_fd, mr->owner->id, qpn, addr, buf, len)
			       ? XPORT_MEM_FAULT : XPORT_MEM_OK;
	/* a read sees every write accepted before it */
	mem_wb_flush(d);
	d->mem_preads++;
	d->mem_pread_bytes += len;
	if (mem_copy(mr->owner->mem_fd, addr, buf, len, false))
		return XPORT_MEM_FAULT;
	return XPORT_MEM_OK;
}

/* A stream over C's maps descriptor from its start (a dup: the seq_file
 * position is shared, the FILE's buffer is not), or NULL. */
static FILE *maps_open(const struct ctl_client *c)
{
	int fd;
	FILE *fp;

	if (c->maps_fd < 0 || lseek(c->maps_fd, 0, SEEK_SET) != 0)
		return NULL;
	fd = fcntl(c->maps_fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	fp = fdopen(fd, "r");
	if (!fp)
		close(fd);
	return fp;
}

bool mem_maps_live(const struct ctl_client *c)
{
	FILE *fp = maps_open(c);
	bool live;

	if (!fp)
		return false;
	live = fgetc(fp) != EOF;
	fclose(fp);
	return live;
}

int mem_range_check(struct ctl_client *c, uint64_t addr, uint64_t len, bool write)
{
	uint64_t cur = addr, end = addr + len;
	char *line = NULL;
	size_t cap = 0;
	unsigned char byte;
	FILE *fp = maps_open(c);

	if (!fp)
		return EFAULT;
	/* lines are sorted by address: walk them, covering [cur, end) */
	while (cur < end && getline(&line, &cap, fp) > 0) {
		uint64_t s, e;
		char perms[5];

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s", &s, &e, perms) != 3)
			break;
		if (e <= cur)
			continue;
		if (s > cur || perms[0] != 'r' || (write && perms[1] != 'w'))
			break;
		cur = e;
	}
	free(line);
	fclose(fp);
	if (cur < end)
		return EFAULT;
	/* the same address space through the mem descriptor */
	if (c->mem_fd < 0 || addr > (uint64_t)INT64_MAX ||
	    pread(c->mem_fd, &byte, 1, (off_t)addr) != 1)
		return EFAULT;
	return 0;
}
