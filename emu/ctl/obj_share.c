/*
 * obj_share.c - shared contexts: SHARE_CONTEXT, IMPORT_CONTEXT, IMPORT_OBJ,
 * UNIMPORT_OBJ (include/uroce/abi_share.h, docs/provider.md "Shared
 * contexts").
 *
 * A connection that imports another (the importer) keeps its own objects;
 * an imported PD, MR or DM is one more entry, pointing at the original
 * object, in the importer's table of that kind, remembered in
 * c->imports so that it is never freed through the importer. The object
 * counts its imports and refuses to be destroyed while it has any, so an
 * entry can never outlive its object; the original connection ends its
 * importers before it frees anything (client_destroy), as they may hold
 * its objects (a QP on an imported PD).
 */
#include "config.h"
#include "emu/obj/client.h"
#include "emu/nic/device.h"
#include "emu/log.h"
#include "emu/obj/objects.h"
#include "emu/ctl/ops.h"
#include "emu/ctl/share.h"
#include "emu/obj/async_event.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/kcmp.h>

/* One handle IMPORT_OBJ gave: kind, the importer's handle, the object. */
struct ctl_import {
	uint32_t type;
	uint32_t handle;
	void *obj;
};

/* The table of kind TYPE in C, or NULL. */
static struct obj_table *table_of(struct ctl_client *c, uint32_t type)
{
	switch (type) {
	case UROCE_IMPORT_PD: return &c->pds;
	case UROCE_IMPORT_MR: return &c->mrs;
	case UROCE_IMPORT_DM: return &c->dms;
	case UROCE_IMPORT_QP: return &c->qps;
	default: return NULL;
	}
}

/* The import counter of OBJ of kind TYPE. */
static uint32_t *imported_of(uint32_t type, void *obj)
{
	switch (type) {
	case UROCE_IMPORT_PD: return &((struct ctl_pd *)obj)->imported;
	case UROCE_IMPORT_MR: return &((struct ctl_mr *)obj)->imported;
	case UROCE_IMPORT_QP: return &((struct ctl_qp *)obj)->imported;
	default: return &((struct ctl_dm *)obj)->imported;
	}
}

/* The command-file descriptor of FDS[0], kept (FDS[0] = -1), if it is a
 * character device; else -1 with *rc = EINVAL. */
static int take_cmd_file(struct ctl_call *call, int *rc)
{
	struct stat st;
	int fd = call->fds[0];

	if (fstat(fd, &st) || !S_ISCHR(st.st_mode)) {
		*rc = EINVAL;
		return -1;
	}
	call->fds[0] = -1;
	return fd;
}

int op_share_context(struct ctl_client *c, struct ctl_call *call)
{
	struct uroce_handle_resp *resp = call->resp;
	int rc = 0, fd;

	if (c->cmd_file >= 0)
		return EEXIST;
	fd = take_cmd_file(call, &rc);
	if (fd < 0)
		return rc;
	c->cmd_file = fd;
	resp->handle = c->id;
	return 0;
}

/* Whether descriptors A and B of this process are one open file
 * description: 1 yes, 0 no, -1 (errno) kcmp(2) failed. */
static int same_file(int a, int b)
{
	long r = syscall(SYS_kcmp, (long)getpid(), (long)getpid(), (long)KCMP_FILE, (long)a, (long)b);

	return r < 0 ? -1 : r == 0;
}

int op_import_context(struct ctl_client *c, struct ctl_call *call)
{
	struct uroce_handle_resp *resp = call->resp;
	struct ctl_client *o;
	int rc = 0, fd;

	if (c->cmd_file >= 0)
		return EEXIST;
	fd = take_cmd_file(call, &rc);
	if (fd < 0)
		return rc;
	for (o = c->dev->clients; o; o = o->next) {
		int same;

		/* only a context that named its file itself: never an importer */
		if (o == c || !o->hello || o->import_from || o->cmd_file < 0)
			continue;
		same = same_file(fd, o->cmd_file);
		if (same < 0) {
			ulog(ULOG_WARN, "client#%u: IMPORT_CONTEXT: kcmp(2): %s; importing a device "
			     "is not supported here", c->id, strerror(errno));
			close(fd);
			return EOPNOTSUPP;
		}
		if (same)
			break;
	}
	if (!o) {
		close(fd);
		return EINVAL;
	}
	c->cmd_file = fd;
	c->import_from = o;
	resp->handle = o->id;
	ulog(ULOG_INFO, "client#%u pid %d imported the context of client#%u pid %d", c->id,
	     (int)c->pid, o->id, (int)o->pid);
	return 0;
}

/* Imported and opened handles one connection may hold: each costs the
 * daemon memory no object quota counts. */
#define SHARE_MAX_IMPORTS 65536u

/* Room for one more entry in c->imports: 0 or ENOMEM. */
static int imports_room(struct ctl_client *c)
{
	struct ctl_import *imp;
	uint32_t cap;

	if (c->n_imports >= SHARE_MAX_IMPORTS)
		return ENOMEM;
	if (c->n_imports < c->cap_imports)
		return 0;
	cap = c->cap_imports ? c->cap_imports * 2 : 8;
	imp = realloc(c->imports, cap * sizeof(*imp));
	if (!imp)
		return ENOMEM;
	c->imports = imp;
	c->cap_imports = cap;
	return 0;
}

