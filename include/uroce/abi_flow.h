/*
 * abi_flow.h - CREATE_FLOW / DESTROY_FLOW: flow steering rules of raw packet
 * QPs (ibv_create_flow(3)). Part of the provider <-> daemon contract;
 * included by uroce/abi.h (see there for transport and versioning).
 *
 * What the rules do with frames is in docs/raw-packet.md ("Steering").
 */
#ifndef UROCE_ABI_FLOW_H
#define UROCE_ABI_FLOW_H

#include <stdint.h>

/* Bytes of specs one CREATE_FLOW carries (the whole request stays below
 * UROCE_MSG_MAX); more → the provider answers EINVAL. */
#define UROCE_FLOW_SPECS_MAX 896

/*
 * CREATE_FLOW: a steering rule for a raw packet QP (ibv_create_flow(3)).
 *   qp_handle     a RAW_PACKET QP of this client (EINVAL otherwise: any other
 *                 QP type, as mlx5 steers only raw packet QPs here)
 *   type          enum ibv_flow_attr_type: NORMAL, ALL_DEFAULT, MC_DEFAULT,
 *                 SNIFFER (EINVAL for other values)
 *   priority      ibv_flow_attr.priority: a lower value wins (0 = highest)
 *   port          1 (EINVAL otherwise)
 *   num_of_specs  number of specs in specs[]
 *   flags         ibv_flow_attr.flags: 0 or IBV_FLOW_ATTR_FLAGS_DONT_TRAP
 *                 (EINVAL for unknown bits; EOPNOTSUPP for EGRESS)
 *   specs_len     bytes used in specs[] (<= UROCE_FLOW_SPECS_MAX)
 *   specs         the specs back to back, each as <infiniband/verbs.h>
 *                 lays it out (struct ibv_flow_spec_eth, _ipv4, _ipv4_ext,
 *                 _ipv6, _tcp_udp, _action_tag, _action_drop), starting with
 *                 its type (enum ibv_flow_spec_type, 4 bytes) and size
 *                 (uint16_t, the spec's bytes). Values are in network order
 *                 where the frame has them (MACs, ether_type, vlan_tag, IPs,
 *                 ports), as verbs gives them.
 * Errors also: EINVAL (a spec's size does not match its type or runs past
 * specs_len; specs after the first L2/L3/L4 of a kind; NORMAL without
 * specs is allowed and matches everything), EOPNOTSUPP (a spec type uroce
 * does not match on: ESP, VXLAN_TUNNEL, GRE, MPLS, INNER, ACTION_HANDLE,
 * ACTION_COUNT, unknown), ENOMEM (UROCE_FLOWS_MAX rules on the device).
 * Reply: handle (of this client, for DESTROY_FLOW).
 * DESTROY_FLOW: struct uroce_handle_req / uroce_handle_resp; EINVAL for a
 * handle that is not one of this client's rules. A QP with rules cannot be
 * destroyed: DESTROY_QP answers EBUSY (the kernel's uverbs keeps a use count
 * of the QP per rule).
 */
struct uroce_create_flow_req {
	struct uroce_hdr hdr;
	uint32_t qp_handle;
	uint32_t type;
	uint16_t priority;
	uint8_t port;
	uint8_t num_of_specs;
	uint32_t flags;
	uint32_t specs_len;
	uint32_t reserved;
	uint8_t specs[UROCE_FLOW_SPECS_MAX];
};
struct uroce_create_flow_resp {
	struct uroce_hdr hdr;
	uint32_t handle;
	uint32_t reserved;
};

/*
 * Receive CQEs of raw packet QPs (docs/cqe-format.md §6). A frame taken by
 * a rule with a FLOW_TAG action carries the tag where mlx5 reads it, in
 * sop_drop_qpn bits 23:0; the QP is then named in srqn_uidx: bit 31
 * (UROCE_CQE_UIDX_QP) set, the QPN in bits 23:0 (mlx5's CQE version 1
 * names the QP by a user index in the same field). Without a tag,
 * srqn_uidx is 0 and sop_drop_qpn holds the QPN as in every other CQE.
 */
#define UROCE_CQE_UIDX_QP 0x80000000u

#endif /* UROCE_ABI_FLOW_H */
