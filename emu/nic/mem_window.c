/*
 * mem_window.c - memory-window bind, invalidation and access (see
 * mem_window.h).
 */
#include "config.h"
#include "emu/nic/mem_window.h"
#include "emu/obj/client.h"
#include "emu/obj/keytab.h"
#include "emu/obj/objects.h"
#include "emu/log.h"
#include "emu/nic/device.h"

#include <errno.h>

/* Rights a bind may grant; LOCAL_WRITE is accepted and means nothing for a
 * window (pyverbs binds with it, mlx5 takes it). */
#define MW_BIND_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			IBV_ACCESS_REMOTE_ATOMIC)

void mw_unbind(struct ctl_mw *mw)
{
	if (mw->mr)
		mw->mr->mw_bound--;
	mw->mr = NULL;
	mw->addr = 0;
	mw->length = 0;
	mw->access = 0;
	mw->qpn = 0;
}

/* Why bind B of window MW fails, or NULL; *mr the MR for a bind with length. */
static const char *bind_check(struct ctl_client *c, const struct ctl_qp *qp, const struct ctl_mw *mw,
			      uint32_t rkey, const struct xport_mw_bind *b, struct ctl_mr **mr)
{
	struct ctl_mr *m;

	*mr = NULL;
	if (b->type1 != (mw->type == IBV_MW_TYPE_1))
		return b->type1 ? "type 2 window bound by ibv_bind_mw" : "type 1 window bound by a BIND_MW WR";
	if (mw->pd != qp->pd)
		return "window and QP in different PDs";
	if (rkey >> 8 != mw->rkey >> 8)
		return "new rkey has another index than the window's";
	if (b->access & ~MW_BIND_ACCESS)
		return "access flags a window cannot have";
	if (b->length == 0)
		return mw->type == IBV_MW_TYPE_1 ? NULL : "type 2 window bound with length 0";
	if (mw->type == IBV_MW_TYPE_2 && mw->mr)
		return "type 2 window is not free";
	m = keytab_lookup(&c->dev->keys, b->mr_lkey);
	if (!m || m->owner != c)
		return "MR lkey is not a live MR";
	if (m->pd != mw->pd)
		return "MR in another PD";
	if (!(m->access & IBV_ACCESS_MW_BIND))
		return "MR registered without IBV_ACCESS_MW_BIND";
	if ((b->access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(m->access & IBV_ACCESS_LOCAL_WRITE))
		return "remote write/atomic window on an MR without LOCAL_WRITE";
	if (b->addr < m->addr || b->length > m->length || b->addr - m->addr > m->length - b->length)
		return "range outside the MR";
	*mr = m;
	return NULL;
}

enum ibv_wc_status mw_bind(struct ctl_client *c, struct ctl_qp *qp, uint32_t rkey,
			   const struct xport_mw_bind *b)
{
	struct ctl_mw *mw = objtab_get(&c->mws, b->mw_handle);
	struct ctl_mr *mr;
	const char *why = mw ? bind_check(c, qp, mw, rkey, b, &mr) : "no such window handle";

	if (why) {
		ulog(ULOG_DEBUG, "client#%u qpn 0x%x: bind of window %u to 0x%llx+%llu refused: %s", c->id,
		     qp->qpn, b->mw_handle, (unsigned long long)b->addr, (unsigned long long)b->length, why);
		return IBV_WC_MW_BIND_ERR;
	}
	mw_unbind(mw);
	keytab_set_variant(&c->dev->keys, rkey);
	mw->rkey = rkey;
	if (mr) {
		mw->mr = mr;
		mr->mw_bound++;
		mw->addr = b->addr;
		mw->length = b->length;
		mw->access = b->access & MW_BIND_ACCESS & ~IBV_ACCESS_LOCAL_WRITE;
		if (mw->type == IBV_MW_TYPE_2)
			mw->qpn = qp->qpn;
	}
	return IBV_WC_SUCCESS;
}

int mw_invalidate(struct uroce_dev *d, struct ctl_qp *qp, uint32_t rkey, bool remote)
{
	enum keytab_kind kind;
	struct ctl_mw *mw = keytab_lookup_kind(&d->keys, rkey, &kind);

	/* an XRC_RECV QP has no PD, so no window is bound to it */
	if (!mw || kind != KEYTAB_MW || mw->type != IBV_MW_TYPE_2 || !mw->mr || !qp->pd ||
	    mw->pd->pdn != qp->pd->pdn ||
	    (remote && mw->qpn != qp->qpn)) {
		ulog(ULOG_DEBUG, "qpn 0x%x: %s invalidation of rkey 0x%x refused", qp->qpn,
		     remote ? "remote" : "local", rkey);
		return EINVAL;
	}
	mw_unbind(mw);
	return 0;
}

void mw_qp_gone(struct ctl_client *c, uint32_t qpn)
{
	uint32_t h;

	for (h = 1; h <= c->mws.cap; h++) {
		struct ctl_mw *mw = objtab_get(&c->mws, h);

		if (mw && mw->type == IBV_MW_TYPE_2 && mw->mr && mw->qpn == qpn)
			mw_unbind(mw);
	}
}

enum xport_mem_status mw_resolve(const struct ctl_mw *mw, uint32_t pdn, uint32_t qpn, uint64_t addr,
				 uint32_t len, unsigned int access, const struct ctl_mr **mr)
{
	if (!mw->mr || (mw->type == IBV_MW_TYPE_2 && mw->qpn != qpn))
		return XPORT_MEM_BAD_KEY;
	if (mw->pd->pdn != pdn)
		return XPORT_MEM_BAD_PD;
	if ((access & mw->access) != access)
		return XPORT_MEM_ACCESS;
	if (addr < mw->addr || len > mw->length || addr - mw->addr > mw->length - len)
		return XPORT_MEM_BOUNDS;
	*mr = mw->mr;
	return XPORT_MEM_OK;
}
