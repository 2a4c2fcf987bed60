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
struct ctl_client;

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

/* Clients (client.c; struct ctl_client in emu/obj/client.h). */
/* A new client for connection FD (already accepted, non-blocking). Reads
 * SO_PEERCRED and /proc/PID/comm. Returns NULL (fd closed) on failure. */
struct ctl_client *client_new(struct uroce_dev *d, int fd);

/* Free every object of C (QPs, AHs, MRs, CQs, PDs), close its descriptors,
 * unlink it from the device and free it. */
void client_destroy(struct ctl_client *c);

#endif
