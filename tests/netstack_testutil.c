/*
 * netstack_testutil.c - hex decoding and the ICRC vector loader for the
 * netstack unit tests.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netstack_testutil.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

long nt_hex_decode(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = strlen(hex);

	if (n % 2 || n / 2 > cap)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return (long)(n / 2);
}

const char *nt_srcdir_path(char *buf, size_t cap, const char *rel)
{
	const char *top = getenv("top_srcdir");

	snprintf(buf, cap, "%s/%s", top && *top ? top : ".", rel);
	return buf;
}

struct icrc_vector *nt_load_vectors(const char *path, size_t *n)
{
	FILE *f = fopen(path, "r");
	struct icrc_vector *v = NULL;
	size_t cnt = 0;
	char line[8192];

	ck_assert_msg(f != NULL, "cannot open %s", path);
	while (fgets(line, sizeof(line), f)) {
		char *fields[4], *save = NULL, *tok;
		int k = 0;

		line[strcspn(line, "\r\n")] = 0;
		if (line[0] == '#' || line[0] == 0 || strncmp(line, "id\t", 3) == 0)
			continue;
		for (tok = strtok_r(line, "\t", &save); tok && k < 4; tok = strtok_r(NULL, "\t", &save))
			fields[k++] = tok;
		ck_assert_msg(k == 4, "%s: line with %d fields", path, k);
		v = realloc(v, (cnt + 1) * sizeof(*v));
		ck_assert_ptr_nonnull(v);
		struct icrc_vector *e = &v[cnt++];
		memset(e, 0, sizeof(*e));
		snprintf(e->id, sizeof(e->id), "%s", fields[0]);
		snprintf(e->desc, sizeof(e->desc), "%s", fields[1]);
		ck_assert_msg(nt_hex_decode(fields[2], e->icrc_wire, 4) == 4, "%s: bad icrc", e->id);
		long fl = nt_hex_decode(fields[3], e->frame, sizeof(e->frame));
		ck_assert_msg(fl > 18, "%s: bad frame", e->id);
		e->frame_len = (size_t)fl;
	}
	fclose(f);
	*n = cnt;
	return v;
}
