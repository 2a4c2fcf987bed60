/*
 * abi_mcast.h - UD multicast: ATTACH_MCAST, DETACH_MCAST. Part of the
 * provider <-> daemon contract; included by uroce/abi.h after struct
 * uroce_hdr (see there for transport, versioning and the errors common to
 * every opcode). docs/multicast.md describes the model.
 */
#ifndef UROCE_ABI_MCAST_H
#define UROCE_ABI_MCAST_H

#include <stdint.h>

/*
 * ATTACH_MCAST / DETACH_MCAST (ibv_attach_mcast(3), IBTA 10.5; docs/multicast.md).
 *   qp_handle  a UD QP of this client (another type: EINVAL, as the kernel's
 *              ib_attach_mcast)
 *   lid        the MLID as the application gave it; RoCE has no LIDs, so it
 *              is kept for the record only (the kernel checks LIDs on IB
 *              ports only)
 *   gid        the MGID: a multicast GID, ff00::/8 or an IPv4-mapped
 *              ::ffff:224.0.0.0/100 (rdma_is_multicast_addr), else EINVAL
 *   reserved   0 (EINVAL)
 * ATTACH: a QP already attached to the group: 0 (as uverbs); ENOMEM when the
 * device has max_mcast_grp groups and this is a new one, the group has
 * max_mcast_qp_attach QPs, or the device max_total_mcast_qp_attach
 * attachments. DETACH: EINVAL when the QP is not attached to the group.
 * DESTROY_QP of a QP still attached: EBUSY (the kernel's uverbs). Reply:
 * uroce_hdr only.
 */
struct uroce_mcast_req {
	struct uroce_hdr hdr;
	uint32_t qp_handle;
	uint16_t lid;
	uint16_t reserved;
	uint8_t gid[16];
};

#endif
