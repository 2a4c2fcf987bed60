/*
 * cm.h - the connection manager inside uroced: the daemon half of librdmacm's
 * rdma_ucm ABI (include/uroce/abi_cm.h) and the CM MADs on QP1
 * (netstack/cm_mad.h), what the kernel's ucma.c, cma.c and cm.c do for a
 * RoCE device (docs/rdma-cm.md "Daemon").
 *
 * The rest of the daemon calls in here at four places: the control socket
 * (CM_HELLO and UCMA messages, a CM connection going away), the port (a
 * packet for QP1), the status command, and start-up/shut-down.
 */
#ifndef UROCE_EMU_CM_H
#define UROCE_EMU_CM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <infiniband/verbs.h>

struct uroce_dev;
struct ctl_client;
struct ctl_call;

/* Defaults of the options (docs/daemon.md): the CM response timeout the
 * daemon waits for an answer before it resends (ms; the kernel's cma uses
 * CMA_CM_RESPONSE_TIMEOUT 20 = 4.096 us * 2^20, about 4.3 s), and the CM ids
 * one uid may hold (docs/security.md). */
#define CM_DEFAULT_TIMEOUT_MS 4295u
#define CM_DEFAULT_MAX_IDS_PER_USER 1024u

/* cm_dev_init - the device's CM state with response timeout TIMEOUT_MS and a
 * per-uid quota of MAX_IDS CM ids. Returns 0 or ENOMEM. */
int cm_dev_init(struct uroce_dev *d, uint32_t timeout_ms, uint32_t max_ids);
/* Free it (every CM connection must be gone). */
void cm_dev_fini(struct uroce_dev *d);

/* Handlers of UROCE_OP_CM_HELLO and UROCE_OP_UCMA (emu/ctl/server.c). */
int op_cm_hello(struct ctl_client *c, struct ctl_call *call);
int op_ucma(struct ctl_client *c, struct ctl_call *call);

/* A CM connection ends: destroy its ids as closing the kernel's ucma fd does
 * (DREQ for connected ones, REJ for those being set up). */
void cm_client_gone(struct ctl_client *c);

/*
 * cm_input - a received RoCEv2 UDP payload (BTH .. ICRC, LEN bytes) whose BTH
 * names destination QP 1, from SGID to DGID (this device) and UDP source port
 * SPORT. Checked like any packet (ICRC unless VERIFIED, opcode UD SEND_ONLY,
 * DETH Q_Key 0x80010000, 256-byte MAD), then handled; anything else is
 * dropped and counted.
 */
void cm_input(struct uroce_dev *d, const uint8_t *buf, size_t len, const union ibv_gid *sgid,
	      const union ibv_gid *dgid, uint16_t sport, bool verified);

/* The `cm` status line: "cm ids=N listens=N conns=N ...", then one
 * "  cm_conn client=N ids=N events=N" line per CM connection. */
void cm_status(const struct uroce_dev *d, FILE *fp);

#endif
