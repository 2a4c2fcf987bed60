/*
 * datapath.h - wires the transport engine (emu/xport/xport.h) into uroced: its
 * callbacks (registered memory, UDP transmit with capture and seeded loss,
 * completions into the CQ rings, per-QP libev timers, QP errors as async
 * events), received UDP datagrams into xport_input, and the doorbell: new
 * WQEs in a client's QP rings are read (wqe_reader.c) and posted.
 */
#ifndef UROCE_EMU_DATAPATH_H
#define UROCE_EMU_DATAPATH_H

#include <stdint.h>
#include <infiniband/verbs.h>

struct uroce_dev;
struct client;
struct qp;

/* Create the device's engine and take over its UDP socket's receive path.
 * Returns 0 or errno (ENOMEM, EINVAL). */
int datapath_init(struct uroce_dev *d);
void datapath_fini(struct uroce_dev *d);

/* Engine QP for a new daemon QP (in RESET). Returns 0 or errno. */
int datapath_qp_create(struct qp *qp);
/* Drop the engine QP (outstanding WQEs vanish without completions). */
void datapath_qp_destroy(struct qp *qp);
/* Post every new WQE of C's QP rings (called on the doorbell). */
void datapath_doorbell(struct client *c);

#endif
