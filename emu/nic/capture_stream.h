/*
 * capture_stream.h - the device's capture streamed live into a pipe or a
 * socket (`uroce capture start DEV -` | tshark -i -; docs/inspect.md,
 * "Live capture").
 *
 * A reader may be slower than the device or stop reading: the event loop
 * must never block on it. Frames go into a bounded queue (CAPTURE_STREAM_QUEUE
 * bytes) that a write watcher drains into the non-blocking descriptor; a
 * frame that does not fit whole is dropped and counted, so the stream stays
 * a well-formed pcap file whatever the reader does. When the reader is gone
 * (EPIPE, or any other write error) the capture stops by itself.
 */
#ifndef UROCE_EMU_NIC_CAPTURE_STREAM_H
#define UROCE_EMU_NIC_CAPTURE_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Bytes of pcap records held for a slow reader (8 MiB: about 2,000 frames of
 * a 4096-byte MTU). */
#define CAPTURE_STREAM_QUEUE (8u << 20)

struct uroce_dev;
struct capture_stream;

/*
 * capture_stream_open - take @fd (a pipe or socket opened for writing; the
 * stream owns it from now on and closes it, also on failure), make it
 * non-blocking, and return a stdio stream whose writes go into the queue
 * (unbuffered: one pcap record is written as whole calls), for
 * pcapw_open_fp. d->capture_stream is set. Returns NULL with errno set
 * (ENOMEM, or fcntl's errno).
 */
FILE *capture_stream_open(struct uroce_dev *d, int fd);

/*
 * capture_stream_room - whether a record of @bytes (16-byte record header
 * included) fits in the queue now; if not, the frame is counted as dropped
 * and false returned.
 */
int capture_stream_room(struct capture_stream *s, size_t bytes);

/* capture_stream_dropped - frames dropped because the queue was full. */
uint64_t capture_stream_dropped(const struct capture_stream *s);

#endif
