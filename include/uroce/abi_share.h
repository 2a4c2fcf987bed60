/*
 * abi_share.h - shared contexts (ibv_import_device(3), ibv_import_pd(3),
 * ibv_import_mr(3), ibv_import_dm(3)): SHARE_CONTEXT, IMPORT_CONTEXT,
 * IMPORT_OBJ, UNIMPORT_OBJ. Part of the provider <-> daemon contract;
 * included by uroce/abi.h after struct uroce_hdr. docs/provider.md
 * "Shared contexts" describes the model.
 *
 * Over the kernel, a context is its command file: whoever holds the fd
 * (dup, fork, SCM_RIGHTS) reaches its objects by handle. Here the command
 * file is an open file description of /dev/null; each context names its own
 * to the daemon (SHARE_CONTEXT), and a context that imports it sends the fd
 * it was given (IMPORT_CONTEXT): the daemon links the two connections only
 * if both descriptors are the same open file description (kcmp(2)
 * KCMP_FILE), so holding that fd is the only way to another connection's
 * objects, as with uverbs.
 */
#ifndef UROCE_ABI_SHARE_H
#define UROCE_ABI_SHARE_H

#include <stddef.h>
#include <stdint.h>

/* Opcodes (struct uroce_hdr.opcode), beside enum uroce_op of uroce/abi.h. */
enum uroce_share_op {
	UROCE_OP_SHARE_CONTEXT = 37,  /* fds: [cmd_fd] */
	UROCE_OP_IMPORT_CONTEXT = 38, /* fds: [cmd_fd] */
	UROCE_OP_IMPORT_OBJ = 39,     /* reply fds: DM -> [memfd] */
	UROCE_OP_UNIMPORT_OBJ = 44,
	UROCE_OP_OPEN_QP = 33,        /* an XRC target QP by number */
};

/*
 * SHARE_CONTEXT (fds: [the context's cmd_fd]; struct uroce_hdr request,
 * struct uroce_handle_resp reply, handle = this connection's client id).
 * Sent once after HELLO by a context opened with ibv_open_device. The
 * daemon keeps a duplicate of the descriptor. EINVAL: not a character
 * device; EEXIST: this connection already named one, or imported one.
 */

/*
 * IMPORT_CONTEXT (fds: [the cmd_fd given to ibv_import_device]; struct
 * uroce_hdr request, struct uroce_handle_resp reply, handle = the client id
 * of the connection imported). Links this connection (the importer) to the
 * connection that named the same open file description with SHARE_CONTEXT.
 * EINVAL: no such connection (a file no live context named); EEXIST: this
 * connection already named or imported a context; EOPNOTSUPP: the daemon
 * cannot compare files (kcmp(2) unavailable). The importer's own objects
 * stay its own; it reaches the other connection's PDs, MRs and DMs only
 * through IMPORT_OBJ. When the imported connection ends, the daemon ends
 * its importers too (they see IBV_EVENT_DEVICE_FATAL).
 */

/* Object kinds of IMPORT_OBJ / UNIMPORT_OBJ. */
enum uroce_import_type {
	UROCE_IMPORT_PD = 1,
	UROCE_IMPORT_MR = 2,
	UROCE_IMPORT_DM = 3,
	UROCE_IMPORT_QP = 4,  /* a handle OPEN_QP gave (UNIMPORT_OBJ only) */
};

/*
 * IMPORT_OBJ: the object of kind type and handle `handle` of the imported
 * connection becomes reachable from this one under a new handle of this
 * connection (usable wherever that kind of handle is: a PD for CREATE_QP,
 * REG_MR, ...; a DM for REG_DM_MR). EINVAL: not an importer, unknown type,
 * reserved != 0, no such object in the imported connection.
 * Reply: handle (this connection's), lkey/rkey/length (MR), length and
 * map_size (DM, bytes), pdn 0 (reserved). Reply fds: DM -> [its memfd],
 * mapped by the provider as after ALLOC_DM.
 * While imported, the object cannot be destroyed, by either connection
 * (DEALLOC_PD, DEREG_MR, REREG_MR, FREE_DM: EBUSY).
 *
 * UNIMPORT_OBJ: forgets an imported handle of this connection. EINVAL:
 * not a handle IMPORT_OBJ gave (own objects, a handle already unimported,
 * a stale one) or type mismatch.
 * ENOMEM (IMPORT_OBJ, OPEN_QP): the connection holds 65536 such handles.
 */
struct uroce_import_obj_req {
	struct uroce_hdr hdr;
	uint32_t type;      /* enum uroce_import_type */
	uint32_t handle;
};
struct uroce_import_obj_resp {
	struct uroce_hdr hdr;
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t reserved;
	uint64_t length;
	uint64_t map_size;
};

/*
 * OPEN_QP (ibv_open_qp(3)): the XRC_RECV QP number qpn of any connection,
 * if it was created in the domain this connection's XRCD handle
 * xrcd_handle names (the same file, ibv_open_xrcd(3)); reply
 * struct uroce_handle_resp, a QP handle of this connection usable by
 * MODIFY_QP and QUERY_QP and given back by UNIMPORT_OBJ (type
 * UROCE_IMPORT_QP). EINVAL: no such XRCD handle, no XRC_RECV QP of that
 * number in its domain, reserved != 0. While opened, the QP cannot be
 * destroyed by its creator (DESTROY_QP: EBUSY); when the creator's
 * connection ends, the opened handles go stale (EINVAL). Its async events
 * go to the creator only.
 */
struct uroce_open_qp_req {
	struct uroce_hdr hdr;
	uint32_t xrcd_handle;
	uint32_t qpn;
	uint64_t reserved;
};

/* Request size of the opcodes above, else uroce_tm_req_size's answer. */
static inline size_t uroce_share_req_size(unsigned int op)
{
	switch (op) {
	case UROCE_OP_SHARE_CONTEXT:
	case UROCE_OP_IMPORT_CONTEXT: return sizeof(struct uroce_hdr);
	case UROCE_OP_IMPORT_OBJ:
	case UROCE_OP_UNIMPORT_OBJ: return sizeof(struct uroce_import_obj_req);
	case UROCE_OP_OPEN_QP: return sizeof(struct uroce_open_qp_req);
	default: return uroce_tm_req_size(op);
	}
}

/* Reply size of the opcodes above, else uroce_tm_resp_size's answer. */
static inline size_t uroce_share_resp_size(unsigned int op)
{
	switch (op) {
	case UROCE_OP_SHARE_CONTEXT:
	case UROCE_OP_IMPORT_CONTEXT:
	case UROCE_OP_UNIMPORT_OBJ:
	case UROCE_OP_OPEN_QP: return sizeof(struct uroce_handle_resp);
	case UROCE_OP_IMPORT_OBJ: return sizeof(struct uroce_import_obj_resp);
	default: return uroce_tm_resp_size(op);
	}
}

#endif
