/*
 * abi_xrc.h - control messages of XRC domains (included by abi.h).
 *
 * OPEN_XRCD (struct uroce_open_xrcd_req, reply uroce_open_xrcd_resp) opens
 * an XRC domain as ibv_open_xrcd(3) does (IBTA 1.2 Annex A14.2.1; the
 * kernel's ib_uverbs_open_xrcd is the reference for the errors):
 *   fds []        a new XRCD private to this client (ibv_open_xrcd's fd -1);
 *                 oflags is ignored.
 *   fds [file]    the XRCD of that file's inode on this device: every client
 *                 that opens the same inode (st_dev, st_ino) gets the same
 *                 XRCD (the same xrcdn). None yet: created if oflags has
 *                 O_CREAT, else EAGAIN. One exists and oflags has O_EXCL:
 *                 EINVAL. Other oflags bits are ignored. The daemon keeps a
 *                 copy of the descriptor while the XRCD lives, so the inode
 *                 cannot be reused under it.
 *   oflags        open(2) flags (O_CREAT, O_EXCL as in <fcntl.h>).
 *   reserved      must be 0 (EINVAL).
 *   Reply: handle (this client's handle of the XRCD), xrcdn (device-wide
 *   number, the same for every client sharing the XRCD). ENOMEM: the
 *   device has UROCE_MAX_XRCD domains, or the client UROCE_MAX_XRCD
 *   handles.
 * CLOSE_XRCD (struct uroce_handle_req / uroce_handle_resp): drop this
 *   client's handle; the XRCD itself goes when its last handle does
 *   (handles of other clients keep it). EINVAL for a bad handle; EBUSY
 *   while an XRC SRQ or XRC_RECV QP of this client was created with it.
 * A client that disconnects closes all its handles.
 *
 * CREATE_XRC_SRQ (struct uroce_create_xrc_srq_req, reply
 *   uroce_create_srq_resp; fds [SRQ ring memfd] as CREATE_SRQ): an XRC SRQ
 *   (ibv_create_srq_ex(3) IBV_SRQT_XRC) of the domain of xrcd_handle, its
 *   WQEs' memory in pd_handle, its receive completions on cq_handle (as
 *   mlx5: the SRQ's CQ, not the receiving QP's). srqn is what
 *   ibv_get_srq_num(3) gives and what XRC senders put in the XRCETH.
 *   max_wr / max_sge and their errors as CREATE_SRQ; EINVAL for a bad
 *   handle or reserved != 0. Destroyed with DESTROY_SRQ.
 * CREATE_XRC_QP (struct uroce_create_xrc_qp_req, reply
 *   uroce_create_qp_resp with cap all 0; no fds): an IBV_QPT_XRC_RECV QP of
 *   the domain of xrcd_handle: no PD, CQs, send or receive queue; each
 *   request's XRCETH names the XRC SRQ of that domain that receives it
 *   (docs/xrc.md). Modified, queried and destroyed as other QPs.
 *   EINVAL for a bad handle or reserved != 0; ENOMEM as CREATE_QP.
 * IBV_QPT_XRC_SEND QPs come from CREATE_QP: a PD and a send CQ (the
 *   receive CQ handle may be that CQ's too), no SRQ, max_recv_wr and
 *   max_recv_sge 0; each send WQE's remote_qpn carries the remote SRQ
 *   number (abi_ring.h).
 */
#ifndef UROCE_ABI_XRC_H
#define UROCE_ABI_XRC_H

#include <stdint.h>

/* Most XRC domains per device and XRCD handles per client. */
#define UROCE_MAX_XRCD 1024u

struct uroce_open_xrcd_req {
	struct uroce_hdr hdr;
	uint32_t oflags;
	uint32_t reserved;
};

struct uroce_open_xrcd_resp {
	struct uroce_hdr hdr;
	uint32_t handle;
	uint32_t xrcdn;
};

struct uroce_create_xrc_srq_req {
	struct uroce_hdr hdr;
	uint64_t user_handle;
	uint32_t xrcd_handle;
	uint32_t cq_handle;
	uint32_t pd_handle;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t reserved;
};

struct uroce_create_xrc_qp_req {
	struct uroce_hdr hdr;
	uint64_t user_handle;
	uint32_t xrcd_handle;
	uint32_t reserved;
};

#endif /* UROCE_ABI_XRC_H */
