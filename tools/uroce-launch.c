/*
 * uroce-launch: exec a program with RDMA netlink hidden, so that its
 * libibverbs discovers devices through $SYSFS_PATH (where `uroce up` put
 * uroce devices) instead of the kernel.
 *
 *   uroce-launch [--hide-netlink PROTO]... [--] CMD [ARGS...]
 *
 * Steps: raise RLIMIT_MEMLOCK's soft limit to its hard limit (libibverbs
 * warns below 32 KiB; registered memory is pinned on real hardware), set
 * PR_SET_NO_NEW_PRIVS (lets an unprivileged process install a filter), load
 * a seccomp filter that makes socket(AF_NETLINK, any type, PROTO) fail with
 * EPROTONOSUPPORT, then execvp CMD.  PROTO defaults to NETLINK_RDMA (20);
 * other protocols exist only so that tests can prove the filter on a kernel
 * without RDMA netlink (e.g. NETLINK_ROUTE, 0).  Why: libibverbs 44 asks
 * RDMA netlink first and ignores sysfs when that works, and merely opening
 * the socket auto-loads ib_core (docs/provider-abi.md §1.2).
 *
 * Exit status: CMD's (this process becomes CMD); 126 if the filter cannot
 * be installed, 127 if CMD cannot be executed, 2 on a usage error.
 */
#include <errno.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef NETLINK_RDMA
#define NETLINK_RDMA 20 /* <linux/netlink.h> */
#endif

#define MAX_HIDDEN 8

static void usage(FILE *out)
{
	fprintf(out, "usage: uroce-launch [--hide-netlink PROTO]... [--] CMD [ARGS...]\n"
		     "  runs CMD with socket(AF_NETLINK, *, PROTO) failing with EPROTONOSUPPORT\n"
		     "  (PROTO default: NETLINK_RDMA = %d)\n", NETLINK_RDMA);
}

/*
 * Raise the soft RLIMIT_MEMLOCK to the hard limit.  Failure is not an error:
 * a soft device pins nothing, libibverbs only prints a warning.
 */
static void raise_memlock(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_MEMLOCK, &rl);
	}
}

/*
 * Install the filter: socket(AF_NETLINK, *, proto) -> EPROTONOSUPPORT for
 * every proto in protos[0..n-1]; every other syscall is allowed.
 * Returns 0, or a negative errno from libseccomp.
 */
static int hide_netlink(const int *protos, int n)
{
	scmp_filter_ctx ctx;
	int rc = -ENOMEM;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -errno;
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return rc;
	for (int i = 0; i < n; i++) {
		/* Only the native ABI's socket(2); an x86-32 binary using
		 * socketcall(2) is not covered (documented limit). */
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPROTONOSUPPORT), SCMP_SYS(socket), 2,
				      SCMP_A0(SCMP_CMP_EQ, AF_NETLINK),
				      SCMP_A2(SCMP_CMP_EQ, (scmp_datum_t)protos[i]));
		if (rc < 0)
			goto out;
	}
	rc = seccomp_load(ctx);
out:
	seccomp_release(ctx);
	return rc;
}

/* Parse a netlink protocol number 0..31 (MAX_LINKS is 32); -1 if invalid. */
static int parse_proto(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > 31)
		return -1;
	return (int)v;
}

int main(int argc, char **argv)
{
	int protos[MAX_HIDDEN];
	int nprotos = 0;
	int i = 1;
	int rc;

	for (; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		} else if (strcmp(argv[i], "--hide-netlink") == 0) {
			int p = i + 1 < argc ? parse_proto(argv[i + 1]) : -1;

			if (p < 0 || nprotos == MAX_HIDDEN) {
				fprintf(stderr, "uroce-launch: --hide-netlink needs a protocol 0..31 (at most %d)\n",
					MAX_HIDDEN);
				return 2;
			}
			protos[nprotos++] = p;
			i++;
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "uroce-launch: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		} else {
			break;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	if (nprotos == 0)
		protos[nprotos++] = NETLINK_RDMA;

	raise_memlock();
	rc = hide_netlink(protos, nprotos);
	if (rc < 0) {
		fprintf(stderr, "uroce-launch: cannot install the seccomp filter: %s\n", strerror(-rc));
		return 126;
	}
	execvp(argv[i], &argv[i]);
	fprintf(stderr, "uroce-launch: %s: %s\n", argv[i], strerror(errno));
	return 127;
}
