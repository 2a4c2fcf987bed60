/*
 * sysfs_stats.h - the device's port counters, and the daemon's copy of them
 * in the device tree (uroced --sysfs DIR, docs/install.md "Counters"): the
 * files a kernel RDMA device has under /sys/class/infiniband/NAME/ports/1/
 * {state, phys_state, counters/, hw_counters/}.
 */
#ifndef UROCE_EMU_SYSFS_STATS_H
#define UROCE_EMU_SYSFS_STATS_H

#include <stdint.h>

struct uroce_dev;

/* Seconds between two rewrites of the counter files (hw_counters/lifespan
 * says it in milliseconds, as the kernel's does). */
#define SYSFS_STATS_PERIOD 1.0

/*
 * Port 1's counters now. Packets and bytes are the RoCEv2 packets (UDP
 * payloads, BTH to ICRC) the device sent and received; the data counters
 * are those bytes divided by 4, as IBTA's PortXmitData / PortRcvData (Vol 1
 * 16.1.3.5, PortCounters) count 4-byte words. The hw counters carry mlx5's
 * names and meanings, summed over every QP the device had.
 */
struct dev_port_counters {
	uint64_t xmit_data, rcv_data;           /* 4-byte words */
	uint64_t xmit_packets, rcv_packets;
	uint64_t rcv_errors;                    /* malformed or bad ICRC, dropped */
	uint64_t xmit_discards;                 /* not sent: --loss drops and sendto failures */
	uint64_t link_downed;                   /* PORT_ACTIVE -> PORT_DOWN transitions */
	uint64_t duplicate_request;             /* duplicate requests the responder saw */
	uint64_t packet_seq_err;                /* PSN sequence error NAKs received */
	uint64_t local_ack_timeout_err;         /* retransmit timer expiries */
	uint64_t rnr_nak_retry_err;             /* RNR NAKs received */
};

/* Fill PC from the UDP port, the engine and every live and destroyed QP. */
void dev_port_counters(const struct uroce_dev *d, struct dev_port_counters *pc);

/*
 * sysfs_stats_open - DIR is the device's class/infiniband/NAME directory;
 * its ports/1, ports/1/counters and ports/1/hw_counters must exist and be
 * writable by the daemon's (final) user. Writes every file once and then
 * every SYSFS_STATS_PERIOD seconds when a value changed.
 * Returns 0 or the errno of opening a directory or writing a file.
 */
int sysfs_stats_open(struct uroce_dev *d, const char *dir);

/* Rewrite the files whose value changed (no-op without --sysfs). Each file
 * is replaced by rename(2), so a reader sees the old or the new value. */
void sysfs_stats_update(struct uroce_dev *d);

/* Stop the timer and close the directories. */
void sysfs_stats_close(struct uroce_dev *d);

#endif
