/*
 * udp_sport.c - RoCEv2 UDP source ports: the flow-label convention every
 * RoCEv2 driver follows and rxe's per-QP hash (docs/wire-format.md §1.7).
 */
#include "netstack/udp_sport.h"

uint16_t roce_flow_label_to_udp_sport(uint32_t fl)
{
	uint32_t lo = fl & 0x3FFF;
	uint32_t hi = (fl & 0xFC000) >> 14;

	return (uint16_t)(0xC000 | (lo ^ hi));
}

uint32_t roce_calc_flow_label(uint32_t lqpn, uint32_t rqpn)
{
	uint64_t v = (uint64_t)lqpn * rqpn;

	v ^= v >> 20;
	v ^= v >> 40;
	return (uint32_t)(v & 0xFFFFF);
}

uint16_t roce_get_udp_sport(uint32_t fl, uint32_t lqpn, uint32_t rqpn)
{
	if (!fl)
		fl = roce_calc_flow_label(lqpn, rqpn);
	return roce_flow_label_to_udp_sport(fl);
}

uint16_t roce_qpn_udp_sport(uint32_t qpn)
{
	/* Linux hash_32(qpn, 14): multiplicative hash, top 14 bits. */
	return (uint16_t)(0xC000 + ((uint32_t)(qpn * 0x61C88647u) >> 18));
}
