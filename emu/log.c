/*
 * log.c - uroced's log (see log.h): timestamped lines to a file or stderr.
 */
#include "config.h"
#include "emu/log.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
	{
		int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
		struct stat st;

		/* An existing log may have been created with another mode; a
		 * device or FIFO given as the log (/dev/null) keeps its own. */
		if (fd < 0 || fstat(fd, &st) < 0 ||
		    (S_ISREG(st.st_mode) && fchmod(fd, 0600) < 0) || !(fp = fdopen(fd, "a"))) {
			if (fd >= 0)
				close(fd);
			return -1;
		}
	}
	setvbuf(fp, NULL, _IOLBF, 0);
	ulog_close();
	log_fp = fp;
	return 0;
}

void ulog_set_level(enum ulog_level level)
{
	log_level = level;
}

int ulog_fd(void)
{
	return log_fp ? fileno(log_fp) : -1;
}

void ulog_close(void)
{
	if (log_fp)
		fclose(log_fp);
	log_fp = NULL;
}

/* One line: time, level, the message, then SUFFIX (may be ""). */
static void vlog(enum ulog_level level, const char *suffix, const char *fmt, va_list ap)
{
	FILE *fp = log_fp ? log_fp : stderr;
	struct timespec ts;
	struct tm tm;
	char when[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(fp, "%s.%06ldZ uroced %s: ", when, ts.tv_nsec / 1000, level_name[level]);
	vfprintf(fp, fmt, ap);
	fprintf(fp, "%s\n", suffix);
}

void ulog(enum ulog_level level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	vlog(level, "", fmt, ap);
	va_end(ap);
}

static struct {
	uint64_t start_ns;    /* CLOCK_MONOTONIC of the second's first line; 0 = none */
	unsigned int lines;   /* lines written in that second */
	unsigned long long suppressed;
} lim[ULOG_LIMIT_NKINDS];

/* Lines of KIND written a second. */
static unsigned int per_sec(enum ulog_limit kind)
{
	return kind == ULOG_LIMIT_OBJECT ? ULOG_OBJECT_PER_SEC : 1;
}

/* Whether KIND's second, begun at its first line, is still running at NOW. */
static bool second_running(enum ulog_limit kind, uint64_t now)
{
	return lim[kind].start_ns && now - lim[kind].start_ns < 1000000000u;
}

/* Whether that second has had its lines; such a line is counted suppressed. */
static bool limit_full(enum ulog_limit kind, uint64_t now)
{
	if (!second_running(kind, now) || lim[kind].lines < per_sec(kind))
		return false;
	lim[kind].suppressed++;
	return true;
}

/* Whether a KIND line may be written at NOW; counts it, or counts it
 * suppressed. */
static bool limit_take(enum ulog_limit kind, uint64_t now)
{
	if (limit_full(kind, now))
		return false;
	if (!second_running(kind, now)) {
		lim[kind].start_ns = now ? now : 1;
		lim[kind].lines = 0;
	}
	lim[kind].lines++;
	return true;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool ulog_limit_due(enum ulog_limit kind, enum ulog_level level)
{
	if (level > log_level || kind >= ULOG_LIMIT_NKINDS)
		return false;
	return !limit_full(kind, mono_ns());
}

void ulog_limited(enum ulog_limit kind, enum ulog_level level, const char *fmt, ...)
{
	char suffix[64] = "";
	uint64_t now;
	va_list ap;

	if (level > log_level || kind >= ULOG_LIMIT_NKINDS)
		return;
	now = mono_ns();
	if (!limit_take(kind, now))
		return;
	if (lim[kind].suppressed)
		snprintf(suffix, sizeof(suffix), " (%llu similar messages suppressed)", lim[kind].suppressed);
	lim[kind].suppressed = 0;
	va_start(ap, fmt);
	vlog(level, suffix, fmt, ap);
	va_end(ap);
}
