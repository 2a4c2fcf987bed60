/*
 * follow.c - a growing pcap file read as a stream of whole records (see
 * follow.h). Format: the 24-byte file header, then records of a 16-byte
 * header (ts_sec, ts_frac, incl_len, orig_len, in the writer's byte order)
 * and incl_len bytes; https://www.tcpdump.org/manpages/pcap-savefile.5.html
 */
#include "config.h"
#include "follow.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROG "uroce inspect"
#define POLL_NS 100000000L      /* how often the file is read again */
#define HEADER_WAIT_POLLS 100   /* 10 s for the file header */
#define MAX_RECORD (262144u + 16u) /* libpcap's largest snaplen + header */

struct follower {
	FILE *in;
	int out;                /* the pipe's write end */
	int swapped;            /* records in the other byte order */
	sigset_t stop;          /* SIGINT, SIGTERM */
	unsigned char *buf;
	size_t len;
};

static uint32_t rd32(const unsigned char *p, int swapped)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return swapped ? __builtin_bswap32(v) : v;
}

/* Wait POLL_NS or for a stop signal; 1 when stopped. */
static int wait_or_stop(struct follower *f)
{
	struct timespec t = { 0, POLL_NS };

	return sigtimedwait(&f->stop, NULL, &t) > 0;
}

/* Append what the file has now; 0 = nothing new. */
static size_t read_more(struct follower *f)
{
	size_t n = fread(f->buf + f->len, 1, MAX_RECORD * 2 - f->len, f->in);

	if (n == 0)
		clearerr(f->in); /* EOF for now: the writer may append more */
	f->len += n;
	return n;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Pass on the whole records at the start of buf; keep a partial one. */
static int pass_records(struct follower *f)
{
	size_t off = 0;

	while (f->len - off >= 16) {
		uint32_t incl = rd32(f->buf + off + 8, f->swapped);

		if (incl > MAX_RECORD - 16) {
			fprintf(stderr, PROG ": --follow: a record of %u bytes: not a pcap file or a broken one\n",
				incl);
			return -1;
		}
		if (f->len - off < 16 + (size_t)incl)
			break;
		off += 16 + incl;
	}
	if (off && write_all(f->out, f->buf, off) != 0)
		return -1;
	memmove(f->buf, f->buf + off, f->len - off);
	f->len -= off;
	return 0;
}

static void *follow_thread(void *arg)
{
	struct follower *f = arg;

	for (;;) {
		if (!read_more(f) && wait_or_stop(f))
			break;
		if (pass_records(f) != 0)
			break;
	}
	close(f->out);
	fclose(f->in);
	free(f->buf);
	free(f);
	return NULL;
}

FILE *insp_follow_open(const char *path)
{
	struct follower *f = calloc(1, sizeof(*f));
	unsigned char *hdr;
	uint32_t magic;
	pthread_t th;
	int fds[2], polls = 0;
	FILE *rd;

	if (!f || !(f->buf = malloc(MAX_RECORD * 2))) {
		free(f);
		fprintf(stderr, PROG ": out of memory\n");
		return NULL;
	}
	f->in = fopen(path, "rb");
	if (!f->in) {
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
		free(f->buf);
		free(f);
		return NULL;
	}
	sigemptyset(&f->stop);
	sigaddset(&f->stop, SIGINT);
	sigaddset(&f->stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &f->stop, NULL);
	while (f->len < 24) {
		if (!read_more(f)) {
			if (++polls > HEADER_WAIT_POLLS || wait_or_stop(f)) {
				fprintf(stderr, PROG ": %s: no pcap file header within 10 s\n", path);
				goto fail;
			}
		}
	}
	hdr = f->buf;
	memcpy(&magic, hdr, 4);
	if (magic == 0xa1b2c3d4u || magic == 0xa1b23c4du) {
		f->swapped = 0;
	} else if (magic == 0xd4c3b2a1u || magic == 0x4d3cb2a1u) {
		f->swapped = 1;
	} else {
		fprintf(stderr, PROG ": %s: --follow reads classic pcap files only (magic 0x%08x)\n", path,
			magic);
		goto fail;
	}
	if (pipe(fds) != 0) {
		fprintf(stderr, PROG ": pipe: %s\n", strerror(errno));
		goto fail;
	}
	f->out = fds[1];
	if (write_all(f->out, hdr, 24) != 0) {
		close(fds[0]);
		close(fds[1]);
		goto fail;
	}
	memmove(f->buf, f->buf + 24, f->len - 24);
	f->len -= 24;
	rd = fdopen(fds[0], "rb");
	if (!rd || pthread_create(&th, NULL, follow_thread, f) != 0) {
		fprintf(stderr, PROG ": cannot start following %s\n", path);
		if (rd)
			fclose(rd);
		else
			close(fds[0]);
		close(fds[1]);
		goto fail;
	}
	pthread_detach(th);
	return rd;
fail:
	fclose(f->in);
	free(f->buf);
	free(f);
	return NULL;
}
