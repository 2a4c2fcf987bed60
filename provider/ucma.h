/*
 * ucma.h - librdmacm over uroce, provider side (docs/rdma-cm.md, "Provider").
 *
 * librdmacm talks to the kernel's rdma_ucm through a file descriptor opened
 * from /dev/infiniband/rdma_cm (<rdma/rdma_user_cm.h>). The provider patches
 * librdmacm's own GOT slots for open, write, close and fstat (ucma_hook.c),
 * so that descriptor is the application's end of a SOCK_SEQPACKET socketpair
 * (a *channel*, ucma_chan.c) and each command written to it is answered by
 * the provider (ucma_cmd.c), mostly by forwarding it to the daemon of the
 * device the rdma_cm_id belongs to (a UCMA request on a CM connection,
 * uroce/abi_cm.h). Events arrive on the channel's socket and are read by
 * GET_EVENT (ucma_event.c). Devices and their addresses: ucma_dev.c.
 *
 * Ids: the application sees the provider's own id numbers (struct ucma_id),
 * mapped to (CM connection, daemon handle) once a command decides the device.
 */
#ifndef UROCE_PROVIDER_UCMA_H
#define UROCE_PROVIDER_UCMA_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <uroce/abi.h>

/* Most uroce devices the provider maps rdma_cm_ids to. */
#define UCMA_MAX_DEVS 16
/* Largest application id + 1: librdmacm keeps ids in a 16-bit index map (indexer.h). */
#define UCMA_MAX_IDS 65536

/* The libc functions librdmacm's slots held before the hooks (ucma_hook.c). */
struct ucma_libc {
	int (*open)(const char *path, int flags, ...);
	ssize_t (*write)(int fd, const void *buf, size_t count);
	int (*close)(int fd);
	int (*fstat)(int fd, struct stat *st);
};
extern struct ucma_libc ucma_libc;

/*
 * uroce_ucma_init - from the provider's constructor: patches libibverbs' open
 * and openat (they call uroce_ucma_scan) and scans once (ucma_hook.c).
 * Failures are said on stderr; the verbs are not affected.
 */
void uroce_ucma_init(void);

/*
 * uroce_ucma_scan - if objects were loaded since the last scan, patches the
 * GOT of every librdmacm not yet patched (found by rdma_create_event_channel).
 */
void uroce_ucma_scan(void);

/* ------------------------------------------------------------ devices */

/* One uroce device libibverbs lists: its control socket and address. */
struct ucma_dev {
	char name[64];
	char sock_path[108];
	struct sockaddr_storage addr; /* GID[0] as an address: AF_INET for ::ffff:a.b.c.d */
};

/*
 * Fills devs (up to UCMA_MAX_DEVS, sorted by name) with the uroce devices
 * ibv_get_device_list(3) returns, reading uroce_socket and ports/1/gids/0 from
 * each one's sysfs directory. Returns how many (0: none).
 */
int ucma_dev_list(struct ucma_dev *devs);

/* The index of the device whose address is addr (IPv4-mapped IPv6 equals IPv4), or -1. */
int ucma_dev_by_addr(const struct ucma_dev *devs, int n, const struct sockaddr *addr);

/* Whether addr is INADDR_ANY / in6addr_any. */
bool ucma_addr_is_any(const struct sockaddr *addr);

/*
 * Whether addr is a loopback address (127.0.0.0/8, ::1). The kernel's rdma_cm
 * binds such an address as it binds the wildcard (cma.c cma_any_addr is
 * cma_zero_addr || cma_loopback_addr); a uroce device's own address is that
 * device's all the same.
 */
bool ucma_addr_is_loopback(const struct sockaddr *addr);

/*
 * The device for a route to dst: the one whose address the kernel's routing
 * picks as the source (a UDP socket connect(2)ed to dst, getsockname(2)), else 0.
 */
int ucma_dev_by_route(const struct ucma_dev *devs, int n, const struct sockaddr *dst);

/* ------------------------------------------------------------ channels */

/* One CM connection: a channel's connection to one device's daemon. */
struct ucma_conn {
	int sock;           /* AF_UNIX SOCK_SEQPACKET to the daemon's control socket */
	uint32_t conn_tag;  /* copied by the daemon into this connection's events */
	uint32_t seq;
	pthread_mutex_t lock; /* one outstanding request */
	bool gone;          /* the daemon hung up; its ids got DEVICE_REMOVAL (ucma_event.c) */
};

/* One event channel (one open of /dev/infiniband/rdma_cm). */
struct ucma_chan {
	int app_fd;   /* returned by open(); the application polls it */
	int rd_fd;    /* a dup of app_fd that GET_EVENT reads: valid until the last reference */
	int peer_fd;  /* the daemon's end, sent with every CM_HELLO */
	pid_t pid;    /* the opener; another process (a fork child) gets EIO */
	int refs;     /* under ucma_lock: the table's + one per command in progress */
	bool closed;
	pthread_mutex_t conn_lock; /* opening connections */
	struct ucma_conn *conn[UCMA_MAX_DEVS];
	struct ucma_dev devs[UCMA_MAX_DEVS]; /* the device list at open */
	int ndevs;
};

/* An rdma_cm_id as the application knows it. */
struct ucma_id {
	struct ucma_chan *chan;
	int dev;          /* index in chan->devs; -1 while the provider keeps the id */
	uint32_t handle;  /* the daemon's, when dev >= 0 */
	uint64_t uid;
	uint16_t ps;
	uint8_t qp_type;
	uint32_t delivered; /* events GET_EVENT returned for it (events_reported) */
	uint8_t *opts;    /* SET_OPTIONs before dev is known: struct + optval, each */
	size_t opts_len;
	uint8_t *applied; /* those options once replayed on dev (a wildcard listen replays them) */
	size_t applied_len;
	bool any;         /* bound to the wildcard address (or listening unbound) */
	uint32_t wild_mask; /* other devices a wildcard listener listens on (bit = index) */
	uint32_t wild_handle[UCMA_MAX_DEVS]; /* its daemon id on each of those */
};

