/*
 * inspect_json.c - streaming JSON writer (see inspect_json.h).
 */
#include "config.h"

#include "json.h"

#include <inttypes.h>

static void put_string(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(fp, "\\%c", c);
		else if (c < 0x20)
			fprintf(fp, "\\u%04x", c);
		else
			fputc(c, fp);
	}
	fputc('"', fp);
}

static void key(struct jsonw *j, const char *k)
{
	if (!j->first[j->depth])
		fputc(',', j->fp);
	j->first[j->depth] = 0;
	put_string(j->fp, k);
	fputc(':', j->fp);
}

void jsonw_begin(struct jsonw *j, FILE *fp)
{
	j->fp = fp;
	j->depth = 0;
	j->first[0] = 1;
	fputc('{', fp);
}

void jsonw_end(struct jsonw *j)
{
	while (j->depth > 0)
		jsonw_obj_end(j);
	fputs("}\n", j->fp);
}

void jsonw_obj(struct jsonw *j, const char *k)
{
	key(j, k);
	fputc('{', j->fp);
	if (j->depth + 1 < JSONW_MAX_DEPTH)
		j->depth++;
	j->first[j->depth] = 1;
}

void jsonw_obj_end(struct jsonw *j)
{
	fputc('}', j->fp);
	if (j->depth > 0)
		j->depth--;
}

void jsonw_str(struct jsonw *j, const char *k, const char *val)
{
	key(j, k);
	put_string(j->fp, val ? val : "");
}

void jsonw_u64(struct jsonw *j, const char *k, uint64_t val)
{
	key(j, k);
	fprintf(j->fp, "%" PRIu64, val);
}

void jsonw_bool(struct jsonw *j, const char *k, int val)
{
	key(j, k);
	fputs(val ? "true" : "false", j->fp);
}

void jsonw_u16_array(struct jsonw *j, const char *k, const uint16_t *vals, unsigned n)
{
	unsigned i;

	key(j, k);
	fputc('[', j->fp);
	for (i = 0; i < n; i++)
		fprintf(j->fp, "%s%u", i ? "," : "", vals[i]);
	fputc(']', j->fp);
}

void jsonw_hex(struct jsonw *j, const char *k, uint64_t val, int digits)
{
	key(j, k);
	fprintf(j->fp, "\"0x%0*" PRIx64 "\"", digits, val);
}

void jsonw_key(struct jsonw *j, const char *k)
{
	key(j, k);
}
