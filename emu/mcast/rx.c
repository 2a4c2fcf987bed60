/*
 * rx.c - a datagram to a multicast group reaching this device (mcast.h):
 * handed to each attached QP's engine, from the local delivery queue
 * (path.c) or from a frame on the VXLAN segment.
 */
#include "config.h"
#include "emu/mcast/mcast.h"
#include "emu/nic/device.h"
#include "emu/xport/xport.h"

#include <string.h>

void mcast_deliver(struct uroce_dev *d, const uint8_t sgid[16], const uint8_t dgid[16],
		    uint16_t sport, const uint8_t *pkt, size_t len, bool verified, uint64_t *ok)
{
	struct mcast_dev *m = d->mcast;
	const struct mcast_group *g = mcast_group_find(m, dgid);
	uint32_t qpns[MCAST_MAX_QP_ATTACH];
	union ibv_gid s, t;
	uint32_t n;

	if (!g) {
		m->st.rx_no_group++;
		return;
	}
	/* a copy: a completion's work may change the group meanwhile */
	n = g->n;
	memcpy(qpns, g->qpn, n * sizeof(*qpns));
	memcpy(s.raw, sgid, 16);
	memcpy(t.raw, dgid, 16);
	if (xport_input_mcast(d->xdev, pkt, len, &s, &t, sport, d->port, verified, qpns, n))
		m->st.rx_dropped++;
	else {
		(*ok)++;
		d->rx_taken++;
	}
}

bool mcast_frame_rx(struct uroce_dev *d, const uint8_t *f, size_t len)
{
	uint8_t src[16], dst[16];
	const uint8_t *udp;
	size_t ulen;

	if (len < 14)
		return false;
	memset(src, 0, 16);
	memset(dst, 0, 16);
	if (f[12] == 0x08 && f[13] == 0x00 && d->addr.ss_family == AF_INET) {
		const uint8_t *ip = f + 14;
		size_t ihl;

		if (len < 14 + 20 || (ip[0] >> 4) != 4 || ip[9] != 17)
			return false;
		ihl = (size_t)(ip[0] & 15) * 4;
		if (ihl < 20 || len < 14 + ihl + 8 || (ip[16] & 0xf0) != 0xe0)
			return false;
		src[10] = src[11] = dst[10] = dst[11] = 0xff;
		memcpy(src + 12, ip + 12, 4);
		memcpy(dst + 12, ip + 16, 4);
		udp = ip + ihl;
	} else if (f[12] == 0x86 && f[13] == 0xdd && d->addr.ss_family == AF_INET6) {
		const uint8_t *ip = f + 14;

		if (len < 14 + 40 + 8 || (ip[0] >> 4) != 6 || ip[6] != 17 || ip[24] != 0xff)
			return false;
		memcpy(src, ip + 8, 16);
		memcpy(dst, ip + 24, 16);
		udp = ip + 40;
	} else {
		return false;
	}
	if (((uint16_t)udp[2] << 8 | udp[3]) != d->port)
		return false;
	ulen = (size_t)udp[4] << 8 | udp[5];
	if (ulen < 8 || udp + ulen > f + len)
		return true; /* a RoCE datagram to a group, malformed: nobody takes it */
	if (mcast_dev_init(d))
		return true;
	mcast_deliver(d, src, dst, (uint16_t)udp[0] << 8 | udp[1], udp + 8, ulen - 8, false,
		&d->mcast->st.rx_segment);
	return true;
}
