/*
 * cm_client.c - a CM connection (abi_cm.h CM_HELLO: the event socket, the
 * id table) from its first message to its close, which destroys its ids as
 * closing the kernel's ucma fd does; and the device's CM state.
 */
#include "config.h"
#include "emu/cm/cm_int.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/ctl/ops.h"
#include "emu/nic/device.h"
#include "emu/log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

int op_cm_hello(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_cm_hello_req *req = call->req;
	struct uroce_cm_hello_resp *resp = call->resp;
	struct uroce_dev *d = c->dev;
	struct cm_dev *cm = d->cm;
	struct cm_conn *cc;
	struct stat st;
	int type = 0;
	socklen_t tl = sizeof(type);
	int rc;

	if (c->cm)
		return EALREADY;
	if (c->hello)
		return EPROTO;
	rc = hello_check_identity(c, req->abi_version, req->reserved, req->pid);
	if (rc)
		return rc;
	if (fstat(call->fds[0], &st) < 0 || !S_ISSOCK(st.st_mode) ||
	    getsockopt(call->fds[0], SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_SEQPACKET)
		return EBADF;
	if (!cm)
		return ENODEV;
	cc = calloc(1, sizeof(*cc));
	if (!cc || !(cc->evq = calloc(CM_EVQ_MAX, sizeof(*cc->evq)))) {
		free(cc);
		return ENOMEM;
	}
	cc->client = c;
	cc->cm = cm;
	cc->event_fd = call->fds[0];
	call->fds[0] = -1;
	cc->tag = req->conn_tag;
	cm_event_conn_init(cc);
	cc->next = cm->conns;
	if (cm->conns)
		cm->conns->prev = cc;
	cm->conns = cc;
	c->cm = cc;

	resp->client_id = c->id;
	resp->udp_port = d->port;
	resp->addr_family = d->addr.ss_family;
	resp->node_guid = d->node_guid;
	{
		union ibv_gid me;

		cm_dev_gid(cm, &me);
		memcpy(resp->addr, me.raw, 16);
	}
	ulog(ULOG_INFO, "client#%u pid %d uid %d (%s) opened the connection manager of %s", c->id, (int)c->pid,
	     (int)c->uid, c->comm, d->name);
	return 0;
}

void cm_client_gone(struct ctl_client *c)
{
	struct cm_conn *cc = c->cm;
	struct cm_dev *cm;
	uint32_t h, n = 0;

	if (!cc)
		return;
	cm = cc->cm;
	for (h = 1; h <= cc->ids.cap; h++) {
		struct cm_id *id = objtab_get(&cc->ids, h);

		if (id) {
			cm_destroy(id);
			n++;
		}
	}
	objtab_fini(&cc->ids);
	cm_event_conn_fini(cc);
	close(cc->event_fd);
	if (cc->prev)
		cc->prev->next = cc->next;
	else
		cm->conns = cc->next;
	if (cc->next)
		cc->next->prev = cc->prev;
	ulog(ULOG_INFO, "client#%u (%s): connection manager closed; %u ids destroyed, %llu events, %llu dropped",
	     c->id, c->comm, n, (unsigned long long)cc->events, (unsigned long long)cc->events_dropped);
	free(cc->evq);
	free(cc);
	c->cm = NULL;
}

int cm_dev_init(struct uroce_dev *d, uint32_t timeout_ms, uint32_t max_ids)
{
	struct cm_dev *cm = calloc(1, sizeof(*cm));

	if (!cm)
		return ENOMEM;
	cm->dev = d;
	cm->env = &cm_env_daemon;
	cm->timeout = cm_proto_timeout;
	cm->timeout_ms = timeout_ms ? timeout_ms : CM_DEFAULT_TIMEOUT_MS;
	cm->max_ids = max_ids ? max_ids : CM_DEFAULT_MAX_IDS_PER_USER;
	/* comm IDs: cm.c's cyclic allocation XOR a random operand, so an old
	 * peer's MADs do not match new ids */
	if (getentropy(&cm->comm_id_operand, sizeof(cm->comm_id_operand)))
		cm->comm_id_operand = (uint32_t)d->pid << 8;
	cm->next_comm_id = 1;
	cm->next_handle = 1;
	d->cm = cm;
	d->qp1_rx = cm_input;
	return 0;
}

void cm_dev_fini(struct uroce_dev *d)
{
	d->qp1_rx = NULL;
	free(d->cm);
	d->cm = NULL;
}
