/*
 * ops.h - the control-message handlers that create and destroy a client's
 * objects (obj_*.c, hello.c, query_port.c, admin.c; the contract is in
 * emu/obj/objects.h) and the destructors both the handlers and client
 * cleanup use.
 */
#ifndef UROCE_EMU_CTL_OPS_H
#define UROCE_EMU_CTL_OPS_H

#include <stdint.h>
#include "emu/obj/objects.h"

int op_hello(struct ctl_client *c, struct ctl_call *call);
/* What HELLO and CM_HELLO (uroce/abi_cm.h) both check, in this order:
 * ABI_VERSION is UROCE_ABI_VERSION (else EPROTONOSUPPORT), RESERVED is 0
 * (EINVAL), PID is the peer's SO_PEERCRED pid (EPERM). 0 if all hold. */
int hello_check_identity(const struct ctl_client *c, uint32_t abi_version, uint64_t reserved, uint32_t pid);
int op_query_port(struct ctl_client *c, struct ctl_call *call);
int op_alloc_pd(struct ctl_client *c, struct ctl_call *call);
int op_dealloc_pd(struct ctl_client *c, struct ctl_call *call);
int op_reg_mr(struct ctl_client *c, struct ctl_call *call);
int op_dereg_mr(struct ctl_client *c, struct ctl_call *call);
int op_alloc_mw(struct ctl_client *c, struct ctl_call *call);
int op_dealloc_mw(struct ctl_client *c, struct ctl_call *call);
int op_rereg_mr(struct ctl_client *c, struct ctl_call *call);
int op_advise_mr(struct ctl_client *c, struct ctl_call *call);
int op_alloc_dm(struct ctl_client *c, struct ctl_call *call);
int op_free_dm(struct ctl_client *c, struct ctl_call *call);
int op_reg_dm_mr(struct ctl_client *c, struct ctl_call *call);
int op_create_cq(struct ctl_client *c, struct ctl_call *call);
int op_destroy_cq(struct ctl_client *c, struct ctl_call *call);
int op_resize_cq(struct ctl_client *c, struct ctl_call *call);
int op_modify_cq(struct ctl_client *c, struct ctl_call *call);
int op_create_qp(struct ctl_client *c, struct ctl_call *call);
int op_modify_qp(struct ctl_client *c, struct ctl_call *call);
int op_query_qp(struct ctl_client *c, struct ctl_call *call);
int op_destroy_qp(struct ctl_client *c, struct ctl_call *call);
int op_create_srq(struct ctl_client *c, struct ctl_call *call);
int op_modify_srq(struct ctl_client *c, struct ctl_call *call);
int op_query_srq(struct ctl_client *c, struct ctl_call *call);
int op_destroy_srq(struct ctl_client *c, struct ctl_call *call);
int op_open_xrcd(struct ctl_client *c, struct ctl_call *call);
int op_close_xrcd(struct ctl_client *c, struct ctl_call *call);
int op_create_ah(struct ctl_client *c, struct ctl_call *call);
int op_destroy_ah(struct ctl_client *c, struct ctl_call *call);
int op_admin_status(struct ctl_client *c, struct ctl_call *call);
int op_admin_link(struct ctl_client *c, struct ctl_call *call);
int op_admin_capture_start(struct ctl_client *c, struct ctl_call *call);
int op_admin_capture_stop(struct ctl_client *c, struct ctl_call *call);
int op_admin_shutdown(struct ctl_client *c, struct ctl_call *call);
int op_admin_fault(struct ctl_client *c, struct ctl_call *call);

/* Destructors: free the object, release its keys/numbers and its
 * references; the caller has checked it is unused where that matters. */
void pd_free(struct ctl_client *c, struct ctl_pd *pd);
void mr_free(struct ctl_client *c, struct ctl_mr *mr);
void mw_free(struct ctl_client *c, struct ctl_mw *mw);
void dm_free(struct ctl_client *c, struct ctl_dm *dm);
void cq_free(struct ctl_client *c, struct ctl_cq *cq);
void qp_free(struct ctl_client *c, struct ctl_qp *qp);
void ah_free(struct ctl_client *c, struct ctl_ah *ah);
void srq_free(struct ctl_client *c, struct ctl_srq *srq);

/* A new QP object of C (obj_qp.c): zeroed but for its QPN (from the
 * device's QPN space), its handle in C's table, its owner and, when FD >=
 * 0, the QP ring of FD mapped (RING_SIZE bytes, map_client_ring's checks).
 * Returns 0, ENOMEM, EBADF or EINVAL. qp_obj_drop undoes it (the caller's
 * engine or raw state failed to come up). */
int qp_obj_new(struct ctl_client *c, int fd, uint64_t ring_size, struct ctl_qp **out);
void qp_obj_drop(struct ctl_client *c, struct ctl_qp *qp);

void xrcd_free(struct ctl_client *c, struct ctl_xrcd *x);
/* CREATE_XRC_SRQ, CREATE_XRC_QP (obj_xrc.c, abi_xrc.h). */
int op_create_xrc_srq(struct ctl_client *c, struct ctl_call *call);
int op_create_xrc_qp(struct ctl_client *c, struct ctl_call *call);
/* CREATE_TM_SRQ, TM_OP (obj_tm.c, abi_tm.h). */
int op_create_tm_srq(struct ctl_client *c, struct ctl_call *call);
int op_tm_op(struct ctl_client *c, struct ctl_call *call);
/* The SRQ part of CREATE_SRQ (obj_srq.c): a basic SRQ on PD with REQ's
 * sizes and the ring in CALL's descriptor, in the client's table. */
int srq_new(struct ctl_client *c, struct ctl_call *call, struct ctl_pd *pd,
	    const struct uroce_create_srq_req *req, struct ctl_srq **out);
/* srq_new of MAX_WR x MAX_SGE on PD whose completions go to CQ (held:
 * srq_free lets it go): the SRQ part of CREATE_XRC_SRQ and CREATE_TM_SRQ. */
int srq_new_on_cq(struct ctl_client *c, struct ctl_call *call, struct ctl_pd *pd, struct ctl_cq *cq,
		  uint64_t user_handle, uint32_t max_wr, uint32_t max_sge, struct ctl_srq **out);

/* Map a client-supplied ring memfd (regular file, sealed F_SEAL_SHRINK, at
 * least SIZE bytes) read-write shared. Returns the mapping, or NULL with *err
 * EBADF (wrong kind of file / not sealed) or EINVAL (too small). */
void *map_client_ring(int fd, uint64_t size, int *err);

#endif
