/*
 * log.h - uroced's log: one line per event, "TIME LEVEL message", to the log
 * file (--log, mode 0600) or stderr. Messages name the client and QPN where
 * they apply; PSNs and memory keys only at the debug level (they are what a
 * forged packet needs, docs/security.md). Warnings a client or a peer can
 * provoke at will go through ulog_limited.
 */
#ifndef UROCE_EMU_LOG_H
#define UROCE_EMU_LOG_H

#include <stdbool.h>
#include <stdio.h>

enum ulog_level { ULOG_ERR = 0, ULOG_WARN = 1, ULOG_INFO = 2, ULOG_DEBUG = 3 };

/* Send the log to PATH (appended, line-buffered; created mode 0600, an
 * existing file is set to 0600); NULL = stderr.
 * Returns 0, or -1 with errno from open/fchmod. */
int ulog_open(const char *path);

/* Drop messages above LEVEL (default ULOG_INFO; UROCED_DEBUG=1 in the
 * environment gives ULOG_DEBUG). */
void ulog_set_level(enum ulog_level level);

/* Close the log file (back to stderr). */
/* The log's file descriptor, or -1 when the log is stderr. */
int ulog_fd(void);
void ulog_close(void);

/* Write one line (a newline is added). */
void ulog(enum ulog_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Kinds of rate-limited messages (ulog_limited). */
enum ulog_limit {
	ULOG_LIMIT_REFUSED,     /* control requests refused */
	ULOG_LIMIT_QUOTA,       /* quota and descriptor-budget refusals */
	ULOG_LIMIT_ACCEPT,      /* accept(2) failures */
	ULOG_LIMIT_CQ_LOST,     /* completions lost after a CQ overrun */
	ULOG_LIMIT_RX_SRC,      /* RC/UC packets from the wrong source address */
	ULOG_LIMIT_MEM_WB,      /* deferred memory writes that failed (mem_wb.c) */
	ULOG_LIMIT_OBJECT,      /* a client's QPs, SRQs and WQs made, moved, destroyed */
	ULOG_LIMIT_NKINDS
};

/*
 * ulog_limited - ulog(LEVEL, ...) at most once per second per KIND
 * (ULOG_LIMIT_OBJECT: ULOG_OBJECT_PER_SEC times, so the lines of honest
 * setups stay, while a client creating and destroying objects without end
 * cannot fill the disk); the lines suppressed in between are counted and
 * the next line that is written ends with " (N similar messages
 * suppressed)".
 */
void ulog_limited(enum ulog_limit kind, enum ulog_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define ULOG_OBJECT_PER_SEC 200

/* An info line about a client's QP, SRQ or WQ (ULOG_LIMIT_OBJECT). */
#define ulog_object(...) ulog_limited(ULOG_LIMIT_OBJECT, ULOG_INFO, __VA_ARGS__)

/*
 * ulog_limit_due - whether a KIND line at LEVEL would be written now; when
 * not, it is counted as suppressed (as ulog_limited would). For callers
 * whose arguments cost something to build (strerror takes the C library's
 * locale lock): if (ulog_limit_due(k, l)) ulog_limited(k, l, ...).
 */
bool ulog_limit_due(enum ulog_limit kind, enum ulog_level level);

#endif
