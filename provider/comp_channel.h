/*
 * comp_channel.h - completion channels for libibverbs' own ibv_create_comp_channel.
 *
 * ibv_create_comp_channel is not a provider op: libibverbs write()s command
 * 17 (IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL) on the context's cmd_fd and
 * takes the fd the kernel puts in the response. uroce has no kernel, so the
 * provider replaces libibverbs' own GOT entries for write() and close() with
 * hooks (docs/provider-abi.md §3, docs/provider.md). See comp_channel.c; the
 * slots are patched by got_hook.c, the CQs of a channel and the hold of
 * stale events are event_hold.c's.
 */
#ifndef UROCE_PROVIDER_COMP_CHANNEL_H
#define UROCE_PROVIDER_COMP_CHANNEL_H

#include <stdint.h>

/*
 * Installs the write/close hooks in the libibverbs that defines
 * verbs_register_driver_<PABI>, once per process (later calls return the first
 * result). Returns 0, or -1 with errno (EOPNOTSUPP on an unsupported
 * architecture or a library without those relocations; the mprotect errno
 * otherwise); uroce_chan_error() then says why in one line.
 */
int uroce_chan_install(void);

/* One-line reason for a failed install, or "" if installed / not yet tried. */
const char *uroce_chan_error(void);

/*
 * Marks cmd_fd (the context's /dev/infiniband/uverbs_* descriptor) as ours:
 * command 17 written to it creates a channel, any other command fails with
 * EOPNOTSUPP. live_fd: the context's control socket; each channel keeps a
 * dup of it, and a blocking ibv_get_cq_event fails with EIO once the daemon
 * hangs it up. Returns 0 or -1 with errno ENOMEM.
 */
int uroce_chan_register_cmd_fd(int cmd_fd, int live_fd);

/* Forgets cmd_fd (before libibverbs closes it in verbs_uninit_context). */
void uroce_chan_unregister_cmd_fd(int cmd_fd);

/*
 * For a completion channel's fd (struct ibv_comp_channel.fd), returns the
 * provider's end of its SOCK_SEQPACKET socketpair: the daemon writes 8-byte
 * struct ib_uverbs_comp_event_desc records into it. Returns -1 with errno
 * EOPNOTSUPP if the hooks are not installed, EBADF if the fd was not created
 * by the hook (then it is not a uroce channel; libibverbs without hooks
 * would have returned an uninitialised number).
 */
int uroce_chan_peer_fd(int channel_fd);

/*
 * Takes the unread records of one CQ (cq_handle, the ibv_cq pointer the
 * daemon writes) out of a channel, as the kernel drops a destroyed CQ's
 * events: reads every record available on channel_fd without blocking and
 * writes the other CQs' records back through the provider's end (after any
 * the daemon wrote meanwhile). Call after the daemon destroyed the CQ.
 * Returns the number of records dropped (0 for a channel not made by the hook).
 */
int uroce_chan_drop_cq_events(int channel_fd, uint64_t cq_handle);

#endif
