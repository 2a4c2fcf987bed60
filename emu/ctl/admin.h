/*
 * admin.h - daemon-side administration helpers shared by the admin handlers
 * (admin.c) and main.c (--pcap at start-up, shutdown).
 */
#ifndef UROCE_EMU_ADMIN_H
#define UROCE_EMU_ADMIN_H

#include <stddef.h>
#include <stdio.h>

struct uroce_dev;

/* Write the status text (format: docs/daemon.md) to FP. Returns 0 or EIO. */
int admin_write_status(struct uroce_dev *d, FILE *fp);

/* Start a capture into PATH (pcap, LINKTYPE_RAW). Returns 0, EBUSY (one
 * runs), or the errno of opening PATH (message in ERR). */
int admin_capture_open(struct uroce_dev *d, const char *path, char *err, size_t errlen);

/* Stop the running capture. Returns 0, ENOENT (none runs) or a write errno. */
int admin_capture_close(struct uroce_dev *d);

/*
 * admin_client_main - `uroced --admin SOCK CMD...`: send one admin request and
 * print the result. ARGV[0] is the first word after SOCK.
 * Returns the exit status: 0 ok, 1 the daemon refused (message on stderr),
 * 2 cannot connect (or a usage error).
 */
int admin_client_main(const char *sock, int argc, char **argv);

#endif
