/*
 * ctl_server.h - the control socket: an AF_UNIX SOCK_SEQPACKET listener whose
 * path is published in sysfs (class/infiniband/NAME/uroce_socket). Accepts one
 * connection per ibv_context (or admin call), identifies the peer with
 * SO_PEERCRED, validates every datagram (size, magic, version, opcode, fds,
 * session state, permission) and dispatches it to its handler (objects.h).
 */
#ifndef UROCE_EMU_CTL_SERVER_H
#define UROCE_EMU_CTL_SERVER_H

struct uroce_dev;

/*
 * ctl_server_start - create, bind (mode 0666: any local user may open the
 * device, as with /dev/infiniband/uverbs*; admin operations are checked per
 * message) and listen on PATH, and watch it on the device's loop. A stale
 * socket file is replaced; a live one (another daemon answers) is not.
 * Returns 0, ENAMETOOLONG, EADDRINUSE (live socket), or the errno of
 * socket/bind/listen.
 */
int ctl_server_start(struct uroce_dev *d, const char *path);

/* Stop listening, destroy every client (after telling verbs clients
 * IBV_EVENT_DEVICE_FATAL if FATAL), and unlink the socket. */
void ctl_server_stop(struct uroce_dev *d, int fatal);

#endif
