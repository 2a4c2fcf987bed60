/*
 * fdmsg.h - sending one datagram with file descriptors (SCM_RIGHTS) on an
 * AF_UNIX socket: how every request and reply of the provider <-> daemon
 * protocol travels (abi.h). Shared by the provider, the daemon, its admin
 * client and the protocol tests.
 */
#ifndef UROCE_FDMSG_H
#define UROCE_FDMSG_H

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

/* Most descriptors one uroce_send_fds call carries (tests send more than a
 * message may, UROCE_MSG_MAX_FDS, to see the daemon refuse them). */
#define UROCE_FDMSG_MAX_FDS 16

/*
 * uroce_send_fds - sendmsg(s) of len bytes at buf with nfds descriptors fds
 * attached as one SCM_RIGHTS control message (none if nfds is 0).
 * flags: sendmsg flags (MSG_NOSIGNAL, MSG_DONTWAIT, ...).
 * Returns sendmsg's result: bytes sent, or -1 with errno (EINVAL if nfds is
 * negative or above UROCE_FDMSG_MAX_FDS).
 */
static inline ssize_t uroce_send_fds(int s, const void *buf, size_t len, const int *fds, int nfds,
				     int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * UROCE_FDMSG_MAX_FDS)];
		struct cmsghdr align;
	} ctrl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	if (nfds < 0 || nfds > UROCE_FDMSG_MAX_FDS) {
		errno = EINVAL;
		return -1;
	}
	if (nfds > 0) {
		memset(&ctrl, 0, sizeof(ctrl));
		mh.msg_control = ctrl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
	}
	return sendmsg(s, &mh, flags);
}

#endif
