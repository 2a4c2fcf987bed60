/*
 * path.c - a datagram sent to a multicast group (mcast.h): to this
 * device's attached QPs through a delivery queue drained from the event
 * loop, and to the other devices as an Ethernet frame on the VXLAN
 * segment (docs/multicast.md says why the segment carries it).
 */
#include "config.h"
#include "emu/mcast/mcast.h"
#include "emu/eth/eth_int.h"
#include "emu/log.h"
#include "emu/nic/capture.h"
#include "emu/nic/device.h"
#include "emu/nic/udp_port.h"
#include "emu/xport/xport.h"
#include "netstack/icrc.h"
#include "netstack/packet.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static void drain_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
	struct mcast_dev *m = w->data;
	unsigned int todo = m->q_n;

	(void)revents;
	ev_idle_stop(loop, w);
	/* only what is held now: what these deliveries send waits its turn */
	while (todo--) {
		struct mcast_slot *s = &m->q[m->q_head];

		mcast_deliver(m->dev, s->sgid, s->dgid, s->sport, s->pkt, s->len, true, &m->st.rx_local);
		free(s->pkt);
		s->pkt = NULL;
		m->q_head = (m->q_head + 1) % MCAST_QUEUE_SLOTS;
		m->q_n--;
	}
	if (m->q_n)
		ev_idle_start(loop, w);
}

static void enqueue(struct uroce_dev *d, const struct roce_l3 *l3, const uint8_t *pkt, size_t len)
{
	struct mcast_dev *m = d->mcast;
	struct mcast_slot *s;

	if (!m->q) {
		m->q = calloc(MCAST_QUEUE_SLOTS, sizeof(*m->q));
		if (!m->q) {
			m->st.rx_dropped++;
			return;
		}
		ev_idle_init(&m->drain, drain_cb);
		m->drain.data = m;
	}
	if (m->q_n == MCAST_QUEUE_SLOTS) {
		m->st.rx_dropped++;
		return;
	}
	s = &m->q[(m->q_head + m->q_n) % MCAST_QUEUE_SLOTS];
	s->pkt = malloc(len);
	if (!s->pkt) {
		m->st.rx_dropped++;
		return;
	}
	memcpy(s->sgid, l3->src, 16);
	memcpy(s->dgid, l3->dst, 16);
	s->sport = l3->sport;
	s->len = (uint32_t)len;
	memcpy(s->pkt, pkt, len);
	m->q_n++;
	ev_idle_start(d->loop, &m->drain);
}

/* The Ethernet frame of the datagram (RFC 1112 §6.4: 01:00:5e + the low 23
 * bits of the IPv4 group; RFC 2464 §7: 33:33 + the last 4 bytes of the
 * IPv6 group) on the segment. */
static void to_segment(struct uroce_dev *d, const struct roce_l3 *l3, const uint8_t *pkt, size_t len)
{
	static uint8_t frame[14 + 48 + UDP_PORT_TX_MAX];
	struct eth_port *p = d->eth;
	size_t n;

	if (!p || p->fd < 0)
		return;
	if (roce_wrap_ip(frame + 14, sizeof(frame) - 14, l3, pkt, len, &n) != ROCE_OK ||
	    14 + n > ETH_FRAME_MAX || n > p->mtu)
		return;
	if (l3->kind == ROCE_L3_IPV4) {
		frame[0] = 0x01;
		frame[1] = 0x00;
		frame[2] = 0x5e;
		frame[3] = l3->dst[13] & 0x7f;
		frame[4] = l3->dst[14];
		frame[5] = l3->dst[15];
		frame[12] = 0x08;
		frame[13] = 0x00;
	} else {
		frame[0] = frame[1] = 0x33;
		memcpy(frame + 2, l3->dst + 12, 4);
		frame[12] = 0x86;
		frame[13] = 0xdd;
	}
	memcpy(frame + 6, p->mac, 6);
	eth_segment_xmit(p, frame, 14 + n);
	d->mcast->st.tx_segment++;
}

int mcast_xmit(struct uroce_dev *d, const union ibv_gid *me, const uint8_t dgid[16],
	       uint16_t sport, uint8_t tclass, const void *pkt, size_t len)
{
	uint8_t buf[UDP_PORT_TX_MAX];
	struct roce_l3 l3;
	uint32_t crc;
	bool v4 = roce_addr_is_v4mapped(dgid);

	if (v4 != (d->addr.ss_family == AF_INET))
		return EAFNOSUPPORT;
	if (len > sizeof(buf) || len < 16)
		return EMSGSIZE;
	if (mcast_dev_init(d))
		return ENOMEM;
	memset(&l3, 0, sizeof(l3));
	l3.kind = v4 ? ROCE_L3_IPV4 : ROCE_L3_IPV6;
	memcpy(l3.src, me->raw, 16);
	memcpy(l3.dst, dgid, 16);
	l3.sport = sport;
	l3.dport = d->port;
	l3.tclass = tclass;
	memcpy(buf, pkt, len);
	if (roce_icrc_udp(buf, len, &l3, &crc))
		return EINVAL;
	roce_icrc_put(buf + len - 4, crc);
	d->mcast->st.tx++;
	capture_packet(d, &l3, buf, len);
	enqueue(d, &l3, buf, len);
	to_segment(d, &l3, buf, len);
	return 0;
}

void mcast_status(const struct uroce_dev *d, FILE *fp)
{
	const struct mcast_dev *m = d->mcast;
	struct mcast_stats z = { 0 };
	const struct mcast_stats *s = m ? &m->st : &z;

	fprintf(fp,
		"mcast groups=%u attached=%u tx=%llu tx_segment=%llu rx_local=%llu rx_segment=%llu "
		"rx_no_group=%llu rx_dropped=%llu\n",
		m ? m->n_groups : 0, m ? m->n_attach : 0, (unsigned long long)s->tx,
		(unsigned long long)s->tx_segment, (unsigned long long)s->rx_local,
		(unsigned long long)s->rx_segment, (unsigned long long)s->rx_no_group,
		(unsigned long long)s->rx_dropped);
}