int op_import_obj(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_import_obj_req *req = call->req;
	struct uroce_import_obj_resp *resp = call->resp;
	struct obj_table *from, *to;
	uint32_t handle;
	void *obj;
	int rc;

	if (!c->import_from || req->hdr.reserved)
		return EINVAL;
	from = table_of(c->import_from, req->type);
	to = table_of(c, req->type);
	if (!from || req->type == UROCE_IMPORT_QP)
		return EINVAL;
	obj = objtab_get(from, req->handle);
	if (!obj)
		return EINVAL;
	if (imports_room(c))
		return ENOMEM;
	if (req->type == UROCE_IMPORT_DM) {
		struct ctl_dm *dm = obj;

		if (dm->memfd < 0)
			return ENOMEM;
		call->out_fds[0] = fcntl(dm->memfd, F_DUPFD_CLOEXEC, 0);
		if (call->out_fds[0] < 0)
			return errno;
		call->n_out = 1;
		call->close_out = true;
		resp->length = dm->length;
		resp->map_size = dm->map_size;
	} else if (req->type == UROCE_IMPORT_MR) {
		struct ctl_mr *mr = obj;

		resp->lkey = mr->key;
		resp->rkey = mr->key;
		resp->length = mr->length;
	}
	rc = objtab_add(to, obj, &handle);
	if (rc) {
		if (call->n_out)
			close(call->out_fds[0]);
		call->n_out = 0;
		return rc;
	}
	c->imports[c->n_imports++] = (struct ctl_import){ req->type, handle, obj };
	(*imported_of(req->type, obj))++;
	resp->handle = handle;
	return 0;
}

/* Forget import I of C. */
static void drop_import(struct ctl_client *c, uint32_t i)
{
	struct ctl_import *imp = &c->imports[i];

	objtab_del(table_of(c, imp->type), imp->handle);
	(*imported_of(imp->type, imp->obj))--;
	c->imports[i] = c->imports[--c->n_imports];
}

int op_unimport_obj(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_import_obj_req *req = call->req;
	struct uroce_handle_resp *resp = call->resp;

	if (req->hdr.reserved)
		return EINVAL;
	for (uint32_t i = 0; i < c->n_imports; i++) {
		if (c->imports[i].type == req->type && c->imports[i].handle == req->handle) {
			drop_import(c, i);
			resp->handle = req->handle;
			return 0;
		}
	}
	return EINVAL;
}

/* The XRC_RECV QP numbered QPN that its creator owns in domain DOM, or NULL. */
static struct ctl_qp *find_xrc_tgt(struct uroce_dev *d, const struct xrcd_dom *dom, uint32_t qpn)
{
	for (struct ctl_client *o = d->clients; o; o = o->next) {
		for (uint32_t h = 1; h <= o->qps.cap; h++) {
			struct ctl_qp *qp = objtab_get(&o->qps, h);

			if (qp && qp->handle == h && qp->owner == o && qp->qpn == qpn &&
			    qp->type == IBV_QPT_XRC_RECV && qp->xrcd && qp->xrcd->dom == dom)
				return qp;
		}
	}
	return NULL;
}

int op_open_qp(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_open_qp_req *req = call->req;
	struct uroce_handle_resp *resp = call->resp;
	struct ctl_xrcd *x = objtab_get(&c->xrcds, req->xrcd_handle);
	struct ctl_qp *qp;
	uint32_t handle;
	int rc;

	if (!x || req->reserved || req->hdr.reserved)
		return EINVAL;
	qp = find_xrc_tgt(c->dev, x->dom, req->qpn);
	if (!qp)
		return EINVAL;
	if ((rc = imports_room(c)) || (rc = objtab_add(&c->qps, qp, &handle)))
		return rc;
	c->imports[c->n_imports++] = (struct ctl_import){ UROCE_IMPORT_QP, handle, qp };
	qp->imported++;
	resp->handle = handle;
	ulog(ULOG_INFO, "client#%u opened XRC target qpn 0x%x of client#%u", c->id, qp->qpn,
	     qp->owner->id);
	return 0;
}

struct ctl_client *share_end_importer(struct ctl_client *c)
{
	struct ctl_client *o;

	for (o = c->dev->clients; o && o->import_from != c; o = o->next)
		;
	if (!o)
		return NULL;
	ulog(ULOG_INFO, "client#%u: ended with client#%u, whose context it imported", o->id, c->id);
	if (o->hello)
		client_async_event(o, 1, IBV_EVENT_DEVICE_FATAL);
	o->import_from = NULL;
	return o;
}

void share_client_gone(struct ctl_client *c)
{
	/* others' OPEN_QP handles of its XRC target QPs go stale */
	for (struct ctl_client *o = c->dev->clients; o; o = o->next) {
		for (uint32_t i = 0; i < o->n_imports;) {
			if (o->imports[i].type == UROCE_IMPORT_QP &&
			    ((struct ctl_qp *)o->imports[i].obj)->owner == c)
				drop_import(o, i);
			else
				i++;
		}
	}
	while (c->n_imports)
		drop_import(c, c->n_imports - 1);
	free(c->imports);
	c->imports = NULL;
	c->cap_imports = 0;
	if (c->cmd_file >= 0)
		close(c->cmd_file);
	c->cmd_file = -1;
}
