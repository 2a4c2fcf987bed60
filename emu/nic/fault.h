/*
 * fault.h - seeded packet loss on the device's transmit path (`uroced --loss
 * PERCENT --seed N`), so lossy-link tests are reproducible.
 */
#ifndef UROCE_EMU_NIC_FAULT_H
#define UROCE_EMU_NIC_FAULT_H

#include <stdbool.h>

struct uroce_dev;

/* Whether to drop the next outgoing packet: true with probability
 * d->loss_percent / 100, from an xorshift64* generator seeded by d->seed
 * (same seed, same packets lost). Never true when loss_percent is 0. */
bool fault_lose_packet(struct uroce_dev *d);

#endif
