/*
 * udp_loopback.c - the raw UDP baseline for scripts/bench: what two
 * processes on this host get from plain UDP sockets over loopback, the
 * transport uroce's daemon itself uses. Not part of the build; scripts/bench
 * compiles it with the system compiler.
 *
 *   udp_loopback bw SIZE SECONDS   sender process blasts SIZE-byte datagrams
 *                                  for SECONDS, one sendto and one recv per
 *                                  datagram; prints "bw MB/s Mpps" as the
 *                                  receiver counted them (1 MB = 10^6 bytes,
 *                                  perftest's unit)
 *   udp_loopback bwm SIZE SECONDS  the same with sendmmsg/recvmmsg, 64
 *                                  datagrams per call (sendmmsg(2),
 *                                  recvmmsg(2)): the batching baseline
 *   udp_loopback lat SIZE ITERS    ping-pong of SIZE-byte datagrams on
 *                                  blocking sockets; prints "lat usec" =
 *                                  average round trip / 2 (one-way, as
 *                                  perftest's t_avg)
 *   udp_loopback latbusy SIZE ITERS  the same, both sides polling with
 *                                  MSG_DONTWAIT instead of sleeping in recv
 * bw and bwm also print the CPU seconds (user + system, getrusage(2)) both
 * processes spent per GB and per million datagrams received:
 * "bw MB/s Mpps cpu_s_per_GB cpu_s_per_Mdgram".
 *
 * Addresses 127.0.0.1, ports chosen by the kernel; across two network
 * namespaces instead (scripts/bench --two-namespaces): UDPL_SEND_NETNS and
 * UDPL_RECV_NETNS (paths such as /run/netns/NAME) and UDPL_SEND_ADDR and
 * UDPL_RECV_ADDR (IPv4) for the sending (or pinging) side's socket and the
 * receiving (or echoing) side's, each made in its namespace (setns(2)): a
 * socket stays in the namespace it was made in. Exit 0 on success.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Enters the network namespace named by environment variable VAR, if set. */
static void enter_netns(const char *var)
{
	const char *path = getenv(var);
	int fd;

	if (!path)
		return;
	fd = open(path, O_RDONLY);
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		perror(path);
		exit(1);
	}
	close(fd);
}

/* A UDP socket with 16 MiB buffers, bound to port 0 of the address in
 * environment variable "UDPL_<SIDE>_ADDR" (default 127.0.0.1) and made in
 * the namespace of "UDPL_<SIDE>_NETNS" (default the caller's); *addr gets
 * its address. SIDE: "SEND" or "RECV". */
static int sock(struct sockaddr_in *addr, const char *side)
{
	char var[32];
	const char *a;
	int s, sz = 16 << 20;
	socklen_t len = sizeof(*addr);

	snprintf(var, sizeof(var), "UDPL_%s_NETNS", side);
	enter_netns(var);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0) {
		perror("socket");
		exit(1);
	}
	setsockopt(s, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	setsockopt(s, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	snprintf(var, sizeof(var), "UDPL_%s_ADDR", side);
	a = getenv(var);
	if (a && inet_pton(AF_INET, a, &addr->sin_addr) != 1) {
		fprintf(stderr, "%s: not an IPv4 address: %s\n", var, a);
		exit(1);
	}
	if (bind(s, (struct sockaddr *)addr, sizeof(*addr)) || getsockname(s, (struct sockaddr *)addr, &len)) {
		perror("bind");
		exit(1);
	}
	return s;
}

/* User + system CPU seconds of WHO (RUSAGE_SELF or RUSAGE_CHILDREN). */
static double cpu_seconds(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec / 1e6;
}

#define BATCH 64

/* Sends N datagrams of SIZE bytes from BUF to TO: one sendto each, or
 * sendmmsg calls of up to BATCH when MMSG. */
static void send_burst(int s, const char *buf, size_t size, const struct sockaddr_in *to, int n,
		       int mmsg)
{
	struct mmsghdr mh[BATCH];
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = size };

	if (!mmsg) {
		for (int i = 0; i < n; i++)
			sendto(s, buf, size, 0, (const struct sockaddr *)to, sizeof(*to));
		return;
	}
	memset(mh, 0, sizeof(mh));
	for (int i = 0; i < BATCH; i++) {
		mh[i].msg_hdr.msg_name = (void *)to;
		mh[i].msg_hdr.msg_namelen = sizeof(*to);
		mh[i].msg_hdr.msg_iov = &iov;
		mh[i].msg_hdr.msg_iovlen = 1;
	}
	while (n > 0) {
		int k = sendmmsg(s, mh, n < BATCH ? (unsigned int)n : BATCH, 0);

		if (k <= 0)
			return;
		n -= k;
	}
}

/* Receives up to BATCH datagrams (recvmmsg) or one (recv) into BUFS (BATCH
 * buffers of SIZE bytes); their lengths into LEN[]. Returns the count or -1. */
