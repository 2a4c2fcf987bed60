/*
 * engine_glue.h - wires the transport engine (emu/xport/xport.h) into
 * uroced. Its callbacks: registered memory (mem_access.c), UDP transmit
 * (port.c), completions into the CQ rings (cq_ring.c), per-QP libev timers,
 * the engine's next turn for a QP that spent its budget (ev_check +
 * ev_idle), and QP and SRQ events as async events to the owning client.
 */
#ifndef UROCE_EMU_NIC_ENGINE_GLUE_H
#define UROCE_EMU_NIC_ENGINE_GLUE_H

struct uroce_dev;
struct ctl_qp;
struct ctl_srq;

/* Create the device's engine and its network port (port.c). Returns 0 or
 * errno (ENOMEM, EINVAL). */
int engine_init(struct uroce_dev *d);
void engine_fini(struct uroce_dev *d);

/* Engine QP for a new daemon QP (in RESET), with its timer and run
 * watchers. Returns 0 or errno. */
int engine_qp_create(struct ctl_qp *qp);
/* Drop the engine QP (outstanding WQEs vanish without completions). */
void engine_qp_destroy(struct ctl_qp *qp);

/* Engine SRQ of max_wr WQEs for a new daemon SRQ (disarmed). 0 or errno. */
int engine_srq_create(struct ctl_srq *srq);
/* Make SRQ's engine SRQ an XRC SRQ of its xrcd's domain, number and PD
 * (xport_srq_set_xrc). 0 or errno. */
int engine_srq_set_xrc(struct ctl_srq *srq);
/* Drop the engine SRQ (no QP uses it; its WQEs vanish). */
void engine_srq_destroy(struct ctl_srq *srq);

#endif
