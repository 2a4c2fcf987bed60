/*
 * udp_sport.h - the RoCEv2 UDP source-port conventions.
 *
 * Linux include/rdma/ib_verbs.h: "All RoCE V2 drivers should use this same
 * convention" (rdma_flow_label_to_udp_sport, rdma_calc_flow_label,
 * rdma_get_udp_sport), used by mlx5 and current rxe at modify_qp with a
 * path; and rxe's create-time hash kept by UD QPs.  docs/wire-format.md §1.7.
 * Re-implemented from the formulas; no code copied.
 */
#ifndef UROCE_NETSTACK_UDP_SPORT_H
#define UROCE_NETSTACK_UDP_SPORT_H

#include <stdint.h>

/* 0xC000 | ((fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14)): a port in 0xC000..0xFFFF.
 * FL is a 20-bit IPv6 flow label (higher bits ignored). */
uint16_t roce_flow_label_to_udp_sport(uint32_t fl);

/* Flow label for a QP pair when none is configured: v = lqpn * rqpn (64-bit),
 * v ^= v >> 20, v ^= v >> 40, fl = v & 0xFFFFF.  Symmetric in the QPNs, so
 * both ends choose the same port.  Example: (0x11, 0x22) -> 0x242. */
uint32_t roce_calc_flow_label(uint32_t lqpn, uint32_t rqpn);

/* Source port of an RC/UC QP: from FL if non-zero, else from
 * roce_calc_flow_label(lqpn, rqpn).  Example: (0, 0x11, 0x22) -> 0xC242. */
uint16_t roce_get_udp_sport(uint32_t fl, uint32_t lqpn, uint32_t rqpn);

/* rxe's create-time port (UD QPs): 0xC000 + ((qpn * 0x61C88647) mod 2^32 >> 18).
 * Example: qpn 17 -> 0xDF94. */
uint16_t roce_qpn_udp_sport(uint32_t qpn);

#endif /* UROCE_NETSTACK_UDP_SPORT_H */
