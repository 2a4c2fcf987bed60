/*
 * fault_spec.c - fault configurations as text (see fault_spec.h).
 */
#include "config.h"
#include "emu/nic/fault_spec.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_DURATION_NS 10000000000ull

/* "12.5%" (the % optional) -> ppm; *S advanced past it. */
static int parse_pct(const char **s, uint32_t *ppm)
{
	const char *p = *s;
	uint64_t whole = 0, frac = 0, scale = 10000;
	int digits = 0;

	while (isdigit((unsigned char)*p) && whole <= 100) {
		whole = whole * 10 + (uint64_t)(*p++ - '0');
		digits++;
	}
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p)) {
			if (scale == 1)
				return -1; /* more than 4 decimals */
			scale /= 10;
			frac += (uint64_t)(*p++ - '0') * scale;
			digits++;
		}
	}
	if (!digits || whole > 100 || (whole == 100 && frac))
		return -1;
	if (*p == '%')
		p++;
	*ppm = (uint32_t)(whole * 10000 + frac);
	*s = p;
	return 0;
}

/* Unsigned decimal; *S advanced. */
static int parse_u64(const char **s, uint64_t *v)
{
	const char *p = *s;
	uint64_t x = 0;

	if (!isdigit((unsigned char)*p))
		return -1;
	while (isdigit((unsigned char)*p)) {
		if (x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*p++ - '0');
	}
	*v = x;
	*s = p;
	return 0;
}

/* NUMBER UNIT (ns, us, ms, s) -> ns, at most MAX_DURATION_NS. */
static int parse_dur(const char **s, uint64_t *ns)
{
	static const struct { const char *u; uint64_t mul; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
	};
	uint64_t v;
	size_t i;

	if (parse_u64(s, &v))
		return -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t n = strlen(units[i].u);

		if (!strncmp(*s, units[i].u, n) && !isalpha((unsigned char)(*s)[n])) {
			if (v > MAX_DURATION_NS / units[i].mul)
				return -1;
			*ns = v * units[i].mul;
			*s += n;
			return 0;
		}
	}
	return -1;
}

/* NUMBER pps|Bps|KBps|MBps|GBps. */
static int parse_rate(const char **s, struct fault_cfg *c)
{
	static const struct { const char *u; uint64_t mul; } units[] = {
		{ "pps", 0 }, { "Bps", 1 }, { "KBps", 1000 }, { "MBps", 1000000 }, { "GBps", 1000000000 },
	};
	uint64_t v;
	size_t i;

	if (parse_u64(s, &v) || v == 0 || v > 1000000000000ull)
		return -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(*s, units[i].u))
			continue;
		if (units[i].mul == 0) {
			c->rate_pps = v;
		} else {
			if (v > 1000000000000ull / units[i].mul)
				return -1;
			c->rate_Bps = v * units[i].mul;
		}
		*s += strlen(units[i].u);
		return 0;
	}
	return -1;
}

/* One KEY=VALUE item (NUL-terminated). */
static int parse_item(char *item, struct fault_cfg *c)
{
	char *eq = strchr(item, '=');
	const char *v;
	uint64_t n;

	if (!eq)
		return -1;
	*eq = 0;
	v = eq + 1;
	if (!strcmp(item, "loss")) {
		if (parse_pct(&v, &c->loss))
			return -1;
	} else if (!strcmp(item, "dup")) {
		if (parse_pct(&v, &c->dup))
			return -1;
	} else if (!strcmp(item, "corrupt")) {
		if (parse_pct(&v, &c->corrupt))
			return -1;
	} else if (!strcmp(item, "reorder")) {
		if (parse_pct(&v, &c->reorder) || *v++ != ':' || parse_dur(&v, &c->reorder_max_ns) ||
		    !c->reorder_max_ns)
			return -1;
	} else if (!strcmp(item, "delay")) {
		if (parse_dur(&v, &c->delay_ns) || (*v == ':' && (v++, parse_dur(&v, &c->jitter_ns))))
			return -1;
	} else if (!strcmp(item, "rate")) {
		if (parse_rate(&v, c))
			return -1;
	} else if (!strcmp(item, "burst")) {
		c->ge_on = true;
		c->ge_loss_bad = FAULT_PPM;
		if (parse_pct(&v, &c->ge_p) || *v++ != ':' || parse_pct(&v, &c->ge_r) ||
		    (*v == ':' && (v++, parse_pct(&v, &c->ge_loss_bad))) ||
		    (*v == ':' && (v++, parse_pct(&v, &c->ge_loss_good))))
			return -1;
	} else if (!strcmp(item, "queue")) {
		if (parse_u64(&v, &n) || n < 1 || n > 65536)
			return -1;
		c->queue_cap = (uint32_t)n;
	} else {
		return -1;
	}
	return *v ? -1 : 0;
}

