/*
 * abi_version.h - which libibverbs releases the provider's declarations fit.
 *
 * The provider is built against include/uroce/verbs_provider.h, whose layout
 * is rdma-core 44's. The private ABI number (the -rdmav34 suffix) does not pin
 * a layout, so at load time the provider finds the file libibverbs was loaded
 * from and reads its exact release out of the name
 * (libibverbs.so.1.<abi>.<release>.<minor>); see docs/provider-abi.md §4.3.
 */
#ifndef UROCE_PROVIDER_ABI_VERSION_H
#define UROCE_PROVIDER_ABI_VERSION_H

#include <stdbool.h>
#include <stddef.h>

/* The numbers in a libibverbs file name libibverbs.so.1.<abi>.<release>.<minor>. */
struct uroce_ibverbs_version {
	unsigned int abi;     /* library minor ABI, 14 for rdma-core 44 */
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
 * True iff verbs_provider.h describes the layout of this release: rdma-core
 * 44.x (PABI 34, libibverbs ABI 14). v43 and v45 differ in verbs_qp.
 */
bool uroce_ibverbs_layout_known(const struct uroce_ibverbs_version *v);

/*
 * Finds the libibverbs that this process resolved verbs_register_driver_34
 * from (dladdr + realpath) and checks it. Returns 0 if its layout is known.
 * Otherwise returns -1 with errno ENOTSUP and writes a one-line reason
 * (without newline) into why[why_len].
 */
int uroce_check_loaded_ibverbs(char *why, size_t why_len);

#endif
