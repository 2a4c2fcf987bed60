/*
 * share.h - shared contexts and opened XRC target QPs (obj_share.c): the
 * control-message handlers of uroce/abi_share.h (handler contract as in
 * objects.h) and what client_destroy calls when a connection ends.
 */
#ifndef UROCE_EMU_CTL_SHARE_H
#define UROCE_EMU_CTL_SHARE_H

struct ctl_client;
struct ctl_call;

int op_share_context(struct ctl_client *c, struct ctl_call *call);
int op_import_context(struct ctl_client *c, struct ctl_call *call);
int op_import_obj(struct ctl_client *c, struct ctl_call *call);
int op_unimport_obj(struct ctl_client *c, struct ctl_call *call);
int op_open_qp(struct ctl_client *c, struct ctl_call *call);
/* The first connection that imported C's context, told that the device is
 * gone (IBV_EVENT_DEVICE_FATAL) and unlinked from C, for client_destroy to
 * end; NULL when none is left. */
struct ctl_client *share_end_importer(struct ctl_client *c);
/* Drops C's imported handles and closes its command file (client_destroy,
 * after its importers are gone). */
void share_client_gone(struct ctl_client *c);

#endif
