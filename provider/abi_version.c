/*
 * abi_version.c - refuse to register with a libibverbs whose layout we lack.
 *
 * Called from the provider's constructor before verbs_register_driver_<PABI>:
 * registering with a libibverbs of another layout would corrupt memory (the
 * op table and verbs_qp shift between releases inside one PABI).
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uroce/verbs_provider.h>
#include "abi_version.h"

/* Reads one decimal number of at most 4 digits at *p; advances *p. */
static int read_number(const char **p, unsigned int *out)
{
	unsigned int n = 0;
	int digits = 0;

	while (**p >= '0' && **p <= '9') {
		if (++digits > 4)
			return -1;
		n = n * 10 + (unsigned int)(**p - '0');
		(*p)++;
	}
	if (digits == 0)
		return -1;
	*out = n;
	return 0;
}

int uroce_parse_ibverbs_name(const char *base, struct uroce_ibverbs_version *v)
{
	static const char prefix[] = "libibverbs.so.1.";
	const char *p;

	if (!base || strncmp(base, prefix, sizeof(prefix) - 1) != 0)
		goto bad;
	p = base + sizeof(prefix) - 1;
	if (read_number(&p, &v->abi) || *p++ != '.' ||
	    read_number(&p, &v->release) || *p++ != '.' ||
	    read_number(&p, &v->minor) || *p != '\0')
		goto bad;
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

bool uroce_ibverbs_layout_known(const struct uroce_ibverbs_version *v)
{
	return v->release >= UROCE_RDMA_CORE_FIRST && v->release <= UROCE_RDMA_CORE_LAST;
}

int uroce_check_loaded_ibverbs(char *why, size_t why_len)
{
	struct uroce_ibverbs_version v;
	char real[PATH_MAX];
	const char *base;
	Dl_info info;

	if (!dladdr((void *)uroce_verbs_register_driver, &info) || !info.dli_fname) {
		snprintf(why, why_len, "cannot locate the libibverbs that defines verbs_register_driver_%d",
			 UROCE_PABI_VERSION);
		goto refuse;
	}
	if (!realpath(info.dli_fname, real)) {
		snprintf(why, why_len, "cannot resolve %s: %s", info.dli_fname, strerror(errno));
		goto refuse;
	}
	base = strrchr(real, '/');
	base = base ? base + 1 : real;
	if (uroce_parse_ibverbs_name(base, &v)) {
		snprintf(why, why_len, "cannot read the rdma-core release from %s", real);
		goto refuse;
	}
	if (!uroce_ibverbs_layout_known(&v)) {
		if (UROCE_RDMA_CORE_FIRST == UROCE_RDMA_CORE_LAST)
			snprintf(why, why_len,
				 "%s is rdma-core %u.%u; this provider is built for rdma-core %d only"
				 " (configure --with-rdma-core-version)",
				 real, v.release, v.minor, UROCE_RDMA_CORE_FIRST);
		else
			snprintf(why, why_len,
				 "%s is rdma-core %u.%u; this provider is built for rdma-core %d to %d"
				 " (configure --with-rdma-core-version)",
				 real, v.release, v.minor, UROCE_RDMA_CORE_FIRST, UROCE_RDMA_CORE_LAST);
		goto refuse;
	}
	return 0;
refuse:
	errno = ENOTSUP;
	return -1;
}
