/*
 * traffic_dm.h - shared by traffic_dm.c (device memory through the verbs
 * API) and traffic_dm_proto.c (the same requests as a hostile client sends
 * them on the control socket).
 */
#ifndef UROCE_TESTS_TRAFFIC_DM_H
#define UROCE_TESTS_TRAFFIC_DM_H

#include "check_main.h"

/* Device memory of uroce0 (ibv_query_device_ex max_dm_size, bytes). */
#define DM_DEVICE_BYTES 131072u
/* The per-uid quota of a daemon without --max-dm-per-user (bytes). */
#define DM_USER_BYTES 65536u

/* The test case of the raw-protocol rows; the socket is $UROCE_DM_SOCK. */
TCase *dm_proto_tcase(void);

#endif
