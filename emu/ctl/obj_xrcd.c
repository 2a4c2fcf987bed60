/*
 * obj_xrcd.c - XRC domains: OPEN_XRCD / CLOSE_XRCD (include/uroce/abi_xrc.h).
 * A domain opened with a file is found again by that file's inode, from any
 * client, as the kernel's ib_uverbs_open_xrcd finds it in its inode tree;
 * one opened without is private. Each client holds handles; the domain goes
 * with its last handle.
 */
#include "config.h"
#include "emu/obj/client.h"
#include "emu/nic/device.h"
#include "emu/log.h"
#include "emu/obj/objects.h"
#include "emu/ctl/ops.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static struct xrcd_dom *dom_find(struct uroce_dev *d, dev_t dev, ino_t ino)
{
	for (struct xrcd_dom *x = d->xrcds; x; x = x->next)
		if (x->shared && x->st_dev == dev && x->st_ino == ino)
			return x;
	return NULL;
}

/* Lowest xrcdn not in use (the list is at most UROCE_MAX_XRCD long). */
static uint32_t dom_number(const struct uroce_dev *d)
{
	for (uint32_t n = 1;; n++) {
		const struct xrcd_dom *x = d->xrcds;

		while (x && x->xrcdn != n)
			x = x->next;
		if (!x)
			return n;
	}
}

static struct xrcd_dom *dom_new(struct uroce_dev *d)
{
	struct xrcd_dom *x;

	if (d->n_xrcds >= UROCE_MAX_XRCD)
		return NULL;
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->xrcdn = dom_number(d);
	x->pin_fd = -1;
	x->next = d->xrcds;
	d->xrcds = x;
	d->n_xrcds++;
	return x;
}

static void dom_put(struct uroce_dev *d, struct xrcd_dom *x)
{
	struct xrcd_dom **pp;

	if (--x->handles)
		return;
	for (pp = &d->xrcds; *pp != x; pp = &(*pp)->next)
		;
	*pp = x->next;
	d->n_xrcds--;
	if (x->pin_fd >= 0)
		close(x->pin_fd);
	free(x);
}

int op_open_xrcd(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_open_xrcd_req *req = call->req;
	struct uroce_open_xrcd_resp *resp = call->resp;
	struct xrcd_dom *dom = NULL;
	struct ctl_xrcd *x;
	struct stat st;
	bool created = false;
	int rc;

	if (req->reserved)
		return EINVAL;
	if (c->xrcds.count >= UROCE_MAX_XRCD)
		return ENOMEM;
	if (call->nfds == 1) {
		if (fstat(call->fds[0], &st) != 0)
			return EBADF;
		dom = dom_find(c->dev, st.st_dev, st.st_ino);
		if (!dom && !(req->oflags & O_CREAT))
			return EAGAIN;
		if (dom && (req->oflags & O_EXCL))
			return EINVAL;
	}
	if (!dom) {
		dom = dom_new(c->dev);
		if (!dom)
			return ENOMEM;
		created = true;
		if (call->nfds == 1) {
			dom->shared = true;
			dom->st_dev = st.st_dev;
			dom->st_ino = st.st_ino;
		}
	}
	x = calloc(1, sizeof(*x));
	if (!x || (rc = objtab_add(&c->xrcds, x, &x->handle)) != 0) {
		free(x);
		if (created) {
			dom->handles = 1;
			dom_put(c->dev, dom);
		}
		return ENOMEM;
	}
	if (created && dom->shared) {
		dom->pin_fd = call->fds[0];
		call->fds[0] = -1;
	}
	x->dom = dom;
	dom->handles++;
	resp->handle = x->handle;
	resp->xrcdn = dom->xrcdn;
	ulog(ULOG_DEBUG, "client#%u: xrcd %u (%s) handle %u", c->id, dom->xrcdn,
	     dom->shared ? "shared" : "private", x->handle);
	return 0;
}

void xrcd_free(struct ctl_client *c, struct ctl_xrcd *x)
{
	objtab_del(&c->xrcds, x->handle);
	dom_put(c->dev, x->dom);
	free(x);
}

int op_close_xrcd(struct ctl_client *c, struct ctl_call *call)
{
	struct ctl_xrcd *x = objtab_get(&c->xrcds, req_handle(call));

	if (!x)
		return EINVAL;
	if (x->users)
		return EBUSY;
	xrcd_free(c, x);
	return 0;
}
