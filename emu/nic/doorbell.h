/*
 * doorbell.h - what the daemon does when a client rings its doorbell for new
 * WQEs: read every new WQE of the client's QP rings (wqe_reader.c) and post
 * it to the transport engine; a WQE that cannot be read or posted is
 * refused through the engine (xport_post_refused), which completes it in
 * order with IBV_WC_LOC_QP_OP_ERR and moves the QP to ERR.
 */
#ifndef UROCE_EMU_NIC_DOORBELL_H
#define UROCE_EMU_NIC_DOORBELL_H

struct client;

/* Post every new WQE of C's QP rings, at most one ring's capacity per
 * queue per call. */
void doorbell_post_wqes(struct client *c);

#endif