int fault_spec_parse(const char *spec, struct fault_cfg *cfg, char *err, size_t errlen)
{
	char buf[FAULT_SPEC_MAX + 1], *save = NULL, *tok;

	memset(cfg, 0, sizeof(*cfg));
	if (!spec)
		spec = "";
	if (strlen(spec) > FAULT_SPEC_MAX) {
		snprintf(err, errlen, "fault spec longer than %d bytes", FAULT_SPEC_MAX);
		return EINVAL;
	}
	memcpy(buf, spec, strlen(spec) + 1);
	for (tok = strtok_r(buf, " ,\t", &save); tok; tok = strtok_r(NULL, " ,\t", &save)) {
		char copy[FAULT_SPEC_MAX + 1];

		if (!strcmp(tok, "none"))
			continue;
		snprintf(copy, sizeof(copy), "%s", tok);
		if (parse_item(tok, cfg)) {
			snprintf(err, errlen,
				 "bad fault item '%s': expected loss=P%%, dup=P%%, corrupt=P%%, reorder=P%%:TIME, "
				 "delay=TIME[:TIME], rate=Npps|NBps|NKBps|NMBps|NGBps, burst=P%%:R%%[:P%%[:P%%]], "
				 "queue=N (P 0..100, TIME with ns/us/ms/s, at most 10s)",
				 copy);
			return EINVAL;
		}
	}
	return 0;
}

/* Append to BUF (LEN bytes) at *O, printf style; *O may pass LEN (then truncated). */
static void add(char *buf, size_t len, size_t *o, const char *fmt, ...)
{
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(buf + (*o < len ? *o : len), *o < len ? len - *o : 0, fmt, ap);
	va_end(ap);
	if (k > 0)
		*o += (size_t)k;
}

static void add_pct(char *buf, size_t len, size_t *o, uint32_t ppm)
{
	char frac[8];
	int n;

	if (ppm % 10000 == 0) {
		add(buf, len, o, "%u%%", ppm / 10000);
		return;
	}
	n = snprintf(frac, sizeof(frac), "%04u", ppm % 10000);
	while (n > 1 && frac[n - 1] == '0')
		frac[--n] = 0;
	add(buf, len, o, "%u.%s%%", ppm / 10000, frac);
}

static void add_dur(char *buf, size_t len, size_t *o, uint64_t ns)
{
	if (ns && ns % 1000000 == 0)
		add(buf, len, o, "%" PRIu64 "ms", ns / 1000000);
	else if (ns && ns % 1000 == 0)
		add(buf, len, o, "%" PRIu64 "us", ns / 1000);
	else
		add(buf, len, o, "%" PRIu64 "ns", ns);
}

char *fault_spec_format(const struct fault_cfg *c, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = 0;
	if (c->loss)
		add(buf, len, &o, " loss="), add_pct(buf, len, &o, c->loss);
	if (c->dup)
		add(buf, len, &o, " dup="), add_pct(buf, len, &o, c->dup);
	if (c->reorder_max_ns) {
		add(buf, len, &o, " reorder=");
		add_pct(buf, len, &o, c->reorder);
		add(buf, len, &o, ":");
		add_dur(buf, len, &o, c->reorder_max_ns);
	}
	if (c->corrupt)
		add(buf, len, &o, " corrupt="), add_pct(buf, len, &o, c->corrupt);
	if (c->delay_ns || c->jitter_ns) {
		add(buf, len, &o, " delay=");
		add_dur(buf, len, &o, c->delay_ns);
		if (c->jitter_ns)
			add(buf, len, &o, ":"), add_dur(buf, len, &o, c->jitter_ns);
	}
	if (c->rate_pps)
		add(buf, len, &o, " rate=%" PRIu64 "pps", c->rate_pps);
	if (c->rate_Bps)
		add(buf, len, &o, " rate=%" PRIu64 "Bps", c->rate_Bps);
	if (c->ge_on) {
		add(buf, len, &o, " burst=");
		add_pct(buf, len, &o, c->ge_p);
		add(buf, len, &o, ":");
		add_pct(buf, len, &o, c->ge_r);
		add(buf, len, &o, ":");
		add_pct(buf, len, &o, c->ge_loss_bad);
		add(buf, len, &o, ":");
		add_pct(buf, len, &o, c->ge_loss_good);
	}
	if (c->queue_cap && c->queue_cap != FAULT_QUEUE_CAP)
		add(buf, len, &o, " queue=%u", c->queue_cap);
	if (!buf[0] || o >= len) {
		snprintf(buf, len, "none");
		return buf;
	}
	memmove(buf, buf + 1, strlen(buf + 1) + 1);
	return buf;
}
