/*
 * ucma_hook.c - intercepting librdmacm's open/write/close/fstat of
 * /dev/infiniband/rdma_cm (ucma.h; docs/rdma-cm.md, "Provider").
 *
 * librdmacm.so.1 calls these libc functions through its own GOT; got_hook.c
 * puts the hooks below in its slots, so only librdmacm's calls are seen.
 * librdmacm is found by a symbol it defines (rdma_create_event_channel), in
 * every loaded object, never by file name.
 *
 * When: librdmacm's ucma_init (librdmacm/cma.c, rdma-core 44) reads
 * class/misc/rdma_cm/abi_version through libibverbs' ibv_read_sysfs_file
 * (openat(2) from libibverbs) once netlink has no answer (`uroce run` hides
 * it), then calls ibv_get_device_list, and opens rdma_cm only after that.
 *  - librdmacm loaded first (linked to the program): ibv_get_device_list
 *    loads this provider, whose constructor finds librdmacm and patches it.
 *  - libibverbs and the provider first, librdmacm dlopen()ed later (pyverbs):
 *    the provider has patched libibverbs' open and openat; they look again
 *    whenever the set of loaded objects changed (dl_iterate_phdr's
 *    dlpi_adds), so the abi_version read patches librdmacm before it opens
 *    rdma_cm.
 * Each librdmacm is patched once (its load address is remembered).
 *
 * fstat: librdmacm's open_cdev checks that the fd is a character device
 * (S_ISCHR, and st_rdev when netlink named one); the hook says so for a
 * channel (st_rdev 0: the sysfs path sets no number to compare).
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "got_hook.h"
#include "uroce.h"
#include "ucma.h"

/* The path librdmacm opens: RDMA_CDEV_DIR "/" the chardev name ("rdma_cm"). */
#define UCMA_CDEV_PATH "/dev/infiniband/rdma_cm"
/* Most librdmacm copies (distinct load addresses) one process may hold. */
#define UCMA_MAX_LIBS 4
#define UCMA_MAX_OBJS 512

struct ucma_libc ucma_libc;

/* libibverbs' own open and openat, hooked to see librdmacm being loaded. */
static int (*ibv_open)(const char *path, int flags, ...);
static int (*ibv_openat)(int dirfd, const char *path, int flags, ...);

static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long scanned_adds = ~0ULL;
static uintptr_t patched[UCMA_MAX_LIBS];
static int n_patched;
static bool warned;

/* ------------------------------------------------------------ librdmacm's hooks */

static mode_t open_mode(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, mode_t) : 0;
}

static int hook_open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;
	int fd;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	if (path && strcmp(path, UCMA_CDEV_PATH) == 0) {
		fd = ucma_chan_open(flags);
		if (fd >= 0 || errno != ENODEV)
			return fd;
		/* No uroce device: a kernel rdma_cm, if there is one. */
	}
	return ucma_libc.open(path, flags, mode);
}

static ssize_t hook_write(int fd, const void *buf, size_t count)
{
	struct ucma_chan *ch = ucma_chan_get(fd);
	ssize_t n;

	if (!ch)
		return ucma_libc.write(fd, buf, count);
	n = ucma_cmd_write(ch, buf, count);
	ucma_chan_put(ch);
	return n;
}

static int hook_close(int fd)
{
	ucma_chan_close(fd);
	return ucma_libc.close(fd);
}

static int hook_fstat(int fd, struct stat *st)
{
	struct ucma_chan *ch = ucma_chan_get(fd);
	int ret;

	ret = ucma_libc.fstat(fd, st);
	if (ch) {
		if (!ret) {
			st->st_mode = S_IFCHR | 0666;
			st->st_rdev = 0;
		}
		ucma_chan_put(ch);
	}
	return ret;
}

/* ------------------------------------------------------------ finding librdmacm */

struct obj_list {
	unsigned long long adds;
	int n;
	char *names[UCMA_MAX_OBJS];
	uintptr_t bases[UCMA_MAX_OBJS];
};

