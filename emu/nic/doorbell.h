/*
 * doorbell.h - the doorbell of a verbs context: one eventfd per client,
 * given to the provider at HELLO (abi.h). The provider writes it after
 * publishing WQEs in a QP ring or a new CQ arm word, as a ConnectX gets a
 * UAR doorbell write; the daemon then reads every new WQE of the client's QP
 * rings (wqe_reader.c) and posts it to the transport engine, and checks the
 * CQ arm words. A WQE that cannot be read or posted is refused through the
 * engine (xport_post_refused), which completes it in order with
 * IBV_WC_LOC_QP_OP_ERR and moves the QP to ERR; the WQEs after it are still
 * read and complete with IBV_WC_WR_FLUSH_ERR. A producer index further
 * ahead than the ring holds is refused once and skipped to.
 */
#ifndef UROCE_EMU_NIC_DOORBELL_H
#define UROCE_EMU_NIC_DOORBELL_H

#include <stdbool.h>

struct ctl_client;

/* Create C's doorbell eventfd (c->db_fd, non-blocking) and watch it on the
 * device loop. Returns 0 or the errno of eventfd (the caller checks the
 * descriptor against the client's budget, quota_fd_ok). */
int doorbell_open(struct ctl_client *c);

/* Stop watching and close C's doorbell (no-op if none). */
void doorbell_close(struct ctl_client *c);

/*
 * Send WQEs taken from one QP's ring per doorbell turn. Each post runs the
 * requester (up to XPORT_REQ_BUDGET packets), so this bounds what one turn
 * puts on the wire (16 WQEs of 64 KiB at MTU 4096: 256 packets) below what
 * the device socket reads per turn (UDP_PORT_RX_BATCH): a device sending
 * to itself does not overflow its own receive buffer.
 */
#define DOORBELL_SEND_BATCH 16

/*
 * Send WQEs taken from all the rings of one client per loop turn, whichever
 * path takes them (its doorbell, or the polls of QPs whose no_doorbell
 * promise stands). A client posting on many QPs at once gets two QPs' worth
 * a turn, like a client with one busy QP, and the scan of its QPs resumes
 * where the budget stopped it: the loop turn, and so what every other
 * client waits, stays bounded however many QPs one client floods.
 */
#define DOORBELL_CLIENT_BUDGET (2 * DOORBELL_SEND_BATCH)

/*
 * The budget while more than one client posts: when a client takes send
 * WQEs and another one took some less than DOORBELL_SHARED_SECONDS before,
 * every client gets DOORBELL_SHARED_BUDGET a turn for the next
 * DOORBELL_SHARED_SECONDS (of the loop's clock). A turn that serves a
 * flooder's 32 8-byte WRITEs takes about 170 us on one device, and another
 * client's message waits several turns (docs/performance.md, "A doorbell
 * flood"); a client posting alone keeps the full budget (a budget of 8
 * for everyone cost a lone client 15-20 % of its 8-byte message rate).
 * Not in deterministic mode, where a wall-clock window would make the
 * trace depend on real time.
 */
#define DOORBELL_SHARED_BUDGET 4
#define DOORBELL_SHARED_SECONDS 0.01

/*
 * How long a client's doorbell is not served once its services ran up a
 * debt (DOORBELL_DEBT_MAX): lies are WQEs posted to a QP in ERR (each
 * flushed at once, a CQE) or refused (a malformed WQE, a producer index
 * beyond the queue's depth); work is a WQE posted to a working QP or SRQ.
 * An honest client meets these once when a QP fails; a client that moves
 * its own producer indices at every doorbell would otherwise keep the
 * daemon busy flushing, and the daemon's CPU is the one the other
 * clients' own processes run on. While paused its QPs' rings are not
 * polled either; the service resumes (and looks at every ring) when the
 * pause ends. Not in deterministic mode.
 */
#define DOORBELL_PAUSE_SECONDS 0.001

/*
 * What decides the pause: each service adds its lies to the client's debt
 * and each WQE of work pays DOORBELL_WORK_CREDIT back (the debt never goes
 * below 0); a debt of DOORBELL_DEBT_MAX pauses the client. Apart from it,
 * DOORBELL_IDLE_MAX services in a row that found no WQE at all (a doorbell
 * rung for nothing, or for CQ arm requests only: each costs a look at
 * every ring and CQ of the client) pause it; any work ends such a run. An
 * honest client posting a few receives into a failed QP beside its work
 * stays near a debt of 0, and one whose doorbells a poll of its rings
 * beat to the WQEs does work in between.
 */
#define DOORBELL_WORK_CREDIT 4
#define DOORBELL_DEBT_MAX 64
#define DOORBELL_IDLE_MAX 16

/*
 * Receive WQEs taken from one client's rings per loop turn through its
 * doorbell, in any QP state: each is read and queued (in ERR flushed, a
 * CQE, and charged to the send budget too). Far above what a receiver
 * reposts in a turn; it bounds a client filling its receive queues in INIT
 * and discarding them by a move to RESET, again and again. The responder
 * taking a WQE for a packet in hand is not bounded by it (a UD datagram
 * finding none is lost).
 */
#define DOORBELL_RECV_BUDGET 512

/* Post the new WQEs of C's QP rings: every receive WQE, at most
 * DOORBELL_SEND_BATCH send WQEs per QP; a QP with new WQEs gets the
 * no_doorbell promise (abi_ring.h) until a loop turn finds it idle.
 * Returns whether send WQEs are left. */
bool doorbell_post_wqes(struct ctl_client *c);

/* Every send WQE C had posted before its current request, budget or not
 * (rounds of doorbell_post_wqes, as many as its rings' depths need); what
 * it posts meanwhile from another thread is left to later turns (the
 * doorbell rung), so a client posting without end cannot hold the loop. */
void doorbell_take_posted(struct ctl_client *c);

/* Loop turns without new WQEs after which a QP's no_doorbell promise is
 * withdrawn under --busy-poll (a turn there is about a microsecond); without
 * it, after one turn, since the loop may then sleep. */
#define DOORBELL_BUSY_KEEP 65536

/* Prepare QP's doorbell-suppression watcher (before any doorbell). */
struct ctl_qp;
struct ctl_srq;
void doorbell_qp_init(struct ctl_qp *qp);

/* Withdraw the daemon's no_doorbell promise watcher of QP (abi_ring.h
 * "Doorbell suppression"); before the QP and its ring go. */
void doorbell_qp_stop(struct ctl_qp *qp);

/*
 * The daemon's half of receive doorbell suppression (abi_ring.h): sets
 * QP's rq_no_doorbell promise while the QP's state takes receive WQEs on
 * demand (RTR, RTS, SQD, SQE; no SRQ), else withdraws it (store 0, full
 * fence) and reads the RQ ring once more: in ERR the WQEs found complete
 * with IBV_WC_WR_FLUSH_ERR, in RESET the caller discards them. Call after
 * every state change the daemon makes outside the engine (modify).
 */
void doorbell_rq_promise_update(struct ctl_qp *qp);

/* The engine moved QP to ERR on its own (xport_ops.qp_err, inside the
 * engine): the promise is withdrawn as above before the loop next sleeps. */
void doorbell_rq_err(struct ctl_qp *qp);

/* Posts the receive WQEs written to QP's RQ ring (or its SRQ's ring) since
 * the last doorbell was read: the engine's rq_refill, when a message finds
 * no receive WQE (xport.h). */
void doorbell_recv_refill(struct ctl_qp *qp);
/* The same for SRQ alone (an XRC SRQ, whichever client owns it). */
void doorbell_srq_refill(struct ctl_srq *srq);

#endif