static int recv_burst(int r, char *bufs, size_t size, int *len, int mmsg)
{
	struct mmsghdr mh[BATCH];
	struct iovec iov[BATCH];
	int k;

	if (!mmsg) {
		ssize_t n = recv(r, bufs, size, 0);

		if (n < 0)
			return -1;
		len[0] = (int)n;
		return 1;
	}
	memset(mh, 0, sizeof(mh));
	for (int i = 0; i < BATCH; i++) {
		iov[i].iov_base = bufs + (size_t)i * size;
		iov[i].iov_len = size;
		mh[i].msg_hdr.msg_iov = &iov[i];
		mh[i].msg_hdr.msg_iovlen = 1;
	}
	k = recvmmsg(r, mh, BATCH, MSG_WAITFORONE, NULL);
	for (int i = 0; i < k; i++)
		len[i] = (int)mh[i].msg_len;
	return k;
}

static int bw(size_t size, double seconds, int mmsg)
{
	struct sockaddr_in ra, sa;
	int r = sock(&ra, "RECV"), s = sock(&sa, "SEND"), len[BATCH];
	char *buf = calloc(BATCH, size);
	struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
	unsigned long long bytes = 0, pkts = 0;
	double t0 = 0, t1 = 0, cpu;
	int done = 0;
	pid_t pid = fork();

	if (pid == 0) { /* sender */
		double end = now() + seconds;
		while (now() < end)
			send_burst(s, buf, size, &ra, BATCH, mmsg);
		for (int i = 0; i < 3; i++) /* end markers: 1 byte */
			sendto(s, buf, 1, 0, (struct sockaddr *)&ra, sizeof(ra));
		_exit(0);
	}
	setsockopt(r, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (!done) {
		int k = recv_burst(r, buf, size, len, mmsg);

		if (k < 0 && t0 > 0)
			break; /* the sender went quiet */
		for (int i = 0; i < k; i++) {
			if (len[i] == 1) {
				done = 1;
				break;
			}
			if (t0 == 0) {
				t0 = now();
				continue;
			}
			bytes += (unsigned long long)len[i];
			pkts++;
		}
		if (k > 0 && pkts)
			t1 = now();
	}
	waitpid(pid, NULL, 0);
	cpu = cpu_seconds(RUSAGE_SELF) + cpu_seconds(RUSAGE_CHILDREN);
	printf("bw %.2f %.4f %.3f %.3f\n", t1 > t0 ? (double)bytes / (t1 - t0) / 1e6 : 0.0,
	       t1 > t0 ? (double)pkts / (t1 - t0) / 1e6 : 0.0, bytes ? cpu / ((double)bytes / 1e9) : 0.0,
	       pkts ? cpu / ((double)pkts / 1e6) : 0.0);
	return 0;
}

/* One datagram into BUF: blocking recv, or MSG_DONTWAIT polled when BUSY. */
static ssize_t recv1(int s, char *buf, size_t size, int busy)
{
	ssize_t n;

	do
		n = recv(s, buf, size, busy ? MSG_DONTWAIT : 0);
	while (n < 0 && busy && (errno == EAGAIN || errno == EWOULDBLOCK));
	return n;
}

static int lat(size_t size, long iters, int busy)
{
	struct sockaddr_in aa, ba;
	int b = sock(&ba, "RECV"), a = sock(&aa, "SEND");
	char *buf = calloc(1, size);
	double t0;
	pid_t pid = fork();

	if (pid == 0) { /* echo side */
		for (long i = 0; i < iters; i++) {
			if (recv1(b, buf, size, busy) < 0)
				_exit(1);
			sendto(b, buf, size, 0, (struct sockaddr *)&aa, sizeof(aa));
		}
		_exit(0);
	}
	t0 = now();
	for (long i = 0; i < iters; i++) {
		sendto(a, buf, size, 0, (struct sockaddr *)&ba, sizeof(ba));
		if (recv1(a, buf, size, busy) < 0) {
			perror("recv");
			kill(pid, SIGKILL);
			return 1;
		}
	}
	printf("lat %.3f\n", (now() - t0) / (double)iters / 2 * 1e6);
	waitpid(pid, NULL, 0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "bw"))
		return bw((size_t)atol(argv[2]), atof(argv[3]), 0);
	if (argc == 4 && !strcmp(argv[1], "bwm"))
		return bw((size_t)atol(argv[2]), atof(argv[3]), 1);
	if (argc == 4 && !strcmp(argv[1], "lat"))
		return lat((size_t)atol(argv[2]), atol(argv[3]), 0);
	if (argc == 4 && !strcmp(argv[1], "latbusy"))
		return lat((size_t)atol(argv[2]), atol(argv[3]), 1);
	fprintf(stderr, "usage: udp_loopback bw|bwm SIZE SECONDS | lat|latbusy SIZE ITERS\n");
	return 2;
}
