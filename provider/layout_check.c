/*
 * layout_check.c - compile-time proof that verbs_provider.h matches rdma-core 44.
 *
 * verbs_provider_layout.h is generated at build time from
 * provider/abi/rdma-core-v44-layout.tsv by scripts/gen-layout-asserts: one
 * _Static_assert per struct size, field offset and field size. This file has
 * no code; if it compiles, the layout is right.
 */
#include "config.h"

#include <uroce/verbs_provider.h>
#include "verbs_provider_layout.h"
