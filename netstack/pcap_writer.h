/*
 * pcap_writer.h - write captured RoCE frames to a classic pcap file.
 *
 * A thin, error-reporting layer over libpcap's "dead" handle + dumper
 * (pcap_open_dead_with_tstamp_precision, pcap_dump_fopen, pcap_dump).  The
 * daemon records every packet it sends and receives with it; the inspect
 * tests and the sample-capture generator build their files with it.
 *
 * Files use nanosecond timestamps (magic 0xa1b23c4d), which tshark, tcpdump
 * and `uroce inspect` all read.  One writer is not thread-safe; use it from a
 * single thread (the daemon's event loop).
 */
#ifndef UROCE_NETSTACK_PCAP_WRITER_H
#define UROCE_NETSTACK_PCAP_WRITER_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <time.h>

/*
 * Link type of the file: what the first byte of every frame is.
 *   PCAPW_LINK_RAW       raw IPv4 or IPv6 packet (LINKTYPE_RAW, 101): the
 *                        daemon's view, as it owns no Ethernet header.
 *   PCAPW_LINK_ETHERNET  Ethernet II frame without FCS (LINKTYPE_ETHERNET, 1).
 * Source: https://www.tcpdump.org/linktypes.html
 */
enum pcapw_link {
	PCAPW_LINK_RAW = 0,
	PCAPW_LINK_ETHERNET = 1,
};

/* Default snapshot length (bytes): a 4096-byte MTU RoCEv2 frame over IPv6
 * with every header fits; longer frames are stored truncated (caplen < len). */
#define PCAPW_DEFAULT_SNAPLEN 65535u

/* Size of the error text buffer of a writer (bytes, with NUL). */
#define PCAPW_ERRBUF_SIZE 256

/* Opaque writer. */
struct pcapw;

/*
 * pcapw_open - create (truncate) PATH and write the pcap file header.
 * @path:    file name; "-" writes to stdout, "fd:N" to a duplicate of the
 *           open descriptor N (not truncated; no new permission check).
 * @link:    link type of every frame written (enum pcapw_link).
 * @snaplen: bytes kept per frame (1..262144), 0 = PCAPW_DEFAULT_SNAPLEN.
 * @err:     if not NULL, receives a one-line message on failure (size errlen).
 * Returns the writer, or NULL with errno set: EINVAL (bad link or snaplen),
 * ENOMEM, or the errno of fopen/fwrite (EACCES, ENOENT, ENOSPC, ...).
 */
struct pcapw *pcapw_open(const char *path, enum pcapw_link link, uint32_t snaplen,
			 char *err, size_t errlen);

/*
 * pcapw_open_fp - as pcapw_open, on a stream the caller opened (a pipe's
 * queue made with fopencookie(3), say). The writer owns fp from now on: it is
 * fclosed by pcapw_close, or at once if this fails. @name only names the
 * stream in messages. Returns the writer, or NULL with errno set (EINVAL,
 * ENOMEM, the stream's write error).
 */
struct pcapw *pcapw_open_fp(FILE *fp, const char *name, enum pcapw_link link, uint32_t snaplen,
			    char *err, size_t errlen);

/*
 * pcapw_write - append one frame.
 * @frame: bytes starting at the link-layer header chosen at open (len bytes).
 * @len:   original length of the frame in bytes (stored as "len"; at most
 *         snaplen of them are written, as "caplen").
 * @ts:    capture time (CLOCK_REALTIME in the daemon; a fixed value in tests
 *         for byte-exact files); NULL = now (CLOCK_REALTIME).  tv_nsec must
 *         be 0..999999999, tv_sec 0..2^32-1 (the record's 32-bit seconds).
 * Returns 0, or -1 with errno set: EINVAL (NULL frame with len > 0, len >
 * UINT32_MAX, bad tv_nsec or tv_sec), EIO/ENOSPC/... (the stream's write error; the
 * message is in pcapw_error()).  After a write error the writer stays
 * usable but the file is incomplete, and pcapw_close() reports the error.
 */
int pcapw_write(struct pcapw *w, const void *frame, size_t len, const struct timespec *ts);

/*
 * pcapw_flush - push buffered frames to the file (fflush), so a reader sees
 * them while the writer stays open.  Returns 0, or -1 with errno set.
 */
int pcapw_flush(struct pcapw *w);

/*
 * pcapw_close - flush, close the file and free the writer.  NULL is a no-op.
 * Returns 0, or -1 with errno set if flushing failed now or any earlier
 * write or flush failed (errno of the first such failure); the writer is
 * freed either way.
 */
int pcapw_close(struct pcapw *w);

/* Number of frames written so far. */
uint64_t pcapw_frames(const struct pcapw *w);

/* Message of the last error of W ("" if none); valid until the next call. */
const char *pcapw_error(const struct pcapw *w);

#endif /* UROCE_NETSTACK_PCAP_WRITER_H */
