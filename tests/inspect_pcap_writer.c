/*
 * inspect_pcap_writer.c - Check unit tests of netstack/pcap_writer: files
 * written are read back with libpcap's own reader (and their header bytes
 * checked), snaplen truncation, timestamps to the nanosecond, flush while
 * open, and every error path with its errno.
 */
#include "config.h"

#include "check_main.h"
#include <errno.h>
#include <fcntl.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "netstack/pcap_writer.h"

static char dir[] = "/tmp/pcapw_test.XXXXXX";

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	strcpy(dir, "/tmp/pcapw_test.XXXXXX");
}

static const char *file(const char *name)
{
	static char p[256];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

static long file_size(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

/* Table: link type and what the file header must say. */
static const struct {
	enum pcapw_link link;
	int dlt;		/* pcap_datalink() when read back */
	uint32_t linktype;	/* the 32-bit field at file offset 20 */
} links[] = {
	{ PCAPW_LINK_RAW, DLT_RAW, 101 },
	{ PCAPW_LINK_ETHERNET, DLT_EN10MB, 1 },
};

START_TEST(roundtrip)
{
	static const struct timespec ts[3] = {
		{ 1767225600, 0 }, { 1767225600, 123456789 }, { 1767225601, 999999999 },
	};
	uint8_t frames[3][200];
	size_t lens[3] = { 60, 200, 0 };
	char err[PCAPW_ERRBUF_SIZE], perr[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	uint8_t hdr[24];
	struct pcapw *w;
	pcap_t *pc;
	FILE *fp;
	int i;

	for (i = 0; i < 3; i++)
		memset(frames[i], 0x40 + i, sizeof(frames[i]));
	w = pcapw_open(file("a.pcap"), links[_i].link, 100, err, sizeof(err));
	ck_assert_msg(w != NULL, "open: %s", err);
	ck_assert_str_eq(err, "");
	/* The 24-byte file header is on disk before any frame. */
	ck_assert_int_eq(file_size(file("a.pcap")), 24);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(pcapw_write(w, frames[i], lens[i], &ts[i]), 0);
	ck_assert_uint_eq(pcapw_frames(w), 3);
	ck_assert_int_eq(pcapw_flush(w), 0);
	/* 24 + 3 record headers + 60 + 100 (snaplen) + 0 bytes */
	ck_assert_int_eq(file_size(file("a.pcap")), 24 + 3 * 16 + 60 + 100);
	ck_assert_int_eq(pcapw_close(w), 0);

	fp = fopen(file("a.pcap"), "rb");
	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fread(hdr, 1, sizeof(hdr), fp), sizeof(hdr));
	fclose(fp);
	/* nanosecond magic, version 2.4, snaplen 100, link type */
	ck_assert_uint_eq(hdr[0] | hdr[1] << 8 | hdr[2] << 16 | (uint32_t)hdr[3] << 24, 0xa1b23c4d);
	ck_assert_uint_eq(hdr[4] | hdr[5] << 8, 2);
	ck_assert_uint_eq(hdr[6] | hdr[7] << 8, 4);
	ck_assert_uint_eq(hdr[16] | hdr[17] << 8, 100);
	ck_assert_uint_eq(hdr[20] | hdr[21] << 8 | hdr[22] << 16 | (uint32_t)hdr[23] << 24,
			  links[_i].linktype);

	pc = pcap_open_offline_with_tstamp_precision(file("a.pcap"), PCAP_TSTAMP_PRECISION_NANO, perr);
	ck_assert_msg(pc != NULL, "%s", perr);
	ck_assert_int_eq(pcap_datalink(pc), links[_i].dlt);
	for (i = 0; i < 3; i++) {
		size_t cap = lens[i] < 100 ? lens[i] : 100;

		ck_assert_int_eq(pcap_next_ex(pc, &h, &data), 1);
		ck_assert_int_eq(h->ts.tv_sec, ts[i].tv_sec);
		ck_assert_int_eq(h->ts.tv_usec, ts[i].tv_nsec);
		ck_assert_uint_eq(h->len, lens[i]);
		ck_assert_uint_eq(h->caplen, cap);
		ck_assert_int_eq(memcmp(data, frames[i], cap), 0);
	}
	ck_assert_int_eq(pcap_next_ex(pc, &h, &data), PCAP_ERROR_BREAK);
	pcap_close(pc);
}
END_TEST

START_TEST(default_snaplen_and_now)
{
	static uint8_t big[9000];
	struct pcap_pkthdr *h;
	const u_char *data;
	char perr[PCAP_ERRBUF_SIZE];
	struct timespec before;
	struct pcapw *w;
	pcap_t *pc;

	clock_gettime(CLOCK_REALTIME, &before);
	w = pcapw_open(file("b.pcap"), PCAPW_LINK_RAW, 0, NULL, 0);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(pcapw_write(w, big, sizeof(big), NULL), 0);
	ck_assert_int_eq(pcapw_close(w), 0);
	pc = pcap_open_offline(file("b.pcap"), perr);
	ck_assert_ptr_nonnull(pc);
	ck_assert_int_eq(pcap_snapshot(pc), (int)PCAPW_DEFAULT_SNAPLEN);
	ck_assert_int_eq(pcap_next_ex(pc, &h, &data), 1);
	ck_assert_uint_eq(h->caplen, sizeof(big));
	/* NULL timestamp = the current time (not earlier than before the call) */
	ck_assert_int_ge(h->ts.tv_sec, before.tv_sec);
	pcap_close(pc);
}
END_TEST

START_TEST(open_errors)
{
	char err[PCAPW_ERRBUF_SIZE];
	char want[300];

	errno = 0;
	ck_assert_ptr_null(pcapw_open(file("no/such/dir.pcap"), PCAPW_LINK_RAW, 0, err, sizeof(err)));
	ck_assert_int_eq(errno, ENOENT);
	snprintf(want, sizeof(want), "cannot create %s: No such file or directory", file("no/such/dir.pcap"));
	ck_assert_str_eq(err, want);

	errno = 0;
	ck_assert_ptr_null(pcapw_open(file("x.pcap"), (enum pcapw_link)7, 0, err, sizeof(err)));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_str_eq(err, "pcap writer: unknown link type 7");

	errno = 0;
	ck_assert_ptr_null(pcapw_open(file("x.pcap"), PCAPW_LINK_RAW, 262145, err, sizeof(err)));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_str_eq(err, "pcap writer: snaplen above 262144");

	errno = 0;
	ck_assert_ptr_null(pcapw_open(NULL, PCAPW_LINK_RAW, 0, err, sizeof(err)));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_str_eq(err, "pcap writer: no file name");

	/* a directory cannot be created as a file */
	errno = 0;
	ck_assert_ptr_null(pcapw_open(dir, PCAPW_LINK_RAW, 0, err, sizeof(err)));
	ck_assert_int_eq(errno, EISDIR);
	ck_assert_int_eq(access(file("x.pcap"), F_OK), -1);
}
END_TEST

START_TEST(write_errors)
{
	static const uint8_t f[16];
	struct timespec bad = { 1, 1000000000L };
	struct pcapw *w = pcapw_open(file("c.pcap"), PCAPW_LINK_ETHERNET, 0, NULL, 0);

	ck_assert_ptr_nonnull(w);
	ck_assert_str_eq(pcapw_error(w), "");
	errno = 0;
	ck_assert_int_eq(pcapw_write(w, NULL, 4, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_str_eq(pcapw_error(w), "pcap write: bad frame argument");
	errno = 0;
	ck_assert_int_eq(pcapw_write(w, f, sizeof(f), &bad), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_str_eq(pcapw_error(w), "pcap write: tv_nsec 1000000000 out of range");
	/* seconds the record's 32 unsigned bits cannot hold */
	bad.tv_nsec = 0;
	bad.tv_sec = -1;
	errno = 0;
	ck_assert_int_eq(pcapw_write(w, f, sizeof(f), &bad), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_str_eq(pcapw_error(w), "pcap write: tv_sec -1 outside the format's 0..4294967295");
	bad.tv_sec = (time_t)UINT32_MAX + 1;
	ck_assert_int_eq(pcapw_write(w, f, sizeof(f), &bad), -1);
	ck_assert_str_eq(pcapw_error(w), "pcap write: tv_sec 4294967296 outside the format's 0..4294967295");
	/* nothing was written by the failed calls */
	ck_assert_uint_eq(pcapw_frames(w), 0);
	ck_assert_int_eq(pcapw_write(w, NULL, 0, NULL), 0);
	ck_assert_uint_eq(pcapw_frames(w), 1);
	ck_assert_int_eq(pcapw_close(w), 0);
	ck_assert_int_eq(file_size(file("c.pcap")), 24 + 16);

	errno = 0;
	ck_assert_int_eq(pcapw_write(NULL, f, sizeof(f), NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(pcapw_flush(NULL), -1);
	ck_assert_int_eq(pcapw_close(NULL), 0);
	ck_assert_uint_eq(pcapw_frames(NULL), 0);
	ck_assert_str_eq(pcapw_error(NULL), "");
}
END_TEST

/* A full disk: /dev/full fails every write with ENOSPC. */
START_TEST(disk_full)
{
	char err[PCAPW_ERRBUF_SIZE];

	if (access("/dev/full", W_OK) != 0)
		ck_abort_msg("/dev/full is not writable: cannot test ENOSPC");
	errno = 0;
	/* the header is flushed at open, so the error shows there already */
	ck_assert_ptr_null(pcapw_open("/dev/full", PCAPW_LINK_RAW, 0, err, sizeof(err)));
	ck_assert_int_eq(errno, ENOSPC);
	ck_assert_str_eq(err, "cannot write /dev/full: No space left on device");
}
END_TEST

/* A write error after a good open (file size limit, EFBIG) is reported by
 * the write, flush or close that meets it, with errno and message. */
START_TEST(file_too_big)
{
	static uint8_t f[1000];
	struct rlimit lim = { 4096, 4096 };
	struct pcapw *w;
	int i, rc = 0, e = 0;

	signal(SIGXFSZ, SIG_IGN);	/* CK_FORK: only this test's process */
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	w = pcapw_open(file("d.pcap"), PCAPW_LINK_RAW, 0, NULL, 0);
	ck_assert_ptr_nonnull(w);
	for (i = 0; i < 10 && rc == 0; i++) {
		rc = pcapw_write(w, f, sizeof(f), NULL);
		e = errno;
	}
	if (rc == 0) {
		rc = pcapw_flush(w);
		e = errno;
		ck_assert_int_eq(rc, -1);
		ck_assert_str_eq(pcapw_error(w), "pcap flush: File too large");
	} else {
		ck_assert_str_eq(pcapw_error(w), "pcap write: File too large");
	}
	ck_assert_int_eq(e, EFBIG);
	ck_assert_int_eq(pcapw_close(w), -1);
	ck_assert_int_eq(errno, EFBIG);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("pcap_writer");
	TCase *tc = tcase_create("pcap_writer");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, roundtrip, 0, (int)(sizeof(links) / sizeof(links[0])));
	tcase_add_test(tc, default_snaplen_and_now);
	tcase_add_test(tc, open_errors);
	tcase_add_test(tc, write_errors);
	tcase_add_test(tc, disk_full);
	tcase_add_test(tc, file_too_big);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_main_run(suite(), CK_ENV);
}
