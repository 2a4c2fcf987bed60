/*
 * capture.h - record the device's RoCEv2 traffic into its pcap file
 * (`uroced --pcap FILE`, `uroce capture start`): each UDP payload is wrapped
 * in the IPv4/IPv6 and UDP headers it had on the wire.
 */
#ifndef UROCE_EMU_NIC_CAPTURE_H
#define UROCE_EMU_NIC_CAPTURE_H

#include <stddef.h>

struct uroce_dev;
struct roce_l3;

/* Record one packet (UDP payload PKT of LEN bytes) with the addresses and
 * ports of L3, if a capture runs; a no-op otherwise. */
void capture_packet(struct uroce_dev *d, const struct roce_l3 *l3, const void *pkt, size_t len);

#endif
