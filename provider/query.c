/*
 * query.c - device, port and clock queries.
 *
 * Device attributes come from the daemon's HELLO reply (fixed for the life
 * of the device), the port state from a QUERY_PORT round trip (it changes
 * with `uroce link set ... down|up`), and the HCA clock from the shared
 * clock page, read locally (abi.h "HCA clock page").
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "uroce.h"

/*
 * On-demand paging (odp.c): every MR is reached at access time and pinned
 * never, so ODP is what the daemon does anyway. Explicit and implicit ODP
 * MRs; per transport the operations the engine executes (XRC as RC).
 */
static void uroce_odp_caps(struct ibv_device_attr_ex *a)
{
	a->odp_caps.general_caps = IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT;
	a->odp_caps.per_transport_caps.rc_odp_caps = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC |
		IBV_ODP_SUPPORT_SRQ_RECV;
	a->odp_caps.per_transport_caps.uc_odp_caps = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_SRQ_RECV;
	a->odp_caps.per_transport_caps.ud_odp_caps = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		IBV_ODP_SUPPORT_SRQ_RECV;
	/* XRC (docs/xrc.md): an XRC_SEND QP's requests, an XRC target's
	 * responses and its SRQs' receives reach ODP MRs as RC's do; no RECV
	 * bit, an XRC QP has no receive queue of its own */
	a->xrc_odp_caps = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
		IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;
}

/*
 * ibv_query_device_ex / ibv_query_device (libibverbs calls this op with
 * input NULL and attr_size = sizeof(struct ibv_device_attr) for the legacy
 * call). Fills min(attr_size, sizeof(*attr)) bytes.
 * Errors: EINVAL for input->comp_mask != 0 or attr_size smaller than the
 * legacy struct.
 */
int uroce_query_device_ex(struct ibv_context *context,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct uroce_context *ctx = to_uctx(context);
	struct ibv_device_attr_ex a;

	if (input && input->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(struct ibv_device_attr))
		return EINVAL;

	memset(&a, 0, sizeof(a));
	a.orig_attr = ctx->hello.dev;
	a.orig_attr.phys_port_cnt = 1;
	/* Raw HCA cycles (CQE timestamps, RAW_CLOCK) run at freq_khz over `bits`
	 * bits: the clock page is the authority, the HELLO copy a fallback. */
	a.completion_timestamp_mask = ctx->clock->mask ? ctx->clock->mask : ctx->hello.timestamp_mask;
	a.hca_core_clock = ctx->clock->freq_khz ? ctx->clock->freq_khz : ctx->hello.hca_core_clock_khz;
	/* raw packet QPs: IBV_SEND_IP_CSUM and the CQE's checksum bits, as mlx5
	 * reports them (IB_DEVICE_RAW_IP_CSUM, IB_RAW_PACKET_CAP_IP_CSUM) */
	a.orig_attr.device_cap_flags |= IBV_DEVICE_RAW_IP_CSUM;
	/* XRC domains, SRQs and QPs (docs/xrc.md), as mlx5's IB_DEVICE_XRC */
	a.orig_attr.device_cap_flags |= IBV_DEVICE_XRC;
	a.device_cap_flags_ex = a.orig_attr.device_cap_flags;
	a.raw_packet_caps = IBV_RAW_PACKET_CAP_IP_CSUM;
	/* the WQ flags (docs/raw-packet.md §5): CVLAN stripping, FCS scatter
	 * (also IB_DEVICE_RAW_SCATTER_FCS, as mlx5), delay drop */
	a.raw_packet_caps |= IBV_RAW_PACKET_CAP_CVLAN_STRIPPING | IBV_RAW_PACKET_CAP_SCATTER_FCS |
			     IBV_RAW_PACKET_CAP_DELAY_DROP;
	a.device_cap_flags_ex |= IBV_DEVICE_RAW_SCATTER_FCS;
	/* IBTA 1.5: ATOMIC WRITE and FLUSH to global visibility, by value
	 * (IB_UVERBS_DEVICE_FLUSH_GLOBAL 1 << 38, IB_UVERBS_DEVICE_ATOMIC_WRITE
	 * 1 << 40, rdma/ib_user_verbs.h); no persistent memory, so no
	 * FLUSH_PERSISTENT (1 << 39) */
	a.device_cap_flags_ex |= 1ull << 38 | 1ull << 40;
	/* TSO on raw packet QPs (docs/raw-packet.md §3), mlx5's values */
	a.tso_caps.max_tso = UROCE_MAX_TSO;
	a.tso_caps.supported_qpts = 1u << IBV_QPT_RAW_PACKET;
	uroce_odp_caps(&a);
	a.phys_port_cnt_ex = 1;
	a.cq_mod_caps.max_cq_count = UROCE_CQ_MOD_MAX_COUNT;
	a.cq_mod_caps.max_cq_period = UROCE_CQ_MOD_MAX_PERIOD_US;
	/* device memory (dm.c): the daemon's MEMIC-like pool, bytes */
	a.max_dm_size = UROCE_DM_MAX_SIZE;
	/* tag matching (tm.c, docs/tag-matching.md): a ConnectX-5's values,
	 * uroce/abi_tm.h */
	a.tm_caps.max_rndv_hdr_size = UROCE_TM_MAX_RNDV_HDR;
	a.tm_caps.max_num_tags = UROCE_TM_MAX_NUM_TAGS;
	a.tm_caps.flags = IBV_TM_CAP_RC;
	a.tm_caps.max_ops = UROCE_TM_MAX_OPS;
	a.tm_caps.max_sge = UROCE_TM_MAX_SGE;
	memcpy(attr, &a, attr_size < sizeof(a) ? attr_size : sizeof(a));
	return 0;
}

/*
 * ibv_query_port. Errors: EINVAL for port_num != 1; EIO when the
 * daemon is gone. gid_tbl_len is the number of GID files in sysfs, which is
 * what ibv_query_gid can read (docs/provider-abi.md §2).
 */
int uroce_query_port(struct ibv_context *context, uint8_t port_num,
		     struct ibv_port_attr *port_attr)
{
	struct uroce_context *ctx = to_uctx(context);
	struct uroce_query_port_req req = { .port_num = port_num };
	struct uroce_query_port_resp resp;
	int ret;

	if (port_num != 1)
		return EINVAL;
	ret = uroce_ctl_call(ctx, UROCE_OP_QUERY_PORT, &req, sizeof(req), NULL, 0,
			     &resp, sizeof(resp), NULL, NULL);
	if (ret)
		return ret;
	*port_attr = resp.port;
	port_attr->gid_tbl_len = (int)ctx->gid_tbl_len;
	port_attr->link_layer = IBV_LINK_LAYER_ETHERNET;
	return 0;
}

/*
 * ibv_query_rt_values_ex. IBV_VALUES_MASK_RAW_CLOCK: tv_sec 0, tv_nsec = raw
 * HCA cycles, as mlx5 (the same counter the CQE timestamps carry). On return
 * comp_mask holds the values filled in. Errors: EINVAL for unknown bits.
 */
int uroce_query_rt_values(struct ibv_context *context, struct ibv_values_ex *values)
{
	struct uroce_context *ctx = to_uctx(context);
	uint32_t filled = 0;

	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = (long)uroce_clock_now(ctx->clock);
		filled |= IBV_VALUES_MASK_RAW_CLOCK;
	}
	values->comp_mask = filled;
	return 0;
}
