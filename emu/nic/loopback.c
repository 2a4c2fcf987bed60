/*
 * loopback.c - the device's internal loopback (see loopback.h).
 */
#include "config.h"
#include "emu/nic/loopback.h"
#include "emu/nic/udp_port.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

static int ring_alloc(struct loopback *lb)
{
	unsigned int i;

	lb->ring = calloc(LOOPBACK_SLOTS, sizeof(*lb->ring));
	lb->bytes = malloc((size_t)LOOPBACK_SLOTS * UDP_PORT_TX_MAX);
	if (!lb->ring || !lb->bytes) {
		free(lb->ring);
		free(lb->bytes);
		lb->ring = NULL;
		lb->bytes = NULL;
		return ENOMEM;
	}
	for (i = 0; i < LOOPBACK_SLOTS; i++)
		lb->ring[i].pkt = lb->bytes + (size_t)i * UDP_PORT_TX_MAX;
	lb->head = lb->n = 0;
	return 0;
}

int loopback_take(struct udp_port *u, const void *pkt, size_t len, uint16_t sport, bool verified)
{
	struct loopback *lb = &u->lb;
	struct loopback_slot *s;

	if (lb->off)
		return EPERM;
	if (len > UDP_PORT_TX_MAX)
		return EMSGSIZE;
	if (!lb->ring && ring_alloc(lb))
		return ENOMEM;
	if (lb->spill || lb->n == LOOPBACK_SLOTS) {
		lb->spill = true;
		lb->spilled++;
		return ENOBUFS;
	}
	s = &lb->ring[(lb->head + lb->n) % LOOPBACK_SLOTS];
	s->len = (uint32_t)len;
	s->sport = sport;
	s->verified = verified;
	memcpy(s->pkt, pkt, len);
	lb->n++;
	u->tx_packets++;
	u->tx_bytes += len;
	return 0;
}

/* FROM = U's own address with source port SPORT. */
static void from_self(const struct udp_port *u, struct sockaddr_storage *from, uint16_t sport)
{
	memcpy(from, &u->self, sizeof(*from));
	if (from->ss_family == AF_INET)
		((struct sockaddr_in *)from)->sin_port = htons(sport);
	else
		((struct sockaddr_in6 *)from)->sin6_port = htons(sport);
}

unsigned int loopback_drain(struct udp_port *u, unsigned int max)
{
	struct loopback *lb = &u->lb;
	struct sockaddr_storage from;
	unsigned int todo = lb->n < max ? lb->n : max, done = 0;

	/* only what is held now, as one read of a socket takes what was
	 * queued: answers wait for the next round, so a batch is not a mix of
	 * requests and the responses they caused (an ACK then would write a
	 * message's write-behind run before its last packet came) */
	while (done < todo) {
		/* the slot stays taken while it is delivered: what the
		 * delivery sends to self goes to another one */
		struct loopback_slot *s = &lb->ring[lb->head];

		from_self(u, &from, s->sport);
		u->rx_packets++;
		u->rx_bytes += s->len;
		lb->packets++;
		if (u->rx)
			u->rx(u->rx_ctx, s->pkt, s->len, &from, s->verified);
		lb->head = (lb->head + 1) % LOOPBACK_SLOTS;
		lb->n--;
		done++;
		if ((done % LOOPBACK_BATCH == 0 || done == todo) && u->rx_done)
			u->rx_done(u->rx_ctx);
	}
	return done;
}

void loopback_socket_idle(struct udp_port *u)
{
	if (!u->txq_n)
		u->lb.spill = false;
}

void loopback_fini(struct udp_port *u)
{
	struct loopback *lb = &u->lb;

	free(lb->ring);
	free(lb->bytes);
	lb->ring = NULL;
	lb->bytes = NULL;
	lb->head = lb->n = 0;
	lb->spill = false;
}
