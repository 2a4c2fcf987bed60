/*
 * uroce provider <-> daemon contract for the RDMA connection manager
 * (librdmacm's rdma_cm ABI, <rdma/rdma_user_cm.h>), included by abi.h.
 *
 * librdmacm talks to the kernel's rdma_ucm by write()ing commands on a file
 * descriptor opened from /dev/infiniband/rdma_cm: a struct rdma_ucm_cmd_hdr
 * {cmd, in, out} followed by `in` bytes of the command's struct; answers are
 * written by the kernel to the user address in the command's `response` field
 * (at most `out` bytes); GET_EVENT blocks until an event is queued (EAGAIN on a
 * non-blocking fd) and the fd polls readable while one is. uroce keeps that
 * exact ABI: the provider intercepts librdmacm's open/write/close of that path
 * (docs/rdma-cm.md) and forwards every command to the daemon of the device the
 * rdma_cm_id belongs to; the connection manager (ids, port spaces, the CM MADs
 * on QP1, timers, events) lives in uroced.
 *
 * A CM connection is a separate AF_UNIX SOCK_SEQPACKET connection to the same
 * control socket as the verbs connections (class/infiniband/NAME/uroce_socket),
 * one per (event channel, device) pair. Its first message is CM_HELLO (a HELLO
 * or any verbs opcode on it: EPROTO); after it, only UCMA requests (others:
 * EPROTO). The same request/reply rules as abi.h apply (fixed sizes, one
 * datagram each, status = positive errno).
 *
 * Closing the connection destroys every rdma_cm_id it created, as closing the
 * kernel's ucma fd does: connected ids send a DREQ, listeners stop, connections
 * still being set up are refused with a REJ (the kernel's cm_destroy_id).
 */
#ifndef UROCE_ABI_CM_H
#define UROCE_ABI_CM_H

#include <stdint.h>
#include <rdma/rdma_user_cm.h>

/* Largest command body (`in`, plus what the provider appends, see UCMA) and
 * largest answer (`out`) one UCMA message carries. */
#define UROCE_UCMA_IN_MAX 512
#define UROCE_UCMA_OUT_MAX 512

/*
 * CM_HELLO: first message of a CM connection.
 *   abi_version  UROCE_ABI_VERSION
 *   pid          the provider's getpid(); must equal SO_PEERCRED's pid (EPERM)
 *   conn_tag     chosen by the provider; copied into every event record the
 *                daemon writes for this connection (struct uroce_cm_event)
 *   fds          [0] the daemon's end of the channel's event socket
 *                (AF_UNIX SOCK_SEQPACKET; the application polls and reads the
 *                other end through librdmacm). Several connections (one per
 *                device) of one channel receive the same socket.
 * Reply: client_id (shown by `uroce status`), node_guid (host order, as
 *   uroce_node_guid), udp_port, addr_family + addr of the device (IPv4 as
 *   ::ffff:a.b.c.d).
 * Errors: EALREADY (second CM_HELLO), EPROTONOSUPPORT, EPERM (pid), EBADF
 *   ([0] missing or not a SOCK_SEQPACKET socket), EMFILE (the uid's connection
 *   quota, as HELLO's).
 */
struct uroce_cm_hello_req {
	struct uroce_hdr hdr;
	uint32_t abi_version;
	uint32_t pid;
	uint32_t conn_tag;
	uint32_t reserved;
};
struct uroce_cm_hello_resp {
	struct uroce_hdr hdr;
	uint32_t client_id;
	uint16_t udp_port;
	uint16_t addr_family;
	uint64_t node_guid;
	uint8_t addr[16];
};

/*
 * UCMA: one rdma_ucm command, as librdmacm wrote it, minus the pointers.
 *   cmd     enum RDMA_USER_CM_CMD_*; unknown or unsupported: EOPNOTSUPP
 *           (GET_EVENT never reaches the daemon: the provider reads the
 *           event socket itself)
 *   in_len  bytes of in[] that are the command struct (the rdma_ucm_cmd_hdr's
 *           `in`); for SET_OPTION the provider appends the optlen bytes that
 *           optval points to right after the struct (in_len counts both)
 *   out_len the hdr's `out`: how many bytes the caller's response buffer holds
 *           (the daemon writes at most that many; 0 for commands without one)
 *   in      the command struct. Fields holding user pointers (`response`,
 *           `optval`) are passed as they are and never used by the daemon.
 *           `id` fields are the daemon's handles (the provider translates its
 *           own ids). `uid` fields are opaque to the daemon and copied into
 *           events.
 * Reply: status 0 or a positive errno (the errno the kernel's ucma returns for
 *   the same command; the provider makes write() return -1 with it);
 *   out_len bytes of out[] to copy to the command's `response` address.
 *   CREATE_ID's reply holds struct rdma_ucm_create_id_resp with the daemon's
 *   handle; DESTROY_ID's events_reported counts the events the daemon wrote
 *   for that id (the provider reports what it delivered instead).
 * Events: the daemon writes one struct uroce_cm_event per event to the
 *   connection's event socket, in order, never blocking: while the socket is
 *   full they wait in a queue (bounded per connection; a connect request that
 *   does not fit is refused with a REJ, as a full listen backlog is).
 *   event.id is the daemon's handle: for RDMA_CM_EVENT_CONNECT_REQUEST the new
 *   id's (its uid field is the listener's uid, as in the kernel).
 */
struct uroce_ucma_req {
	struct uroce_hdr hdr;
	uint32_t cmd;
	uint16_t in_len;
	uint16_t out_len;
	uint8_t in[UROCE_UCMA_IN_MAX];
};
struct uroce_ucma_resp {
	struct uroce_hdr hdr;
	uint32_t out_len;
	uint32_t reserved;
	uint8_t out[UROCE_UCMA_OUT_MAX];
};

/* One event on a CM event socket. */
struct uroce_cm_event {
	uint32_t conn_tag;
	uint32_t reserved;
	struct rdma_ucm_event_resp resp;
};

#endif /* UROCE_ABI_CM_H */
