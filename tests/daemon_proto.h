/*
 * daemon_proto.h - a minimal client of uroced's control protocol for the
 * daemon tests (hostile messages, lifecycle, cleanup). It speaks the wire
 * format of include/uroce/abi.h directly, so malformed messages can be built.
 */
#ifndef UROCE_TESTS_DAEMON_PROTO_H
#define UROCE_TESTS_DAEMON_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include "uroce/abi.h"

/* Connect to the control socket PATH. Returns the fd or -1 (errno). */
int dp_connect(const char *path);

/* Send LEN raw bytes with NFDS descriptors. Returns 0 or -1 (errno). */
int dp_send_raw(int s, const void *buf, size_t len, const int *fds, int nfds);

/* Receive one reply into BUF (size CAP); descriptors into FDS (up to 4, the
 * count in *nfds). Returns the datagram length or -1 (errno). */
ssize_t dp_recv(int s, void *buf, size_t cap, int *fds, int *nfds);

/* Fill a correct header for OP (length = uroce_req_size(OP)). */
void dp_hdr(void *req, unsigned int op, uint32_t seq);

/* Send REQ (its header's length bytes) with FDS and receive the reply into
 * RESP; returns the reply status (0 / errno) or -1 on transport failure.
 * Received descriptors are stored in OUT_FDS (may be NULL: closed). */
int dp_call(int s, void *req, const int *fds, int nfds, void *resp, size_t cap, int *out_fds,
	    int *n_out);

/* A verbs session: connection + HELLO done. */
struct dp_session {
	int s;
	int async_fd;     /* our end of the async socketpair */
	int clock_fd, db_fd;
	struct uroce_hello_resp hello;
};

/* Connect and HELLO. Returns 0 or the failing status/errno. */
int dp_open(struct dp_session *ss, const char *path);
/* This process's /proc/self/mem (O_RDWR) and /proc/self/maps, as HELLO
 * sends them after the async_fd peer (abi.h); -1 where open failed. */
void dp_self_mem_fds(int fds[2]);
void dp_close(struct dp_session *ss);

/* Object helpers (return status; the handle in *h). */
int dp_alloc_pd(struct dp_session *ss, uint32_t *h);
int dp_handle_op(struct dp_session *ss, unsigned int op, uint32_t h);
int dp_reg_mr(struct dp_session *ss, uint32_t pd, uint64_t addr, uint64_t len, uint32_t access,
	      struct uroce_reg_mr_resp *out);
/* A ring memfd of SIZE bytes: seal 0 unsealed, 1 F_SEAL_SHRINK|GROW, 2 also
 * F_SEAL_WRITE. Returns fd or -1. */
int dp_ring_memfd(uint64_t size, int seal);
int dp_create_cq(struct dp_session *ss, uint32_t cqe, int chan_fd, uint32_t *h);
int dp_create_qp(struct dp_session *ss, enum ibv_qp_type t, uint32_t pd, uint32_t cq,
		 struct uroce_create_qp_resp *out);
int dp_modify_qp(struct dp_session *ss, uint32_t qp, const struct ibv_qp_attr *a, uint32_t mask);

/* Run ADMIN_STATUS and parse the "totals" line. Returns 0 or status/errno. */
struct dp_totals {
	unsigned clients, pd, mr, cq, qp, ah;
};
int dp_status_totals(const char *path, struct dp_totals *t);

/* The whole ADMIN_STATUS text into BUF (NUL-terminated, at most CAP-1
 * bytes). Returns 0 or status/errno. */
int dp_status_text(const char *path, char *buf, size_t cap);

#endif