/* Guards the tables of channels, ids and multicast ids, and chan->refs. */
extern pthread_mutex_t ucma_lock;

/* The channel of app_fd with a reference taken, or NULL. */
struct ucma_chan *ucma_chan_get(int app_fd);
/* Drops a reference; the last frees the channel (its connections are closed). */
void ucma_chan_put(struct ucma_chan *ch);
/* open() of rdma_cm: a new channel; its app_fd, or -1 with errno (ENODEV: no uroce device). */
int ucma_chan_open(int flags);
/* close() of a channel's fd: 0, or -1/EBADF if fd is not a channel. */
int ucma_chan_close(int fd);

/*
 * The connection of ch to device dev, opened (CM_HELLO) if needed: 0, or an
 * errno value (the daemon's CM_HELLO status, EIO if it is gone).
 */
int ucma_chan_conn(struct ucma_chan *ch, int dev, struct ucma_conn **out);

/*
 * One UCMA exchange on c: sends cmd with in_len bytes of in, out_len the
 * caller's response size; on status 0 copies the reply's out bytes (at most
 * out_len) to out and their count to *got. Returns the daemon's status (a
 * positive errno), or EIO (connection lost), ETIMEDOUT (no reply within
 * UROCE_CTL_TIMEOUT_MS).
 */
int ucma_call(struct ucma_conn *c, uint32_t cmd, const void *in, size_t in_len,
	      void *out, size_t out_len, size_t *got);
/*
 * Replays an id's kept options on daemon id handle over c (the kernel's
 * ucma_set_option for each, in the order they were set): opts holds
 * opts_len bytes of struct rdma_ucm_set_option, each followed by its optlen
 * value bytes; each struct's id is set to handle in place. 0, or the first
 * errno value (ucma_call's); the options after a refused one are not sent.
 */
int ucma_replay_options(struct ucma_conn *c, uint32_t handle, uint8_t *opts, size_t opts_len);

/* ------------------------------------------------------------ ids (under ucma_lock) */

/* A new id of ch; its number, or -1 (table full). */
int ucma_id_alloc_locked(struct ucma_chan *ch);
/* The live id with that number, or NULL. */
struct ucma_id *ucma_id_find_locked(uint32_t app_id);
/* The live id of ch on (dev, handle), or -1. */
int ucma_id_by_handle_locked(struct ucma_chan *ch, int dev, uint32_t handle);
/* The live id of ch on dev whose uid is uid (a CONNECT_REQUEST's listener), or -1. */
int ucma_id_by_uid_locked(struct ucma_chan *ch, int dev, uint64_t uid);
/* Frees the id's number and its kept options. */
void ucma_id_free_locked(uint32_t app_id);
/* Frees every id of ch (at close). */
void ucma_id_free_chan_locked(struct ucma_chan *ch);
/*
 * Calls fn(arg, uid, handle) for every id of ch on dev (under ucma_lock), in
 * id order. Returns how many.
 */
int ucma_id_each_on_dev_locked(struct ucma_chan *ch, int dev,
			       void (*fn)(void *arg, uint64_t uid, uint32_t handle), void *arg);

/* ------------------------------------------------------------ commands */

/* write() of one command on a channel: count, or -1 with errno (ucma_cmd.c). */
ssize_t ucma_cmd_write(struct ucma_chan *ch, const void *buf, size_t count);
/*
 * ucma_listen_others - after LISTEN succeeded on a wildcard id's device, listens
 * on every other device of ch too, as the kernel's cma_listen_on_all: a daemon
 * id per device, created with the id's uid, port space, QP type and options,
 * bound to the wildcard address and port the first device gave (QUERY) and
 * listening with `backlog`. 0, or the first errno value (the ids made on the
 * other devices are destroyed again; ucma_listen.c).
 */
int ucma_listen_others(struct ucma_chan *ch, uint32_t app_id, int backlog);
/*
 * MIGRATE_ID of a wildcard listener from channel `from` to ch: its daemon ids
 * on other devices move along; one that cannot (a device ch lacks) is destroyed.
 */
void ucma_listen_migrate(struct ucma_chan *from, struct ucma_chan *ch, uint32_t app_id);
/* Destroys a wildcard listener's daemon ids on the other devices (DESTROY_ID). */
void ucma_listen_drop(struct ucma_chan *ch, uint32_t app_id);
/*
 * One UCMA command on device dev of ch: 0 or an errno value (ucma_call's);
 * the answer (up to out_len bytes) in out.
 */
int ucma_dev_call(struct ucma_chan *ch, int dev, uint32_t cmd, const void *in, size_t in_len,
		  void *out, size_t out_len);

/* Forgets the multicast ids of a closed channel (ucma_cmd.c). */
void ucma_mc_forget_chan_locked(struct ucma_chan *ch);
/* A MULTICAST_JOIN / MULTICAST_ERROR event of the daemon's membership
 * HANDLE of device DEV read on CH: the application's membership number,
 * with its and its id's delivered counts raised; -1 if the membership was
 * left (the event is dropped, as the kernel's ucma_leave_multicast drops
 * the events it had queued). */
int ucma_mc_event_locked(struct ucma_chan *ch, int dev, uint32_t handle);
/* GET_EVENT: fills the response address; 0 or an errno value (ucma_event.c). */
int ucma_get_event(struct ucma_chan *ch, uint64_t response, uint16_t out);

#endif
