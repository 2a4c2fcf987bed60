/*
 * svg_util.c - XML escaping and axis ticks for the SVG pictures (see
 * svg_util.h).
 */
#include "config.h"

#include "svg_util.h"

#include <math.h>

void svg_text(FILE *fp, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", fp);
			break;
		case '<':
			fputs("&lt;", fp);
			break;
		case '>':
			fputs("&gt;", fp);
			break;
		case '"':
			fputs("&quot;", fp);
			break;
		default:
			fputc((unsigned char)*s < 0x20 ? '?' : *s, fp);
		}
	}
}

double svg_tick_step(double range, int n)
{
	double raw = range / (n > 0 ? n : 1), p, m;

	if (!(raw > 0))
		return 1;
	p = pow(10, floor(log10(raw)));
	m = raw / p;
	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

const char *svg_time_unit(double step_ns, double *div)
{
	if (step_ns >= 1e8) {
		*div = 1e9;
		return "s";
	}
	if (step_ns >= 1e5) {
		*div = 1e6;
		return "ms";
	}
	if (step_ns >= 1e2) {
		*div = 1e3;
		return "\xc2\xb5s";	/* µs, UTF-8 */
	}
	*div = 1;
	return "ns";
}

void svg_number(char *buf, size_t len, double v, double step)
{
	int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);

	if (dec > 6)
		dec = 6;
	snprintf(buf, len, "%.*f", dec, fabs(v) < step / 1e6 ? 0.0 : v);
}
