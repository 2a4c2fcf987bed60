/*
 * log.c - uroced's log (see log.h): timestamped lines to a file or stderr.
 */
#include "config.h"
#include "emu/log.h"

#include <stdarg.h>
#include <stdlib.h>
#include <time.h>

static FILE *log_fp;
static enum ulog_level log_level = ULOG_INFO;

static const char *const level_name[] = { "error", "warn", "info", "debug" };

int ulog_open(const char *path)
{
	FILE *fp;

	if (getenv("UROCED_DEBUG"))
		log_level = ULOG_DEBUG;
	if (!path)
		return 0;
	fp = fopen(path, "ae");
	if (!fp)
		return -1;
	setvbuf(fp, NULL, _IOLBF, 0);
	ulog_close();
	log_fp = fp;
	return 0;
}

void ulog_set_level(enum ulog_level level)
{
	log_level = level;
}

void ulog_close(void)
{
	if (log_fp)
		fclose(log_fp);
	log_fp = NULL;
}

void ulog(enum ulog_level level, const char *fmt, ...)
{
	FILE *fp = log_fp ? log_fp : stderr;
	struct timespec ts;
	struct tm tm;
	char when[32];
	va_list ap;

	if (level > log_level)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(fp, "%s.%06ldZ uroced %s: ", when, ts.tv_nsec / 1000, level_name[level]);
	va_start(ap, fmt);
	vfprintf(fp, fmt, ap);
	va_end(ap);
	fputc('\n', fp);
}
