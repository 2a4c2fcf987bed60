/*
 * got_hook.c - patch libibverbs' GOT slots for write, close and read
 * (got_hook.h; docs/provider-abi.md §3).
 *
 * The slots are found from libibverbs' dynamic section (elf(5)): the
 * JUMP_SLOT / GLOB_DAT relocations of DT_JMPREL and DT_RELA whose symbol is
 * "write", "close" or "read". Debian's libibverbs is linked BIND_NOW with full
 * RELRO, so the slots already hold libc's functions and sit in a read-only
 * page that is made writable for the store.
 */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <uroce/verbs_provider.h>
#include "got_hook.h"

#if defined(__x86_64__)
#define R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define R_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define R_GLOB_DAT R_AARCH64_GLOB_DAT
#endif

#ifdef R_JUMP_SLOT
/* glibc relocates d_ptr in place on most targets; accept both forms. */
static uintptr_t dyn_addr(const struct link_map *lm, ElfW(Addr) v)
{
	return v < lm->l_addr ? lm->l_addr + v : v;
}

/* The protection of the mapping holding addr, from /proc/self/maps. */
static int page_prot(uintptr_t addr, int *prot)
{
	char line[512], perms[8];
	uintptr_t lo, hi;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s", &lo, &hi, perms) != 3)
			continue;
		if (addr >= lo && addr < hi) {
			fclose(f);
			*prot = (perms[0] == 'r' ? PROT_READ : 0) |
				(perms[1] == 'w' ? PROT_WRITE : 0) |
				(perms[2] == 'x' ? PROT_EXEC : 0);
			return 0;
		}
	}
	fclose(f);
	errno = ENOENT;
	return -1;
}

/* Stores `hook` in one GOT slot, returning the previous value in *old. */
static int patch_slot(void **slot, void *hook, void **old)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t page = (uintptr_t)slot & ~((uintptr_t)pg - 1);
	int prot;

	if (page_prot((uintptr_t)slot, &prot))
		return -1;
	if (!(prot & PROT_WRITE) &&
	    mprotect((void *)page, (size_t)pg, prot | PROT_WRITE))
		return -1;
	*old = __atomic_exchange_n(slot, hook, __ATOMIC_SEQ_CST);
	if (!(prot & PROT_WRITE))
		mprotect((void *)page, (size_t)pg, prot);
	return 0;
}

/* Finds libibverbs' GOT slots for write, close and read in one relocation table. */
static void scan_relocs(const struct link_map *lm, const ElfW(Rela) *rel, size_t n,
			const ElfW(Sym) *symtab, const char *strtab,
			void ***write_slot, void ***close_slot, void ***read_slot)
{
	for (size_t i = 0; i < n; i++) {
		unsigned long type = ELF64_R_TYPE(rel[i].r_info);
		const char *name;

		if (type != R_JUMP_SLOT && type != R_GLOB_DAT)
			continue;
		name = strtab + symtab[ELF64_R_SYM(rel[i].r_info)].st_name;
		if (strcmp(name, "write") == 0)
			*write_slot = (void **)(lm->l_addr + rel[i].r_offset);
		else if (strcmp(name, "close") == 0)
			*close_slot = (void **)(lm->l_addr + rel[i].r_offset);
		else if (strcmp(name, "read") == 0)
			*read_slot = (void **)(lm->l_addr + rel[i].r_offset);
	}
}

/* libibverbs' three GOT slots, and whether it is bound at load time. */
struct got_slots {
	void **write_slot, **close_slot, **read_slot;
	bool bind_now;
	const char *file; /* libibverbs' path, for messages */
};

