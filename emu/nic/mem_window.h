/*
 * mem_window.h - memory windows on the data path (IBTA 10.6.7; ibv_bind_mw(3),
 * ibv_post_send(3) IBV_WR_BIND_MW / LOCAL_INV / SEND_WITH_INV): binding a
 * window to an MR range, invalidating its rkey, and resolving a remote
 * access through a window's rkey to the MR behind it. The control plane
 * (emu/ctl/obj_mw.c) owns the window objects; the engine reaches these
 * functions through its local_op, invalidate and mem callbacks
 * (engine_glue.c, mem_access.c). Semantics: docs/transport.md "Memory
 * windows".
 */
#ifndef UROCE_EMU_MEM_WINDOW_H
#define UROCE_EMU_MEM_WINDOW_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include "emu/xport/xport.h"

struct ctl_client;
struct ctl_qp;
struct ctl_mw;
struct ctl_mr;
struct uroce_dev;

/*
 * mw_bind - execute the BIND_MW WQE B (new rkey RKEY) posted on QP of client
 * C. Checks (each failure: IBV_WC_MW_BIND_ERR, nothing changes): the window
 * handle is C's; its type matches how it was posted (type 1 only through the
 * bind_mw verb, type 2 only through ibv_post_send); the window, the QP and
 * the MR are in one PD; RKEY has the window's index; access holds only
 * LOCAL_WRITE and REMOTE_READ/WRITE/ATOMIC (ZERO_BASED and others refused);
 * unbind (length 0) only for type 1; a type 2 window must be free
 * (IBTA o10-37.2.30); the MR key is a live MR of C registered with
 * IBV_ACCESS_MW_BIND (C10-73) whose range holds [addr, addr+length)
 * (C10-75); REMOTE_WRITE or REMOTE_ATOMIC need the MR's LOCAL_WRITE
 * (C10-74). On success the window's rkey becomes RKEY (variant = its low
 * byte) and it is bound (type 2: to this QP). Returns IBV_WC_SUCCESS or
 * IBV_WC_MW_BIND_ERR.
 */
enum ibv_wc_status mw_bind(struct ctl_client *c, struct ctl_qp *qp, uint32_t rkey,
			   const struct xport_mw_bind *b);

/*
 * mw_invalidate - invalidate RKEY for QP (IBV_WR_LOCAL_INV when REMOTE is
 * false, a received SEND with Invalidate when true). Only a bound type 2
 * window in the QP's PD can be invalidated (IBTA o10-37.2.26: never a type 1
 * window; an MR registered with ibv_reg_mr has no invalidation either, as
 * on mlx5); a remote invalidation must also come through the QP the window
 * is bound to. The window becomes free: its rkey gives Remote Access Error
 * until it is bound again. Returns 0 or EINVAL.
 */
int mw_invalidate(struct uroce_dev *d, struct ctl_qp *qp, uint32_t rkey, bool remote);

/* Unbind MW (dealloc, QP destroyed, client gone): no MR, no range. */
void mw_unbind(struct ctl_mw *mw);

/* QP of client C is being destroyed: its type 2 windows become free. */
void mw_qp_gone(struct ctl_client *c, uint32_t qpn);

/*
 * mw_resolve - a remote access of ACCESS (IBV_ACCESS_REMOTE_*) to
 * [addr, addr+len) through window MW by the QP with number QPN in PD number
 * PDN. Returns XPORT_MEM_OK with *mr the MR behind it, or _BAD_KEY (not
 * bound, or a type 2 window bound to another QP), _BAD_PD, _ACCESS (the
 * window lacks a right), _BOUNDS (outside the window; overflow-safe).
 */
enum xport_mem_status mw_resolve(const struct ctl_mw *mw, uint32_t pdn, uint32_t qpn, uint64_t addr,
				 uint32_t len, unsigned int access, const struct ctl_mr **mr);

#endif
