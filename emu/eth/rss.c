/*
 * rss.c - receive work queues, their indirection tables and RSS QPs
 * (ibv_create_wq(3), ibv_create_rwq_ind_table(3), ibv_create_qp_ex(3)
 * rx_hash_conf; the messages in uroce/abi_flow.h). A WQ is a raw packet
 * QP that only receives (its own RQ ring and CQ; RDY is RTR); an RSS QP
 * takes frames through steering rules and hands each to the WQ its
 * Toeplitz hash selects in the table, as a ConnectX's TIR does. The QP
 * objects themselves are made by emu/ctl/obj_wq.c.
 */
#include "config.h"
#include "emu/eth/eth_int.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/log.h"
#include "emu/nic/device.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* IBV_RX_HASH_* fields uroce hashes on. */
#define RSS_FIELDS (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_SRC_IPV6 |           \
		    IBV_RX_HASH_DST_IPV6 | IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP |   \
		    IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP | IBV_RX_HASH_INNER)


struct ctl_qp *raw_wq_get(struct ctl_client *c, uint32_t handle)
{
	struct ctl_qp *qp = objtab_get(&c->qps, handle);

	return qp && qp->raw && qp->raw->is_wq ? qp : NULL;
}

int raw_wq_check(const struct ctl_client *c, const struct uroce_create_wq_req *req)
{
	if (!req->max_wr || req->max_wr > (uint32_t)c->dev->attr.max_qp_wr || !req->max_sge ||
	    req->max_sge > (uint32_t)c->dev->attr.max_sge)
		return EINVAL;
	if (req->create_flags & ~(uint32_t)UROCE_WQ_FLAGS)
		return (req->create_flags & IBV_WQ_FLAGS_PCI_WRITE_END_PADDING) ? EOPNOTSUPP : EINVAL;
	if (req->log_num_strides &&
	    (req->log_num_strides < UROCE_STRIDING_LOG_NUM_MIN || req->log_num_strides > UROCE_STRIDING_LOG_NUM_MAX ||
	     req->log_stride_bytes < UROCE_STRIDING_LOG_STRIDE_MIN ||
	     req->log_stride_bytes > UROCE_STRIDING_LOG_STRIDE_MAX ||
	     req->log_num_strides + req->log_stride_bytes > UROCE_STRIDING_LOG_WQE_BYTES_MAX ||
	     req->max_sge != 1 || req->two_byte_shift > 1))
		return EINVAL;
	if (!req->log_num_strides && (req->log_stride_bytes || req->two_byte_shift))
		return EINVAL;
	return 0;
}

void raw_wq_init(struct ctl_qp *qp, const struct uroce_create_wq_req *req)
{
	qp->raw->is_wq = true;
	qp->raw->wq_flags = req->create_flags;
	qp->raw->log_num_strides = (uint8_t)req->log_num_strides;
	qp->raw->log_stride_bytes = (uint8_t)req->log_stride_bytes;
	qp->raw->two_byte_shift = req->two_byte_shift;
}

int op_modify_wq(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_modify_wq_req *req = call->req;
	struct uroce_modify_wq_resp *resp = call->resp;
	struct ctl_qp *qp = raw_wq_get(c, req->handle);
	static const enum ibv_qp_state as_qp[] = { IBV_QPS_RESET, IBV_QPS_RTR, IBV_QPS_ERR };
	enum ibv_wq_state cur;

	if (!qp)
		return EINVAL;
	cur = qp->raw->state == IBV_QPS_RESET ? IBV_WQS_RESET :
	      qp->raw->state == IBV_QPS_ERR ? IBV_WQS_ERR : IBV_WQS_RDY;
	if (req->attr_mask & ~(uint32_t)(IBV_WQ_ATTR_STATE | IBV_WQ_ATTR_CURR_STATE | IBV_WQ_ATTR_FLAGS))
		return EINVAL;
	if ((req->attr_mask & IBV_WQ_ATTR_CURR_STATE) && req->curr_wq_state != cur)
		return EINVAL;
	if ((req->attr_mask & IBV_WQ_ATTR_FLAGS) && (req->flags_mask & ~(uint32_t)UROCE_WQ_FLAGS))
		return (req->flags_mask & IBV_WQ_FLAGS_PCI_WRITE_END_PADDING) ? EOPNOTSUPP : EINVAL;
	if ((req->attr_mask & IBV_WQ_ATTR_STATE) && req->wq_state > IBV_WQS_ERR)
		return EINVAL;
	if (req->attr_mask & IBV_WQ_ATTR_FLAGS) {
		/* every flag takes effect from the next frame on */
		qp->raw->wq_flags = (qp->raw->wq_flags & ~req->flags_mask) | (req->flags & req->flags_mask);
		if (!(qp->raw->wq_flags & IBV_WQ_FLAGS_DELAY_DROP))
			raw_held_drop(qp);
	}
	if (req->attr_mask & IBV_WQ_ATTR_STATE) {
		struct uroce_qp_ring_hdr *h = qp->ring;

		raw_qp_modify(qp, as_qp[req->wq_state]);
		if (req->wq_state == IBV_WQS_RESET && h) {
			qp->rq_next = __atomic_load_n(&h->rq_pi, __ATOMIC_ACQUIRE);
			__atomic_store_n(&h->rq_ci, qp->rq_next, __ATOMIC_RELEASE);
		}
		cur = (enum ibv_wq_state)req->wq_state;
	}
	resp->wq_state = cur;
	resp->flags = qp->raw->wq_flags;
	return 0;
}