static int collect(struct dl_phdr_info *info, size_t size, void *data)
{
	struct obj_list *l = data;

	(void)size;
	l->adds = info->dlpi_adds;
	if (info->dlpi_name && info->dlpi_name[0] && l->n < UCMA_MAX_OBJS) {
		l->names[l->n] = strdup(info->dlpi_name);
		l->bases[l->n] = info->dlpi_addr;
		if (l->names[l->n])
			l->n++;
	}
	return 0;
}

static int first_adds(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(unsigned long long *)data = info->dlpi_adds;
	return 1;
}

/* Patches the librdmacm that defines sym (load address base). */
static void patch_rdmacm(const void *sym, const char *file)
{
	char why[256];
	const struct uroce_got_patch p[] = {
		{ "fstat", (void *)hook_fstat, (void **)&ucma_libc.fstat },
		{ "close", (void *)hook_close, (void **)&ucma_libc.close },
		{ "write", (void *)hook_write, (void **)&ucma_libc.write },
		{ "open", (void *)hook_open, (void **)&ucma_libc.open },
	};
	int err;

	err = uroce_got_patch_lib(sym, p, sizeof(p) / sizeof(p[0]), why, sizeof(why));
	if (err) {
		/* open is patched last: unpatched, librdmacm opens the path itself
		 * and fails (no such node), a clear error and never a stray fd. */
		if (!warned)
			fprintf(stderr, UROCE_LOG_PREFIX "librdmacm (%s) cannot be intercepted, "
				"rdma_cm calls will fail: %s\n", file, why);
		warned = true;
	}
}

void uroce_ucma_scan(void)
{
	struct obj_list *l;
	unsigned long long adds = 0;

	dl_iterate_phdr(first_adds, &adds);
	if (__atomic_load_n(&scanned_adds, __ATOMIC_ACQUIRE) == adds)
		return;
	pthread_mutex_lock(&scan_lock);
	l = calloc(1, sizeof(*l));
	if (!l) {
		pthread_mutex_unlock(&scan_lock);
		return;
	}
	dl_iterate_phdr(collect, l);
	for (int i = 0; i < l->n; i++) {
		struct link_map *lm = NULL;
		void *h = dlopen(l->names[i], RTLD_NOLOAD | RTLD_LAZY);
		void *sym = h ? dlsym(h, "rdma_create_event_channel") : NULL;
		bool done = false;
		Dl_info info;

		/* dlsym also searches the object's dependencies: keep the definer only. */
		if (sym && dladdr1(sym, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm &&
		    lm->l_addr == l->bases[i]) {
			for (int k = 0; k < n_patched; k++)
				done |= patched[k] == l->bases[i];
			if (!done && n_patched < UCMA_MAX_LIBS) {
				patched[n_patched++] = l->bases[i];
				patch_rdmacm(sym, l->names[i]);
			}
		}
		if (h)
			dlclose(h);
		free(l->names[i]);
	}
	__atomic_store_n(&scanned_adds, l->adds, __ATOMIC_RELEASE);
	free(l);
	pthread_mutex_unlock(&scan_lock);
}

/* ------------------------------------------------------------ libibverbs' open/openat */

static int hook_ibv_open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	uroce_ucma_scan();
	return ibv_open(path, flags, mode);
}

static int hook_ibv_openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	uroce_ucma_scan();
	return ibv_openat(dirfd, path, flags, mode);
}

void uroce_ucma_init(void)
{
	char why[256];
	const struct uroce_got_patch p[] = {
		{ "open", (void *)hook_ibv_open, (void **)&ibv_open },
		{ "openat", (void *)hook_ibv_openat, (void **)&ibv_openat },
	};

	if (uroce_got_patch_lib((const void *)uroce_verbs_register_driver, p,
				sizeof(p) / sizeof(p[0]), why, sizeof(why)))
		fprintf(stderr, UROCE_LOG_PREFIX "a librdmacm loaded after this provider will "
			"not be intercepted: %s\n", why);
	uroce_ucma_scan();
}
