/*
 * log.h - uroced's log: one line per event, "TIME LEVEL message", to the log
 * file (--log) or stderr. Messages name the client, QPN and PSN where they
 * apply so a run can be followed from the log alone.
 */
#ifndef UROCE_EMU_LOG_H
#define UROCE_EMU_LOG_H

#include <stdio.h>

enum ulog_level { ULOG_ERR = 0, ULOG_WARN = 1, ULOG_INFO = 2, ULOG_DEBUG = 3 };

/* Send the log to PATH (appended, line-buffered); NULL = stderr.
 * Returns 0, or -1 with errno from fopen. */
int ulog_open(const char *path);

/* Drop messages above LEVEL (default ULOG_INFO; UROCED_DEBUG=1 in the
 * environment gives ULOG_DEBUG). */
void ulog_set_level(enum ulog_level level);

/* Close the log file (back to stderr). */
void ulog_close(void);

/* Write one line (a newline is added). */
void ulog(enum ulog_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
