/*
 * client.h - one connection to the control socket (one ibv_context, or one
 * `uroced --admin` call) and the objects it owns.
 *
 * Every object (PD, MR, CQ, SRQ, QP, AH) belongs to exactly one client and is named
 * by a per-client handle (1, 2, ...; never 0) in that client's table for its
 * type, so a client can never name another client's object, except through
 * the handles obj_share.c gives to one holding the owner's command file or
 * an XRC domain's file (IMPORT_OBJ, OPEN_QP). When the
 * connection ends — close, crash, SIGKILL: the kernel closes the socket either
 * way — client_destroy (emu/ctl/server.h) frees everything it still owns, in
 * dependency order.
 */
#ifndef UROCE_EMU_OBJ_CLIENT_H
#define UROCE_EMU_OBJ_CLIENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <ev.h>

#include "emu/obj/objtab.h"
#include "emu/obj/async_event.h"

struct uroce_dev;
struct cm_conn;
struct ctl_import;

struct ctl_client {
	struct uroce_dev *dev;
	struct ctl_client *next, *prev;

	int fd;                 /* the SEQPACKET connection */
	ev_io io;
	uint32_t id;            /* shown by `status`, in logs as client#id */
	pid_t pid;              /* SO_PEERCRED */
	uid_t uid;
	gid_t gid;
	char comm[17];          /* /proc/PID/comm at connect time */
	int refuse;             /* 0, or the errno that answers the first message
				 * before the connection is closed (quota_admit) */
	/* The client's /proc/self/mem and /proc/self/maps, opened by the client
	 * and sent at HELLO; bound to its mm of that moment, so after an execve
	 * or exit every access through them fails; -1 = none
	 * (docs/security.md). */
	int mem_fd;
	int maps_fd;

	bool hello;             /* a verbs client (HELLO done) */
	int async_fd;           /* provider's async_fd peer; -1 before HELLO */
	int db_fd;              /* doorbell eventfd; -1 before HELLO */
	ev_io db_io;
	/* The doorbell service's share (emu/nic/doorbell.c): send WQEs taken
	 * in loop turn db_turn (DOORBELL_CLIENT_BUDGET a turn), and the QP
	 * table slot the next scan starts at, so every QP gets its turn. */
	unsigned int db_turn;
	uint32_t db_taken;
	uint32_t db_next_slot;
	/* WQEs one doorbell service took into a QP in ERR or refused (lies),
	 * and those it posted to a working QP (work); the debt they leave
	 * (DOORBELL_DEBT_MAX), or a run of services without any WQE
	 * (DOORBELL_IDLE_MAX), pauses the client's doorbell for
	 * DOORBELL_PAUSE_SECONDS (db_pause, active while paused). Receive
	 * WQEs taken in turn db_turn (DOORBELL_RECV_BUDGET). */
	uint32_t db_lies, db_work, db_debt, db_idle_run, db_recv_taken;
	ev_timer db_pause;

	struct cm_conn *cm;     /* a CM connection (CM_HELLO done), emu/cm/ */

	struct obj_table pds, mrs, mws, cqs, qps, ahs, srqs;
	struct obj_table dms;   /* device memory (obj_dm.c) */
	struct obj_table xrcds;  /* struct ctl_xrcd (obj_xrcd.c) */
	uint64_t async_events;  /* records written to async_fd */
	uint64_t async_dropped; /* records the provider's socket had no room for */
	/* Shared contexts (obj_share.c): the command file this connection
	 * named or imported (-1 = none), the connection it imported (NULL =
	 * none), and the handles IMPORT_OBJ gave it. */
	int cmd_file;
	struct ctl_client *import_from;
	struct ctl_import *imports;
	uint32_t n_imports, cap_imports;
};

#endif