bool raw_wq_in_table(const struct ctl_qp *qp)
{
	return qp->raw->tables != 0;
}

int op_create_ind_table(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_create_ind_table_req *req = call->req;
	struct uroce_create_ind_table_resp *resp = call->resp;
	struct eth_port *p = c->dev->eth;
	struct rwq_ind_table *t;
	uint32_t n;

	if (!p || req->log_size > UROCE_IND_TABLE_LOG_MAX || req->reserved)
		return EINVAL;
	n = 1u << req->log_size;
	for (uint32_t i = 0; i < n; i++)
		if (!raw_wq_get(c, req->wq_handles[i]))
			return EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t || !(t->wqs = calloc(n, sizeof(*t->wqs)))) {
		free(t);
		return ENOMEM;
	}
	t->size = n;
	for (uint32_t i = 0; i < n; i++) {
		t->wqs[i] = raw_wq_get(c, req->wq_handles[i]);
		t->wqs[i]->raw->tables++;
	}
	t->handle = t->num = ++p->next_table_num;
	t->owner = c;
	t->next = p->tables;
	p->tables = t;
	resp->handle = t->handle;
	resp->ind_tbl_num = t->num;
	return 0;
}

static struct rwq_ind_table **table_find(struct eth_port *p, const struct ctl_client *c, uint32_t handle)
{
	struct rwq_ind_table **pp;

	if (!p)
		return NULL;
	for (pp = &p->tables; *pp; pp = &(*pp)->next)
		if ((*pp)->handle == handle && (*pp)->owner == c)
			return pp;
	return NULL;
}

int op_destroy_ind_table(struct ctl_client *c, struct ctl_call *call)
{
	struct rwq_ind_table **pp = table_find(c->dev->eth, c, req_handle(call));

	if (!pp)
		return EINVAL;
	if ((*pp)->users)
		return EBUSY;
	rss_table_free(pp);
	return 0;
}

int raw_rss_prepare(struct ctl_client *c, const struct uroce_create_rss_qp_req *req, struct raw_rss **out)
{
	struct rwq_ind_table **pp = table_find(c->dev->eth, c, req->ind_table_handle);
	struct raw_rss *rss;

	if (!pp || req->hash_function != IBV_RX_HASH_FUNC_TOEPLITZ || !req->key_len ||
	    req->key_len > UROCE_RSS_KEY_MAX)
		return EINVAL;
	if (req->fields_mask & ~(uint64_t)RSS_FIELDS)
		return (req->fields_mask & (uint64_t)IBV_RX_HASH_IPSEC_SPI) ?
			       EOPNOTSUPP : EINVAL;
	rss = calloc(1, sizeof(*rss));
	if (!rss)
		return ENOMEM;
	rss->table = *pp;
	rss->fields = req->fields_mask;
	rss->key_len = req->key_len;
	memcpy(rss->key, req->key, req->key_len);
	*out = rss;
	return 0;
}

void raw_rss_attach(struct ctl_qp *qp, struct raw_rss *rss)
{
	rss->table->users++;
	qp->raw->rss = rss;
	/* a TIR receives at once: there is no state to move through */
	qp->raw->state = IBV_QPS_RTR;
	ulog_object("client#%u created RSS qpn 0x%x over table %u (%u WQs), fields 0x%llx", qp->owner->id,
		    qp->qpn, rss->table->num, rss->table->size, (unsigned long long)rss->fields);
}
