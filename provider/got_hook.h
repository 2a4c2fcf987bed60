/*
 * got_hook.h - replace libibverbs' own GOT slots for write, close and read.
 *
 * libibverbs.so.1 calls these libc functions through its global offset table;
 * the provider needs to see its write() of command 17 on cmd_fd, its close()
 * of a channel fd and its read() of a completion event (docs/provider-abi.md
 * §3, docs/provider.md "Completion channels"). This module only patches the
 * slots; what the hooks do is comp_channel.c's business.
 */
#ifndef UROCE_PROVIDER_GOT_HOOK_H
#define UROCE_PROVIDER_GOT_HOOK_H

#include <stddef.h>
#include <sys/types.h>

typedef ssize_t (*uroce_write_fn)(int fd, const void *buf, size_t count);
typedef int (*uroce_close_fn)(int fd);
typedef ssize_t (*uroce_read_fn)(int fd, void *buf, size_t count);

/* One function per hooked libc entry point (write(2), close(2), read(2)). */
struct uroce_got_fns {
	uroce_write_fn write;
	uroce_close_fn close;
	uroce_read_fn read;
};

/*
 * uroce_got_hook_install - store hooks->{write,close,read} in the GOT slots of
 * the libibverbs that defines verbs_register_driver_<PABI> (found by dladdr1(3)
 * with RTLD_DL_LINKMAP, not by file name). Each slot is swapped with one atomic
 * 8-byte store while its page is made writable (mprotect(2)); the protection
 * is restored. *orig receives the functions the hooks must chain to: the
 * slots' old values when the library is bound at load time (BIND_NOW, as
 * Debian's is), else libc's symbols (dlsym(3)).
 * Not thread-safe and not idempotent: call once per process.
 * Returns 0, or an errno value (EOPNOTSUPP: unsupported architecture, no link
 * map, no symbol table, no relocation for one of the three names, libc
 * symbols not found; the mprotect(2) errno otherwise) with a one-line reason
 * in why (why_len bytes, NUL-terminated).
 */
int uroce_got_hook_install(const struct uroce_got_fns *hooks, struct uroce_got_fns *orig,
			   char *why, size_t why_len);

#endif
