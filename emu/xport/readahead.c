/*
 * readahead.c - the device's read-ahead of registered memory for the
 * packets it sends (see xport_read_ahead in xport_int.h): one ops->mem call
 * per XPORT_READ_AHEAD bytes of a message instead of one per packet.
 */
#include "config.h"
#include "emu/xport/xport_int.h"

#include <string.h>

enum xport_mem_status xport_read_ahead(struct xport_qp *qp, uint64_t tag, uint32_t total,
				       uint32_t offset, void *buf, uint32_t len,
				       xport_fetch_fn fetch, const void *src)
{
	struct xport_read_ahead *c = &qp->dev->ahead;
	enum xport_mem_status st;

	if (!tag)
		return fetch(qp, src, offset, buf, len);
	if (c->tag == tag && offset >= c->off &&
	    (uint64_t)offset + len <= (uint64_t)c->off + c->len) {
		memcpy(buf, c->buf + (offset - c->off), len);
		c->next = offset + len;
		return XPORT_MEM_OK;
	}
	/* The second in-order read of a tag reads ahead: a one-packet message,
	 * or sources of several QPs interleaved, cost no extra copy. */
	if (c->tag == tag && offset == c->next && offset < total && total - offset > len) {
		uint32_t ahead = total - offset < XPORT_READ_AHEAD ? total - offset : XPORT_READ_AHEAD;

		c->len = 0;
		if (fetch(qp, src, offset, c->buf, ahead) == XPORT_MEM_OK) {
			c->off = offset;
			c->len = ahead;
			memcpy(buf, c->buf, len);
			c->next = offset + len;
			return XPORT_MEM_OK;
		}
		/* a bad range further on: one fetch per read from here, so
		 * that the read that crosses it gets the error */
		c->next = UINT32_MAX;
		return fetch(qp, src, offset, buf, len);
	}
	st = fetch(qp, src, offset, buf, len);
	if (c->tag != tag || c->next != UINT32_MAX)
		c->next = offset + len;
	c->tag = tag;
	c->off = c->len = 0;
	return st;
}
