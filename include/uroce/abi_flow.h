/*
 * abi_flow.h - CREATE_FLOW / DESTROY_FLOW: flow steering rules of raw packet
 * QPs (ibv_create_flow(3)). Part of the provider <-> daemon contract;
 * included by uroce/abi.h (see there for transport and versioning).
 *
 * What the rules do with frames is in docs/raw-packet.md ("Steering").
 */
#ifndef UROCE_ABI_FLOW_H
#define UROCE_ABI_FLOW_H

#include <stddef.h>
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
 *                 _ipv6, _tcp_udp, _action_tag, _action_drop,
 *                 _counter_action), starting with
 *                 its type (enum ibv_flow_spec_type, 4 bytes) and size
 *                 (uint16_t, the spec's bytes). Values are in network order
 *                 where the frame has them (MACs, ether_type, vlan_tag, IPs,
 *                 ports), as verbs gives them.
 * Errors also: EINVAL (a spec's size does not match its type or runs past
 * specs_len; specs after the first L2/L3/L4 of a kind; NORMAL without
 * specs is allowed and matches everything), EOPNOTSUPP (a spec type uroce
 * does not match on: ESP, VXLAN_TUNNEL, GRE, MPLS, INNER, ACTION_HANDLE,
 * unknown), ENOMEM (4096 rules on the device). ACTION_COUNT: see
 * "Flow counters" below (EINVAL for a handle that names none of this
 * client's counters).
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

/*
 * Receive work queues (ibv_create_wq(3), IBV_WQT_RQ), receive WQ indirection
 * tables (ibv_create_rwq_ind_table(3)) and RSS QPs (ibv_create_qp_ex(3)
 * with rx_hash_conf): docs/raw-packet.md "RSS".
 *
 * CREATE_WQ: fds [ring memfd]: a QP ring (abi_ring.h) of
 * uroce_qp_ring_layout() for the caps {max_send_wr 1, max_send_sge 1,
 * max_recv_wr, max_recv_sge} rounded by uroce_qp_caps_round(); its SQ is
 * never read, its RQ is posted as a QP's (ibv_post_wq_recv).
 *   user_handle  struct ibv_wq *; pd_handle, cq_handle: this client's
 *   max_wr 1..max_qp_wr, max_sge 1..max_sge (EINVAL otherwise)
 *   create_flags UROCE_WQ_FLAGS bits (IBV_WQ_FLAGS_PCI_WRITE_END_PADDING:
 *                EOPNOTSUPP; unknown bits: EINVAL)
 *   log_num_strides  0: an ordinary RQ. Else a striding (multi-packet) RQ
 *                (urocedv_create_wq, urocedv(3)): each WQE is one SGE split
 *                into 2^log_num_strides strides of 2^log_stride_bytes
 *                bytes, within UROCE_STRIDING_* (EINVAL otherwise), and
 *                max_sge must be 1; two_byte_shift 0 or 1 (two zero bytes
 *                before each packet, as mlx5's two_byte_shift_en)
 * Reply: handle, wq_num (from the QPN space: CQEs of the WQ carry it where
 * a QP's carry its QPN), the rounded max_wr / max_sge. The WQ starts in
 * IBV_WQS_RESET.
 * MODIFY_WQ: handle, attr_mask (IBV_WQ_ATTR_STATE | IBV_WQ_ATTR_CURR_STATE |
 * IBV_WQ_ATTR_FLAGS), wq_state / curr_wq_state (RESET, RDY, ERR: any move
 * among them; curr_wq_state not the current: EINVAL), flags / flags_mask
 * (IBV_WQ_ATTR_FLAGS: the bits of flags_mask take their value from flags;
 * flags_mask bits outside UROCE_WQ_FLAGS: PCI_WRITE_END_PADDING EOPNOTSUPP,
 * others EINVAL). Reply: the state and the flags after.
 * DESTROY_WQ: uroce_handle_req; EBUSY while an indirection table holds it.
 * CREATE_RWQ_IND_TABLE: log_size 0..UROCE_IND_TABLE_LOG_MAX, wq_handles:
 * 2^log_size WQ handles of this client (EINVAL). Reply: handle, ind_tbl_num.
 * DESTROY_RWQ_IND_TABLE: uroce_handle_req; EBUSY while an RSS QP uses it.
 * CREATE_RSS_QP: a RAW_PACKET QP that only receives, spreading frames over
 * the WQs of an indirection table: user_handle, pd_handle, ind_table
 * handle, hash_function IBV_RX_HASH_FUNC_TOEPLITZ (EINVAL otherwise),
 * key_len 1..UROCE_RSS_KEY_MAX bytes of key, fields_mask IBV_RX_HASH_*
 * (SRC/DST IPV4, IPV6, PORT_TCP, PORT_UDP; IPSEC_SPI and INNER:
 * EOPNOTSUPP). Reply: uroce_create_qp_resp (cap all 0). Steering rules
 * attach to it as to any raw QP.
 */
#define UROCE_IND_TABLE_LOG_MAX 7
#define UROCE_RSS_KEY_MAX 128
/* The WQ flags uroce implements (docs/raw-packet.md §5). */
#define UROCE_WQ_FLAGS (IBV_WQ_FLAGS_CVLAN_STRIPPING | IBV_WQ_FLAGS_SCATTER_FCS | IBV_WQ_FLAGS_DELAY_DROP)
/* Striding RQ limits, log2: a stride of 64 B..8 KiB, 8..65536 strides per
 * WQE (mlx5's striding_rq_caps on a ConnectX-5 with the extended minimum:
 * kernel mlx5_ib MLX5_MIN/MAX_SINGLE_STRIDE_LOG_NUM_BYTES 6/13,
 * MLX5_EXT_MIN_SINGLE_WQE_LOG_NUM_STRIDES 3, MLX5_MAX_SINGLE_WQE_LOG_NUM_STRIDES 16),
 * and a WQE of at most 2^UROCE_STRIDING_LOG_WQE_BYTES_MAX bytes. */
#define UROCE_STRIDING_LOG_STRIDE_MIN 6
#define UROCE_STRIDING_LOG_STRIDE_MAX 13
#define UROCE_STRIDING_LOG_NUM_MIN 3
#define UROCE_STRIDING_LOG_NUM_MAX 16
#define UROCE_STRIDING_LOG_WQE_BYTES_MAX 24
struct uroce_create_wq_req {
	struct uroce_hdr hdr;
	uint64_t user_handle;
	uint32_t pd_handle;
	uint32_t cq_handle;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t create_flags;
	uint32_t log_stride_bytes;
	uint32_t log_num_strides;
	uint32_t two_byte_shift;
};
struct uroce_create_wq_resp {
	struct uroce_hdr hdr;
	uint32_t handle;
	uint32_t wq_num;
	uint32_t max_wr;
	uint32_t max_sge;
};
struct uroce_modify_wq_req {
	struct uroce_hdr hdr;
	uint32_t handle;
	uint32_t attr_mask;
	uint32_t wq_state;
	uint32_t curr_wq_state;
	uint32_t flags;
	uint32_t flags_mask;
};
struct uroce_modify_wq_resp {
	struct uroce_hdr hdr;
	uint32_t wq_state;
	uint32_t flags;
};
struct uroce_create_ind_table_req {
	struct uroce_hdr hdr;
	uint32_t log_size;
	uint32_t reserved;
	uint32_t wq_handles[1u << UROCE_IND_TABLE_LOG_MAX];
};
struct uroce_create_ind_table_resp {
	struct uroce_hdr hdr;
	uint32_t handle;
	uint32_t ind_tbl_num;
};
struct uroce_create_rss_qp_req {
	struct uroce_hdr hdr;
	uint64_t user_handle;
	uint32_t pd_handle;
	uint32_t ind_table_handle;
	uint64_t fields_mask;
	uint32_t hash_function;
	uint32_t key_len;
	uint8_t key[UROCE_RSS_KEY_MAX];
};

/*
 * Flow counters (ibv_create_counters(3), the COUNT action of a rule).
 * CREATE_COUNTERS: uroce_hdr only; reply uroce_handle_resp (a counters
 * object of this client: packets and bytes of the frames the rules naming
 * it took, DROP rules included; ENOMEM past UROCE_COUNTERS_MAX per device).
 * DESTROY_COUNTERS: uroce_handle_req; EBUSY while a rule names it.
 * READ_COUNTERS: uroce_handle_req; reply packets and bytes (frame bytes,
 * Ethernet header to the end, no FCS).
 * A rule names counters by an IBV_FLOW_SPEC_ACTION_COUNT spec (struct
 * ibv_flow_spec_counter_action) whose `counters` pointer field carries the
 * daemon's handle instead (the provider rewrites it).
 */
#define UROCE_COUNTERS_MAX 4096
struct uroce_read_counters_resp {
	struct uroce_hdr hdr;
	uint64_t packets;
	uint64_t bytes;
};

/* Request / reply sizes of the opcodes above (uroce_req_size and
 * uroce_resp_size answer through these); 0 for other opcodes. */
static inline size_t uroce_flow_req_size(unsigned int op)
{
	switch (op) {
	case UROCE_OP_CREATE_FLOW: return sizeof(struct uroce_create_flow_req);
	case UROCE_OP_CREATE_WQ: return sizeof(struct uroce_create_wq_req);
	case UROCE_OP_MODIFY_WQ: return sizeof(struct uroce_modify_wq_req);
	case UROCE_OP_CREATE_RWQ_IND_TABLE: return sizeof(struct uroce_create_ind_table_req);
	case UROCE_OP_CREATE_RSS_QP: return sizeof(struct uroce_create_rss_qp_req);
	case UROCE_OP_CREATE_COUNTERS: return sizeof(struct uroce_hdr);
	case UROCE_OP_DESTROY_FLOW:
	case UROCE_OP_DESTROY_WQ:
	case UROCE_OP_DESTROY_COUNTERS:
	case UROCE_OP_READ_COUNTERS:
	case UROCE_OP_DESTROY_RWQ_IND_TABLE: return sizeof(struct uroce_handle_req);
	default: return 0;
	}
}
static inline size_t uroce_flow_resp_size(unsigned int op)
{
	switch (op) {
	case UROCE_OP_CREATE_FLOW: return sizeof(struct uroce_create_flow_resp);
	case UROCE_OP_CREATE_WQ: return sizeof(struct uroce_create_wq_resp);
	case UROCE_OP_MODIFY_WQ: return sizeof(struct uroce_modify_wq_resp);
	case UROCE_OP_CREATE_RWQ_IND_TABLE: return sizeof(struct uroce_create_ind_table_resp);
	case UROCE_OP_CREATE_RSS_QP: return sizeof(struct uroce_create_qp_resp);
	case UROCE_OP_READ_COUNTERS: return sizeof(struct uroce_read_counters_resp);
	case UROCE_OP_CREATE_COUNTERS:
	case UROCE_OP_DESTROY_FLOW:
	case UROCE_OP_DESTROY_WQ:
	case UROCE_OP_DESTROY_COUNTERS:
	case UROCE_OP_DESTROY_RWQ_IND_TABLE: return sizeof(struct uroce_handle_resp);
	default: return 0;
	}
}
_Static_assert(sizeof(struct uroce_create_flow_req) <= UROCE_MSG_MAX, "CREATE_FLOW fits");
_Static_assert(sizeof(struct uroce_create_ind_table_req) <= UROCE_MSG_MAX, "CREATE_RWQ_IND_TABLE fits");

#endif /* UROCE_ABI_FLOW_H */
