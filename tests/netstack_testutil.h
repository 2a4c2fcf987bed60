/*
 * netstack_testutil.h - helpers shared by the netstack unit tests: hex
 * decoding and the ICRC vector file (tests/data/icrc.tsv).
 */
#ifndef UROCE_TESTS_NETSTACK_TESTUTIL_H
#define UROCE_TESTS_NETSTACK_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

/* One vector: an Ethernet frame without FCS whose last 4 bytes are the ICRC. */
struct icrc_vector {
	char id[16];
	char desc[160];
	uint8_t icrc_wire[4]; /* as listed (wire order) */
	uint8_t frame[2048];
	size_t frame_len;
};

/* Decode HEX (even length, no separators) into OUT (cap bytes); returns the
 * byte count or -1 on bad input. */
long nt_hex_decode(const char *hex, uint8_t *out, size_t cap);

/* Path of a file under $top_srcdir (or "." when unset) into BUF. */
const char *nt_srcdir_path(char *buf, size_t cap, const char *rel);

/* Load every vector of PATH into a malloc'd array; *n receives the count.
 * Aborts the test (ck_abort) on a malformed file. */
struct icrc_vector *nt_load_vectors(const char *path, size_t *n);

#endif
