/*
 * layout_check.c - compile-time proof that verbs_provider.h matches the
 * configured rdma-core layout family.
 *
 * verbs_provider_layout.h is generated at build time from the family's
 * provider/abi/rdma-core-vNN-layout.tsv by scripts/gen-layout-asserts: one
 * _Static_assert per struct size, field offset and field size. This file has
 * no code; if it compiles, the layout is right.
 */
#include "config.h"

#include <uroce/verbs_provider.h>
#include "verbs_provider_layout.h"
