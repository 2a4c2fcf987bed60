/*
 * got_hook.c - patch a library's own GOT slots for libc functions
 * (got_hook.h; docs/provider-abi.md §3): libibverbs' write, close and read
 * (comp_channel.c), its open and openat, and librdmacm's (ucma_hook.c).
 *
 * The slots are found from the library's dynamic section (elf(5)): the
 * JUMP_SLOT / GLOB_DAT relocations of DT_JMPREL and DT_RELA whose symbol has
 * the name asked for. Debian's libibverbs and librdmacm are linked BIND_NOW
 * with full RELRO, so the slots already hold libc's functions and sit in a
 * read-only page that is made writable for the store.
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

/* Finds the GOT slot of each patch's name in one relocation table. */
static void scan_relocs(const struct link_map *lm, const ElfW(Rela) *rel, size_t n,
			const ElfW(Sym) *symtab, const char *strtab,
			const struct uroce_got_patch *p, size_t np, void ***slots)
{
	for (size_t i = 0; i < n; i++) {
		unsigned long type = ELF64_R_TYPE(rel[i].r_info);
		const char *name;

		if (type != R_JUMP_SLOT && type != R_GLOB_DAT)
			continue;
		name = strtab + symtab[ELF64_R_SYM(rel[i].r_info)].st_name;
		for (size_t k = 0; k < np; k++)
			if (strcmp(name, p[k].name) == 0)
				slots[k] = (void **)(lm->l_addr + rel[i].r_offset);
	}
}

/*
 * Fills slots[k] with the library's GOT slot of p[k].name and tells whether
 * it is bound at load time; 0, or EOPNOTSUPP with why.
 */
static int find_slots(const void *sym, const struct uroce_got_patch *p, size_t np,
		      void ***slots, bool *bind_now, const char **file,
		      char *why, size_t why_len)
{
	const ElfW(Rela) *jmprel = NULL, *rela = NULL;
	size_t jmprel_sz = 0, rela_sz = 0;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	struct link_map *lm = NULL;
	const char *env_now = getenv("LD_BIND_NOW");
	Dl_info info;

	*bind_now = env_now && *env_now;
	if (!dladdr1(sym, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm) {
		snprintf(why, why_len, "link map of the library defining %p not found", sym);
		return EOPNOTSUPP;
	}
	*file = info.dli_fname;
	for (const ElfW(Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_JMPREL: jmprel = (const void *)dyn_addr(lm, d->d_un.d_ptr); break;
		case DT_PLTRELSZ: jmprel_sz = d->d_un.d_val; break;
		case DT_RELA: rela = (const void *)dyn_addr(lm, d->d_un.d_ptr); break;
		case DT_RELASZ: rela_sz = d->d_un.d_val; break;
		case DT_SYMTAB: symtab = (const void *)dyn_addr(lm, d->d_un.d_ptr); break;
		case DT_STRTAB: strtab = (const void *)dyn_addr(lm, d->d_un.d_ptr); break;
		case DT_BIND_NOW: *bind_now = true; break;
		case DT_FLAGS: *bind_now |= (d->d_un.d_val & DF_BIND_NOW) != 0; break;
		case DT_FLAGS_1: *bind_now |= (d->d_un.d_val & DF_1_NOW) != 0; break;
		}
	}
	if (!symtab || !strtab) {
		snprintf(why, why_len, "%s has no symbol table", info.dli_fname);
		return EOPNOTSUPP;
	}
	if (jmprel)
		scan_relocs(lm, jmprel, jmprel_sz / sizeof(*jmprel), symtab, strtab, p, np, slots);
	if (rela)
		scan_relocs(lm, rela, rela_sz / sizeof(*rela), symtab, strtab, p, np, slots);
	for (size_t k = 0; k < np; k++) {
		if (!slots[k]) {
			snprintf(why, why_len, "%s has no GOT entry for %s", info.dli_fname, p[k].name);
			return EOPNOTSUPP;
		}
	}
	return 0;
}

int uroce_got_patch_lib(const void *sym, const struct uroce_got_patch *p, size_t np,
			char *why, size_t why_len)
{
	void **slots[UROCE_GOT_PATCH_MAX] = { NULL };
	const char *file = "?";
	bool bind_now;
	void *old;
	int ret;

	if (np > UROCE_GOT_PATCH_MAX) {
		snprintf(why, why_len, "too many GOT patches (%zu)", np);
		return EINVAL;
	}
	ret = find_slots(sym, p, np, slots, &bind_now, &file, why, why_len);
	if (ret)
		return ret;
	/*
	 * Chain to what the slots hold now. Debian's libraries are linked with
	 * BIND_NOW, so they hold libc's functions; with lazy binding they would
	 * hold PLT stubs whose resolver rewrites the slot, so look the symbols up.
	 */
	for (size_t k = 0; k < np; k++) {
		*p[k].orig = bind_now ? *slots[k] : dlsym(RTLD_DEFAULT, p[k].name);
		if (!*p[k].orig) {
			snprintf(why, why_len, "cannot resolve libc %s", p[k].name);
			return EOPNOTSUPP;
		}
	}
	for (size_t k = 0; k < np; k++) {
		if (patch_slot(slots[k], p[k].hook, &old)) {
			ret = errno;
			snprintf(why, why_len, "cannot patch the GOT of %s: %s", file, strerror(ret));
			return ret;
		}
	}
	return 0;
}

int uroce_got_hook_install(const struct uroce_got_fns *hooks, struct uroce_got_fns *orig,
			   char *why, size_t why_len)
{
	/* close and read before write: as soon as write makes channels, they are seen. */
	const struct uroce_got_patch p[] = {
		{ "close", (void *)hooks->close, (void **)&orig->close },
		{ "read", (void *)hooks->read, (void **)&orig->read },
		{ "write", (void *)hooks->write, (void **)&orig->write },
	};

	return uroce_got_patch_lib((const void *)uroce_verbs_register_driver, p,
				   sizeof(p) / sizeof(p[0]), why, why_len);
}
#else
int uroce_got_patch_lib(const void *sym, const struct uroce_got_patch *p, size_t np,
			char *why, size_t why_len)
{
	snprintf(why, why_len, "GOT interception is not implemented for this architecture");
	return EOPNOTSUPP;
}

int uroce_got_hook_install(const struct uroce_got_fns *hooks, struct uroce_got_fns *orig,
			   char *why, size_t why_len)
{
	return uroce_got_patch_lib(NULL, NULL, 0, why, why_len);
}
#endif
