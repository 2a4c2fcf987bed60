/*
 * abi_version.h - which libibverbs releases the provider's declarations fit.
 *
 * The provider is built for one layout family of provider/abi/releases.tsv
 * (config.h: UROCE_RDMA_CORE_FIRST to UROCE_RDMA_CORE_LAST). The private ABI
 * number (the -rdmav<PABI> suffix) does not pin a layout, so at load time the
 * provider finds the file libibverbs was loaded from and reads its exact
 * release out of the name (libibverbs.so.1.<abi>.<release>.<minor>); see
 * docs/provider-abi.md §4.4 and §5, docs/provider.md.
 */
#ifndef UROCE_PROVIDER_ABI_VERSION_H
#define UROCE_PROVIDER_ABI_VERSION_H

#include <stdbool.h>
#include <stddef.h>

/* The numbers in a libibverbs file name libibverbs.so.1.<abi>.<release>.<minor>. */
struct uroce_ibverbs_version {
	unsigned int abi;     /* library minor ABI: 14 for rdma-core 39-56, 17 for 64 */
	unsigned int release; /* rdma-core release, e.g. 44 */
	unsigned int minor;   /* rdma-core point release, e.g. 0 */
};

/*
 * Parses the base name of a libibverbs file ("libibverbs.so.1.14.44.0").
 * Returns 0 and fills *v, or -1 with errno EINVAL if the name has another
 * shape (a bare "libibverbs.so.1", trailing garbage, a number over 9999).
 */
int uroce_parse_ibverbs_name(const char *base, struct uroce_ibverbs_version *v);

/*
 * True iff the provider was built for this release's layout family: its
 * rdma-core release lies in [UROCE_RDMA_CORE_FIRST, UROCE_RDMA_CORE_LAST]
 * (e.g. 45-56 for the family of Ubuntu 24.04's 50). The library ABI number
 * is not a layout key and is not checked.
 */
bool uroce_ibverbs_layout_known(const struct uroce_ibverbs_version *v);

/*
 * Finds the libibverbs that this process resolved verbs_register_driver_<PABI>
 * from (dladdr + realpath) and checks it. Returns 0 if its layout is known.
 * Otherwise returns -1 with errno ENOTSUP and writes a one-line reason
 * (without newline) into why[why_len].
 */
int uroce_check_loaded_ibverbs(char *why, size_t why_len);

#endif
