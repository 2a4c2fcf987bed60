/*
 * capture_stream.c - a live capture into a pipe or socket (see
 * capture_stream.h).
 */
#include "config.h"
#include "emu/nic/capture_stream.h"
#include "emu/nic/device.h"
#include "emu/log.h"
#include "netstack/pcap_writer.h"

#include <errno.h>
#include <ev.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

struct capture_stream {
	struct uroce_dev *d;
	ev_io io;               /* EV_WRITE while the queue holds bytes */
	uint8_t *buf;           /* ring of CAPTURE_STREAM_QUEUE bytes */
	size_t head, len;       /* first byte to write, bytes held */
	uint64_t dropped;
	int closing;            /* the writer is closed: drain, then free */
};

static void stream_free(struct capture_stream *s)
{
	ev_io_stop(s->d->loop, &s->io);
	close(s->io.fd);
	free(s->buf);
	free(s);
}

static void stream_writable(struct ev_loop *loop, ev_io *w, int revents)
{
	struct capture_stream *s = w->data;
	struct iovec iov[2];
	size_t first = CAPTURE_STREAM_QUEUE - s->head;
	ssize_t n;

	(void)loop;
	(void)revents;
	if (first > s->len)
		first = s->len;
	iov[0].iov_base = s->buf + s->head;
	iov[0].iov_len = first;
	iov[1].iov_base = s->buf;
	iov[1].iov_len = s->len - first;
	n = writev(w->fd, iov, iov[1].iov_len ? 2 : 1);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		if (s->closing) {
			stream_free(s);
			return;
		}
		/* The reader is gone: the capture ends (closing the writer
		 * closes its stream, which frees s). */
		struct uroce_dev *d = s->d;

		ulog(ULOG_INFO, "capture: the reader of %s went away (%s); capture stopped (%llu frames)",
		     d->capture_path, strerror(errno), (unsigned long long)pcapw_frames(d->capture));
		s->len = 0;
		pcapw_close(d->capture);
		d->capture = NULL;
		d->capture_path[0] = 0;
		return;
	}
	s->head = (s->head + (size_t)n) % CAPTURE_STREAM_QUEUE;
	s->len -= (size_t)n;
	if (s->len)
		return;
	ev_io_stop(s->d->loop, &s->io);
	if (s->closing)
		stream_free(s);
}

static ssize_t stream_write(void *cookie, const char *data, size_t size)
{
	struct capture_stream *s = cookie;
	size_t tail, part;

	/* capture_stream_room() was asked for the whole record first */
	if (size > CAPTURE_STREAM_QUEUE - s->len) {
		errno = ENOSPC;
		return -1;
	}
	tail = (s->head + s->len) % CAPTURE_STREAM_QUEUE;
	part = CAPTURE_STREAM_QUEUE - tail;
	if (part > size)
		part = size;
	memcpy(s->buf + tail, data, part);
	memcpy(s->buf, data + part, size - part);
	s->len += size;
	ev_io_start(s->d->loop, &s->io);
	return (ssize_t)size;
}

static int stream_close(void *cookie)
{
	struct capture_stream *s = cookie;

	if (s->d->capture_stream == s)
		s->d->capture_stream = NULL;
	if (!s->len) {
		stream_free(s);
		return 0;
	}
	/* what the reader has not taken yet still goes to it */
	s->closing = 1;
	return 0;
}

FILE *capture_stream_open(struct uroce_dev *d, int fd)
{
	cookie_io_functions_t fns = { .write = stream_write, .close = stream_close };
	struct capture_stream *s;
	int fl = fcntl(fd, F_GETFL);
	FILE *fp;

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s)
		s->buf = malloc(CAPTURE_STREAM_QUEUE);
	if (!s || !s->buf) {
		free(s);
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	s->d = d;
	ev_io_init(&s->io, stream_writable, fd, EV_WRITE);
	s->io.data = s;
	fp = fopencookie(s, "w", fns);
	if (!fp) {
		stream_free(s);
		errno = ENOMEM;
		return NULL;
	}
	setvbuf(fp, NULL, _IONBF, 0);
	d->capture_stream = s;
	return fp;
}

int capture_stream_room(struct capture_stream *s, size_t bytes)
{
	if (bytes <= CAPTURE_STREAM_QUEUE - s->len)
		return 1;
	s->dropped++;
	return 0;
}

uint64_t capture_stream_dropped(const struct capture_stream *s)
{
	return s->dropped;
}
