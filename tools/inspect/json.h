/*
 * inspect_json.h - a tiny streaming JSON writer for `uroce inspect --json`:
 * one object per line, keys in the order written, no allocation.
 * Strings are escaped per RFC 8259 §7; integers are written exactly
 * (64-bit values may exceed 2^53: readers in JavaScript should beware).
 */
#ifndef UROCE_TOOLS_INSPECT_JSON_H
#define UROCE_TOOLS_INSPECT_JSON_H

#include <stdint.h>
#include <stdio.h>

#define JSONW_MAX_DEPTH 8

struct jsonw {
	FILE *fp;
	int depth;
	int first[JSONW_MAX_DEPTH];	/* no member written yet at this level */
};

/* Start a top-level object on FP. */
void jsonw_begin(struct jsonw *j, FILE *fp);
/* Close the top-level object and end the line. */
void jsonw_end(struct jsonw *j);
/* Open / close a nested object under KEY (nesting up to JSONW_MAX_DEPTH). */
void jsonw_obj(struct jsonw *j, const char *key);
void jsonw_obj_end(struct jsonw *j);
/* Members. */
void jsonw_str(struct jsonw *j, const char *key, const char *val);
void jsonw_u64(struct jsonw *j, const char *key, uint64_t val);
void jsonw_bool(struct jsonw *j, const char *key, int val);
/* An array of N small unsigned integers. */
void jsonw_u16_array(struct jsonw *j, const char *key, const uint16_t *vals, unsigned n);
/* A string "0x%0*x" (e.g. the ICRC as 8 hex digits). */
void jsonw_hex(struct jsonw *j, const char *key, uint64_t val, int digits);
/* Only KEY and its colon: the caller writes the value (an array) to j->fp. */
void jsonw_key(struct jsonw *j, const char *key);

#endif /* UROCE_TOOLS_INSPECT_JSON_H */
