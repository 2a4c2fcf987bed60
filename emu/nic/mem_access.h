/*
 * mem_access.h - the data path's window into registered memory
 * (docs/security.md): look up an lkey/rkey, check PD, bounds and access flags, then
 * read or write the owning process's memory with pread/pwrite on the
 * /proc/self/mem descriptor it sent at HELLO (client.h mem_fd; the daemon
 * never opens another process's /proc files, docs/security.md).
 * This is the body of the transport engine's ops->mem.
 */
#ifndef UROCE_EMU_MEM_ACCESS_H
#define UROCE_EMU_MEM_ACCESS_H

#include <stdbool.h>
#include <stdint.h>
#include "emu/xport/xport.h"

struct uroce_dev;

/*
 * mem_access - access [addr, addr+len) through KEY for a QP of PD number PDN.
 *   is_rkey  a remote request (rkey) or a local SGE (lkey); both name the
 *            same MR table (lkey == rkey); a window's rkey is an rkey only
 *   access   IBV_ACCESS_* flags the access needs: REMOTE_WRITE / REMOTE_READ
 *            / REMOTE_ATOMIC for remote requests, LOCAL_WRITE to fill a receive buffer or a
 *            READ response, 0 to read a local SGE
 *   op       XPORT_MEM_CHECK (validate only), _READ (memory -> buf), _WRITE
 *            (buf -> memory); len 0 checks the key only. With the device's
 *            write-behind (mem_wb.h) a _WRITE is checked now and copied
 *            later (a later failure: mem_wb_sync); a _READ first writes
 *            what is pending
 * Returns XPORT_MEM_OK; _BAD_KEY (no live MR with this key, incl. a wrong
 * variant), _BAD_PD (MR of another PD), _BOUNDS (range not inside the MR;
 * overflow-safe for any addr/len from the network), _ACCESS (the MR lacks a
 * needed flag), _FAULT (the process's memory could not be read/written in
 * full: unmapped — for an ODP MR also not readable, or not writable for a
 * write, in the maps at this moment (mem_range_check) —, process gone or its
 * image replaced by execve — the fd is
 * bound to the mm it was opened in, so a new (setuid) program is never
 * reached — or no fd).
 */
enum xport_mem_status mem_access(struct uroce_dev *d, uint32_t pdn, bool is_rkey, uint32_t key,
				 uint64_t addr, void *buf, uint32_t len, unsigned int access,
				 enum xport_mem_op op);

/* mem_access for the QP with number QPN: KEY may also be a memory window's
 * rkey (is_rkey only): the window must be bound (type 2: to QPN), in PDN,
 * grant ACCESS and hold the range (mem_window.h mw_resolve); the MR behind
 * it is then accessed as above (MW_BIND-registered MRs need no remote
 * rights of their own, IBTA 10.6.7). mem_access is this with QPN 0,
 * which no window is bound to. */
enum xport_mem_status mem_access_qp(struct uroce_dev *d, uint32_t pdn, uint32_t qpn, bool is_rkey,
				    uint32_t key, uint64_t addr, void *buf, uint32_t len,
				    unsigned int access, enum xport_mem_op op);

struct ctl_client;

/*
 * mem_range_check - may C register [addr, addr+len) (REG_MR)? Every byte
 * must lie in a mapping listed by C's maps descriptor (its /proc/self/maps,
 * sent at HELLO) that is readable, and writable if WRITE (LOCAL_WRITE /
 * REMOTE_WRITE / REMOTE_ATOMIC requested); then one byte at ADDR must be
 * readable through C's mem descriptor. Both descriptors are bound to the mm
 * they were opened in: after an execve or exit the maps read empty and the
 * check fails, so it says nothing about any other process's address map.
 * LEN > 0 and addr+len must not wrap (the caller checks). Mirrors the
 * kernel, whose ib_umem_get fails to pin such memory (ibv_reg_mr(3): EFAULT).
 * Returns 0, or EFAULT (gap, NULL page, PROT_NONE, read-only for WRITE, no
 * descriptors, address space gone).
 */
int mem_range_check(struct ctl_client *c, uint64_t addr, uint64_t len, bool write);

/* Does C's maps descriptor still list its address space (false: none, or
 * the process has exec'd or exited since opening it)? */
bool mem_maps_live(const struct ctl_client *c);

#endif