/* Fills *s from libibverbs' dynamic section; 0, or EOPNOTSUPP with why. */
static int find_slots(struct got_slots *s, char *why, size_t why_len)
{
	const ElfW(Rela) *jmprel = NULL, *rela = NULL;
	size_t jmprel_sz = 0, rela_sz = 0;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	struct link_map *lm = NULL;
	const char *env_now = getenv("LD_BIND_NOW");
	Dl_info info;

	*s = (struct got_slots){ .bind_now = env_now && *env_now };
	if (!dladdr1((void *)uroce_verbs_register_driver, &info, (void **)&lm,
		     RTLD_DL_LINKMAP) || !lm) {
		snprintf(why, why_len, "libibverbs link map not found");
		return EOPNOTSUPP;
	}
	s->file = info.dli_fname;
	for (const ElfW(Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_JMPREL: jmprel = (const void *)dyn_addr(lm, d->d_un.d_ptr); break;
		case DT_PLTRELSZ: jmprel_sz = d->d_un.d_val; break;
		case DT_RELA: rela = (const void *)dyn_addr(lm, d->d_un.d_ptr); break;
		case DT_RELASZ: rela_sz = d->d_un.d_val; break;
		case DT_SYMTAB: symtab = (const void *)dyn_addr(lm, d->d_un.d_ptr); break;
		case DT_STRTAB: strtab = (const void *)dyn_addr(lm, d->d_un.d_ptr); break;
		case DT_BIND_NOW: s->bind_now = true; break;
		case DT_FLAGS: s->bind_now |= (d->d_un.d_val & DF_BIND_NOW) != 0; break;
		case DT_FLAGS_1: s->bind_now |= (d->d_un.d_val & DF_1_NOW) != 0; break;
		}
	}
	if (!symtab || !strtab) {
		snprintf(why, why_len, "%s has no symbol table", info.dli_fname);
		return EOPNOTSUPP;
	}
	if (jmprel)
		scan_relocs(lm, jmprel, jmprel_sz / sizeof(*jmprel), symtab, strtab,
			    &s->write_slot, &s->close_slot, &s->read_slot);
	if (rela)
		scan_relocs(lm, rela, rela_sz / sizeof(*rela), symtab, strtab,
			    &s->write_slot, &s->close_slot, &s->read_slot);
	if (!s->write_slot || !s->close_slot || !s->read_slot) {
		snprintf(why, why_len, "%s has no GOT entry for write/close/read", info.dli_fname);
		return EOPNOTSUPP;
	}
	return 0;
}

int uroce_got_hook_install(const struct uroce_got_fns *hooks, struct uroce_got_fns *orig,
			   char *why, size_t why_len)
{
	struct got_slots s;
	void *old;
	int ret;

	ret = find_slots(&s, why, why_len);
	if (ret)
		return ret;
	/*
	 * Chain to what the slots hold now. Debian's libibverbs is linked with
	 * BIND_NOW, so they hold libc's functions; with lazy binding they would
	 * hold PLT stubs whose resolver rewrites the slot, so look the symbols up.
	 */
	if (s.bind_now) {
		orig->write = (uroce_write_fn)*s.write_slot;
		orig->close = (uroce_close_fn)*s.close_slot;
		orig->read = (uroce_read_fn)*s.read_slot;
	} else {
		orig->write = (uroce_write_fn)dlsym(RTLD_DEFAULT, "write");
		orig->close = (uroce_close_fn)dlsym(RTLD_DEFAULT, "close");
		orig->read = (uroce_read_fn)dlsym(RTLD_DEFAULT, "read");
	}
	if (!orig->write || !orig->close || !orig->read) {
		snprintf(why, why_len, "cannot resolve libc write/close/read");
		return EOPNOTSUPP;
	}
	if (patch_slot(s.close_slot, (void *)hooks->close, &old) ||
	    patch_slot(s.read_slot, (void *)hooks->read, &old) ||
	    patch_slot(s.write_slot, (void *)hooks->write, &old)) {
		ret = errno;
		snprintf(why, why_len, "cannot patch the GOT of %s: %s", s.file, strerror(ret));
		return ret;
	}
	return 0;
}
#else
int uroce_got_hook_install(const struct uroce_got_fns *hooks, struct uroce_got_fns *orig,
			   char *why, size_t why_len)
{
	snprintf(why, why_len, "GOT interception is not implemented for this architecture");
	return EOPNOTSUPP;
}
#endif
