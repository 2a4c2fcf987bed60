/*
 * udp_loopback.c - the raw UDP baseline for scripts/bench: what two
 * processes on this host get from plain UDP sockets over loopback, the
 * transport uroce's daemon itself uses. Not part of the build; scripts/bench
 * compiles it with the system compiler.
 *
 *   udp_loopback bw SIZE SECONDS   sender process blasts SIZE-byte datagrams
 *                                  for SECONDS; prints "bw MB/s" as the
 *                                  receiver counted them (1 MB = 10^6 bytes,
 *                                  perftest's unit)
 *   udp_loopback lat SIZE ITERS    ping-pong of SIZE-byte datagrams; prints
 *                                  "lat usec" = average round trip / 2
 *                                  (one-way, as perftest's t_avg)
 * Address 127.0.0.1, ports chosen by the kernel. Exit 0 on success.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* A UDP socket bound to 127.0.0.1:0 with 16 MiB buffers; *addr gets its address. */
static int sock(struct sockaddr_in *addr)
{
	int s = socket(AF_INET, SOCK_DGRAM, 0), sz = 16 << 20;
	socklen_t len = sizeof(*addr);

	if (s < 0) {
		perror("socket");
		exit(1);
	}
	setsockopt(s, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	setsockopt(s, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)addr, sizeof(*addr)) || getsockname(s, (struct sockaddr *)addr, &len)) {
		perror("bind");
		exit(1);
	}
	return s;
}

static int bw(size_t size, double seconds)
{
	struct sockaddr_in ra, sa;
	int r = sock(&ra), s = sock(&sa);
	char *buf = calloc(1, size);
	struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
	unsigned long long bytes = 0;
	double t0 = 0, t1 = 0;
	pid_t pid = fork();

	if (pid == 0) { /* sender */
		double end = now() + seconds;
		while (now() < end)
			for (int i = 0; i < 64; i++)
				sendto(s, buf, size, 0, (struct sockaddr *)&ra, sizeof(ra));
		sendto(s, buf, 1, 0, (struct sockaddr *)&ra, sizeof(ra)); /* end marker */
		_exit(0);
	}
	setsockopt(r, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (;;) {
		ssize_t n = recv(r, buf, size, 0);
		if (n < 0 && t0 > 0)
			break; /* the sender went quiet */
		if (n <= 0)
			continue;
		if (n == 1)
			break;
		if (t0 == 0)
			t0 = now();
		else
			bytes += (unsigned long long)n;
		t1 = now();
	}
	waitpid(pid, NULL, 0);
	printf("bw %.2f\n", t1 > t0 ? (double)bytes / (t1 - t0) / 1e6 : 0.0);
	return 0;
}

static int lat(size_t size, long iters)
{
	struct sockaddr_in aa, ba;
	int a = sock(&aa), b = sock(&ba);
	char *buf = calloc(1, size);
	double t0;
	pid_t pid = fork();

	if (pid == 0) { /* echo side */
		for (long i = 0; i < iters; i++) {
			if (recv(b, buf, size, 0) < 0)
				_exit(1);
			sendto(b, buf, size, 0, (struct sockaddr *)&aa, sizeof(aa));
		}
		_exit(0);
	}
	t0 = now();
	for (long i = 0; i < iters; i++) {
		sendto(a, buf, size, 0, (struct sockaddr *)&ba, sizeof(ba));
		if (recv(a, buf, size, 0) < 0) {
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
		return bw((size_t)atol(argv[2]), atof(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "lat"))
		return lat((size_t)atol(argv[2]), atol(argv[3]));
	fprintf(stderr, "usage: udp_loopback bw SIZE SECONDS | lat SIZE ITERS\n");
	return 2;
}
