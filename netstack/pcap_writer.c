/*
 * pcap_writer.c - pcap files on libpcap's dumper (see pcap_writer.h).
 *
 * We open the FILE ourselves so that a failure keeps fopen's errno (libpcap
 * only returns text), and check the stream's error flag after each frame,
 * because pcap_dump() itself reports nothing.
 */
#include "config.h"

#include "netstack/pcap_writer.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* libpcap's own upper bound for snaplen (MAXIMUM_SNAPLEN in pcap-int.h). */
#define PCAPW_MAX_SNAPLEN 262144u

struct pcapw {
	pcap_t *dead;		/* link type, snaplen and timestamp precision */
	pcap_dumper_t *dumper;	/* owns the FILE */
	uint32_t snaplen;
	uint64_t frames;
	int first_errno;	/* first stream error (0 = none), reported again by close */
	char errbuf[PCAPW_ERRBUF_SIZE];
};

static void set_err(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* A writer without its stream: link type, snaplen and the dead handle
 * checked and made; NULL with errno and err set. */
static struct pcapw *pcapw_new(const char *name, enum pcapw_link link, uint32_t snaplen,
			       char *err, size_t errlen)
{
	struct pcapw *w;
	int dlt;

	set_err(err, errlen, "%s", "");
	switch (link) {
	case PCAPW_LINK_RAW:
		dlt = DLT_RAW;		/* written to the file as LINKTYPE_RAW (101) */
		break;
	case PCAPW_LINK_ETHERNET:
		dlt = DLT_EN10MB;
		break;
	default:
		set_err(err, errlen, "pcap writer: unknown link type %d", (int)link);
		errno = EINVAL;
		return NULL;
	}
	if (snaplen == 0)
		snaplen = PCAPW_DEFAULT_SNAPLEN;
	if (!name || snaplen > PCAPW_MAX_SNAPLEN) {
		set_err(err, errlen, "pcap writer: %s", !name ? "no file name" : "snaplen above 262144");
		errno = EINVAL;
		return NULL;
	}

	w = calloc(1, sizeof(*w));
	if (!w) {
		set_err(err, errlen, "pcap writer: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	w->snaplen = snaplen;
	w->dead = pcap_open_dead_with_tstamp_precision(dlt, (int)snaplen, PCAP_TSTAMP_PRECISION_NANO);
	if (!w->dead) {
		free(w);
		set_err(err, errlen, "pcap writer: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	return w;
}

/* Give w its stream fp and write the file header; on failure fp and w are
 * freed. */
static struct pcapw *pcapw_attach(struct pcapw *w, FILE *fp, const char *name, char *err,
				  size_t errlen)
{
	int e;

	/* Writes the 24-byte file header into fp's buffer. */
	w->dumper = pcap_dump_fopen(w->dead, fp);
	if (!w->dumper) {
		set_err(err, errlen, "cannot write %s: %s", name, pcap_geterr(w->dead));
		fclose(fp);
		pcap_close(w->dead);
		free(w);
		errno = EIO;
		return NULL;
	}
	if (pcap_dump_flush(w->dumper) != 0) {
		e = errno ? errno : EIO;
		set_err(err, errlen, "cannot write %s: %s", name, strerror(e));
		pcap_dump_close(w->dumper);
		pcap_close(w->dead);
		free(w);
		errno = e;
		return NULL;
	}
	return w;
}

struct pcapw *pcapw_open(const char *path, enum pcapw_link link, uint32_t snaplen,
			 char *err, size_t errlen)
{
	struct pcapw *w = pcapw_new(path, link, snaplen, err, errlen);
	FILE *fp;
	int e, src;
	char extra;

	if (!w)
		return NULL;
	if (strcmp(path, "-") == 0 || sscanf(path, "fd:%d%c", &src, &extra) == 1) {
		int fd = dup(strcmp(path, "-") == 0 ? STDOUT_FILENO : src);

		fp = fd < 0 ? NULL : fdopen(fd, "wb");
		if (!fp && fd >= 0) {
			e = errno;
			close(fd);
			errno = e;
		}
	} else {
		fp = fopen(path, "wb");
	}
	if (!fp) {
		e = errno;
		set_err(err, errlen, "cannot create %s: %s", path, strerror(e));
		pcap_close(w->dead);
		free(w);
		errno = e;
		return NULL;
	}
	return pcapw_attach(w, fp, path, err, errlen);
}

struct pcapw *pcapw_open_fp(FILE *fp, const char *name, enum pcapw_link link, uint32_t snaplen,
			    char *err, size_t errlen)
{
	struct pcapw *w = pcapw_new(name, link, snaplen, err, errlen);

	if (!w) {
		fclose(fp);
		return NULL;
	}
	return pcapw_attach(w, fp, name, err, errlen);
}

int pcapw_write(struct pcapw *w, const void *frame, size_t len, const struct timespec *ts)
{
	struct pcap_pkthdr hdr;
	struct timespec now;
	FILE *fp;

	if (!w || (!frame && len) || len > UINT32_MAX) {
		if (w)
			set_err(w->errbuf, sizeof(w->errbuf), "pcap write: bad frame argument");
		errno = EINVAL;
		return -1;
	}
	if (!ts) {
		clock_gettime(CLOCK_REALTIME, &now);
		ts = &now;
	}
	if (ts->tv_nsec < 0 || ts->tv_nsec > 999999999L) {
		set_err(w->errbuf, sizeof(w->errbuf), "pcap write: tv_nsec %ld out of range",
			(long)ts->tv_nsec);
		errno = EINVAL;
		return -1;
	}
	/* The record stores seconds as 32 unsigned bits; libpcap would wrap others. */
	if (ts->tv_sec < 0 || (uint64_t)ts->tv_sec > UINT32_MAX) {
		set_err(w->errbuf, sizeof(w->errbuf),
			"pcap write: tv_sec %lld outside the format's 0..4294967295",
			(long long)ts->tv_sec);
		errno = EINVAL;
		return -1;
	}

	memset(&hdr, 0, sizeof(hdr));
	hdr.ts.tv_sec = ts->tv_sec;
	hdr.ts.tv_usec = ts->tv_nsec;	/* nanoseconds: the dumper has nano precision */
	hdr.len = (bpf_u_int32)len;
	hdr.caplen = (bpf_u_int32)(len < w->snaplen ? len : w->snaplen);

	fp = pcap_dump_file(w->dumper);
	errno = 0;
	pcap_dump((u_char *)w->dumper, &hdr, frame);
	if (ferror(fp)) {
		int e = errno ? errno : EIO;

		clearerr(fp);
		if (!w->first_errno)
			w->first_errno = e;
		set_err(w->errbuf, sizeof(w->errbuf), "pcap write: %s", strerror(e));
		errno = e;
		return -1;
	}
	w->frames++;
	return 0;
}

int pcapw_flush(struct pcapw *w)
{
	if (!w) {
		errno = EINVAL;
		return -1;
	}
	errno = 0;
	if (pcap_dump_flush(w->dumper) != 0) {
		int e = errno ? errno : EIO;

		if (!w->first_errno)
			w->first_errno = e;
		set_err(w->errbuf, sizeof(w->errbuf), "pcap flush: %s", strerror(e));
		errno = e;
		return -1;
	}
	return 0;
}

int pcapw_close(struct pcapw *w)
{
	int rc = 0, e = 0;

	if (!w)
		return 0;
	/* pcap_dump_close() fcloses but reports nothing, so flush first and
	 * take the error from there (all data is written by then). */
	errno = 0;
	if (pcap_dump_flush(w->dumper) != 0 || ferror(pcap_dump_file(w->dumper))) {
		e = errno ? errno : EIO;
		rc = -1;
	}
	if (w->first_errno) {
		/* an earlier frame was lost: the file is incomplete */
		e = w->first_errno;
		rc = -1;
	}
	pcap_dump_close(w->dumper);
	pcap_close(w->dead);
	free(w);
	if (rc)
		errno = e;
	return rc;
}

uint64_t pcapw_frames(const struct pcapw *w)
{
	return w ? w->frames : 0;
}

const char *pcapw_error(const struct pcapw *w)
{
	return w ? w->errbuf : "";
}
