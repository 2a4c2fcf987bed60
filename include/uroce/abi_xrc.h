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
 *   (handles of other clients keep it). EINVAL for a bad handle.
 * A client that disconnects closes all its handles.
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

#endif /* UROCE_ABI_XRC_H */
