/*
 * doorbell.h - the doorbell of a verbs context: one eventfd per client,
 * given to the provider at HELLO (abi.h). The provider writes it after
 * publishing WQEs in a QP ring or a new CQ arm word, as a ConnectX gets a
 * UAR doorbell write; the daemon then reads the rings and the arm words.
 */
#ifndef UROCE_EMU_DOORBELL_H
#define UROCE_EMU_DOORBELL_H

struct client;

/* Create C's doorbell eventfd (c->db_fd, non-blocking) and watch it on the
 * device loop. Returns 0, EMFILE (descriptor budget, quota.h) or the errno
 * of eventfd. */
int doorbell_open(struct client *c);

/* Stop watching and close C's doorbell (no-op if none). */
void doorbell_close(struct client *c);

#endif
