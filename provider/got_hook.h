/*
 * got_hook.h - replace a library's own GOT slots for libc functions: libibverbs'
 * write, close and read (below), and any library's (uroce_got_patch_lib).
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

/* One GOT slot to patch: the imported symbol's name, the hook stored in its
 * slot, and where to put the function the hook must chain to. */
struct uroce_got_patch {
	const char *name;
	void *hook;
	void **orig;
};

/* Most patches one uroce_got_patch_lib call takes. */
#define UROCE_GOT_PATCH_MAX 8

/*
 * uroce_got_patch_lib - in the shared object that defines sym (found by
 * dladdr1(3) with RTLD_DL_LINKMAP, never by file name), store p[k].hook in
 * the GOT slot of the imported function p[k].name, for k < np (at most
 * UROCE_GOT_PATCH_MAX), in that order, each with one atomic 8-byte store on
 * a page made writable for it. *p[k].orig receives what the hook chains to
 * (the slot's old value when the library is bound at load time, else
 * dlsym(RTLD_DEFAULT, name)). Patches nothing unless every name has a slot.
 * Not idempotent: patching a slot twice chains the hook to itself.
 * Returns 0, or an errno value (EOPNOTSUPP: unsupported architecture, no link
 * map, no symbol table, a name without a relocation, a libc symbol not found;
 * EINVAL: np too big; the mprotect(2) errno otherwise) with a one-line reason
 * in why (why_len bytes, NUL-terminated).
 */
int uroce_got_patch_lib(const void *sym, const struct uroce_got_patch *p, size_t np,
			char *why, size_t why_len);

#endif
