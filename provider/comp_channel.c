/*
 * comp_channel.c - completion channels by interception of libibverbs' write/close/read.
 *
 * libibverbs 44 creates a completion channel with
 *   write(cmd_fd, {hdr{command=17, in_words=4, out_words=1}, u64 response}, 16)
 * and then trusts that the kernel stored a new fd in
 * ((struct ib_uverbs_create_comp_channel_resp *)response)->fd
 * (verbs.c:ibv_create_comp_channel via cmd_fallback.c:_execute_cmd_write).
 * Our cmd_fd is /dev/null, so nobody would fill it in.
 *
 * Mechanism (provider-abi.md §5): libibverbs.so.1 calls write(), close() and read()
 * through its GOT. We locate that library by dladdr of a symbol it defines
 * (not by file name), walk its dynamic section for the JUMP_SLOT/GLOB_DAT
 * relocations of "write", "close" and "read", make the (RELRO, read-only) GOT page
 * writable for one atomic 8-byte store each, and restore the protection. Only
 * libibverbs' own calls are affected; everything else in the process still
 * calls libc directly. The hooks chain to the previous GOT values.
 *
 *  write(fd, ...): fd is one of our cmd_fds and the command is 17 -> make a
 *      SOCK_SEQPACKET socketpair, put one end in the response, keep the other
 *      (the daemon gets a dup of it at CQ creation and writes 8-byte
 *      ib_uverbs_comp_event_desc records into it); any other command on a
 *      cmd_fd -> -1/EOPNOTSUPP; any other fd -> the original write.
 *  close(fd): fd is a channel we made (ibv_destroy_comp_channel) -> also
 *      close our end; then the original close.
 *  read(fd, ...): fd is a blocking channel we made, serving one CQ
 *      (ibv_get_cq_event) -> an event whose CQ has nothing to poll is held
 *      back: the CQ is re-armed (uroce_cq_event_is_stale) and, if a newer
 *      event comes within UROCE_STALE_EVENT_WAIT_MS, that one is returned
 *      instead; otherwise the held one is, late but as the spec wants it.
 *      Why: verbs applications re-arm, then poll; a CQE written between the
 *      two fires an event although that very poll consumes the CQE. The
 *      application then reads an event for an empty CQ, and some treat the
 *      ENOENT of the poll that follows as an error (ibv_rc_pingpong -t -e).
 *      On a NIC the window is a few hundred ns; here the re-arm's doorbell
 *      wakes the daemon inside it. Non-blocking readers, and channels shared
 *      by several CQs, get every event as it comes.
 *
 * Destroying a CQ takes its unread records out of the channel, as the kernel
 * drops them (uroce_chan_drop_cq_events): otherwise a later
 * ibv_get_cq_event would return the freed CQ.
 *
 * Why a SEQPACKET socketpair: ibv_get_cq_event reads exactly 8 bytes per
 * event; record boundaries are kept, no SIGPIPE on the daemon side with
 * MSG_NOSIGNAL, and an eventfd would sum the values (provider-abi.md §2).
 * Limit: a channel fd closed with the libc close() (not through libibverbs)
 * is not seen, and our end stays open until the process exits.
 */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <rdma/ib_user_verbs.h>

#include <uroce/verbs_provider.h>
#include "comp_channel.h"
#include "uroce.h"

typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef int (*close_fn)(int);
typedef ssize_t (*read_fn)(int, void *, size_t);

static write_fn orig_write;
static close_fn orig_close;
static read_fn orig_read;

static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int install_result = -1;
static int install_errno = EOPNOTSUPP;
static char install_why[200];

/* Our cmd_fds and channels; small, so plain arrays under one mutex. */
struct channel_ent {
	int app_fd;  /* handed to libibverbs as channel->fd */
	int peer_fd; /* ours; dup'ed to the daemon per CQ */
};
/* Live CQs on our channels: the read hook delivers only their events. */
struct chan_cq {
	int app_fd;
	struct ibv_cq *cq;
	unsigned int held; /* read hooks looking at this CQ right now */
};
static pthread_mutex_t tbl_lock = PTHREAD_MUTEX_INITIALIZER;
static int *cmd_fds;
static size_t n_cmd_fds, cap_cmd_fds;
static struct channel_ent *chans;
static size_t n_chans, cap_chans;
static struct chan_cq *chan_cqs;
static size_t n_chan_cqs, cap_chan_cqs;
static pthread_cond_t held_cond = PTHREAD_COND_INITIALIZER;

static bool is_cmd_fd_locked(int fd)
{
	for (size_t i = 0; i < n_cmd_fds; i++)
		if (cmd_fds[i] == fd)
			return true;
	return false;
}

int uroce_chan_register_cmd_fd(int cmd_fd)
{
	int ret = 0;

	pthread_mutex_lock(&tbl_lock);
	if (n_cmd_fds == cap_cmd_fds) {
		size_t cap = cap_cmd_fds ? cap_cmd_fds * 2 : 8;
		int *n = realloc(cmd_fds, cap * sizeof(*n));
		if (!n) {
			ret = -1;
			goto out;
		}
		cmd_fds = n;
		cap_cmd_fds = cap;
	}
	cmd_fds[n_cmd_fds++] = cmd_fd;
out:
	pthread_mutex_unlock(&tbl_lock);
	if (ret)
		errno = ENOMEM;
	return ret;
}

void uroce_chan_unregister_cmd_fd(int cmd_fd)
{
	pthread_mutex_lock(&tbl_lock);
	for (size_t i = 0; i < n_cmd_fds; i++) {
		if (cmd_fds[i] == cmd_fd) {
			cmd_fds[i] = cmd_fds[--n_cmd_fds];
			break;
		}
	}
	pthread_mutex_unlock(&tbl_lock);
}

/* Our channel whose application fd is fd, or NULL. Caller holds tbl_lock. */
static struct channel_ent *find_chan_locked(int fd)
{
	for (size_t i = 0; i < n_chans; i++)
		if (chans[i].app_fd == fd)
			return &chans[i];
	return NULL;
}

int uroce_chan_peer_fd(int channel_fd)
{
	struct channel_ent *e;
	int peer = -1;

	if (install_result != 0) {
		errno = EOPNOTSUPP;
		return -1;
	}
	pthread_mutex_lock(&tbl_lock);
	e = find_chan_locked(channel_fd);
	if (e)
		peer = e->peer_fd;
	pthread_mutex_unlock(&tbl_lock);
	if (peer < 0)
		errno = EBADF;
	return peer;
}

int uroce_chan_drop_cq_events(int channel_fd, uint64_t cq_handle)
{
	struct ib_uverbs_comp_event_desc rec, *keep = NULL, *grown;
	size_t nkeep = 0, cap = 0;
	int peer, dropped = 0;
	ssize_t n;

	peer = uroce_chan_peer_fd(channel_fd);
	if (peer < 0)
		return 0;
	for (;;) {
		n = recv(channel_fd, &rec, sizeof(rec), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break; /* EAGAIN: the channel is empty */
		if (n != (ssize_t)sizeof(rec))
			continue; /* not a record the daemon writes */
		if (rec.cq_handle == cq_handle) {
			dropped++;
			continue;
		}
		if (nkeep == cap) {
			cap = cap ? cap * 2 : 16;
			grown = realloc(keep, cap * sizeof(*keep));
			if (!grown)
				break;
			keep = grown;
		}
		keep[nkeep++] = rec;
	}
	/* Put the other CQs' records back (after any the daemon wrote meanwhile). */
	for (size_t i = 0; i < nkeep; i++) {
		n = send(peer, &keep[i], sizeof(keep[i]), MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n != (ssize_t)sizeof(keep[i]))
			fprintf(stderr, "uroce: a completion event of CQ 0x%" PRIx64 " was lost while "
				"destroying CQ 0x%" PRIx64 ": %s\n", (uint64_t)keep[i].cq_handle,
				cq_handle, n < 0 ? strerror(errno) : "short write");
	}
	free(keep);
	return dropped;
}

const char *uroce_chan_error(void)
{
	return install_result == 0 ? "" : install_why;
}

/* Emulates the kernel's answer to a write() on one of our cmd_fds. */
static ssize_t emulate_cmd(const void *buf, size_t count)
{
	struct ib_uverbs_create_comp_channel_resp *resp;
	struct ib_uverbs_create_comp_channel cmd;
	struct ib_uverbs_cmd_hdr hdr;
	int sv[2];

	if (count < sizeof(hdr)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&hdr, buf, sizeof(hdr));
	if ((hdr.command & IB_USER_VERBS_CMD_FLAG_EXTENDED) ||
	    (hdr.command & IB_USER_VERBS_CMD_COMMAND_MASK) !=
		    IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL) {
		errno = EOPNOTSUPP; /* uroce never forwards kernel commands */
		return -1;
	}
	if (count < sizeof(hdr) + sizeof(cmd) ||
	    hdr.out_words * 4u < sizeof(*resp)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&cmd, (const char *)buf + sizeof(hdr), sizeof(cmd));
	resp = (struct ib_uverbs_create_comp_channel_resp *)(uintptr_t)cmd.response;
	if (!resp) {
		errno = EFAULT;
		return -1;
	}

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -1;
	pthread_mutex_lock(&tbl_lock);
	if (n_chans == cap_chans) {
		size_t cap = cap_chans ? cap_chans * 2 : 8;
		struct channel_ent *n = realloc(chans, cap * sizeof(*n));
		if (!n) {
			pthread_mutex_unlock(&tbl_lock);
			orig_close(sv[0]);
			orig_close(sv[1]);
			errno = ENOMEM;
			return -1;
		}
		chans = n;
		cap_chans = cap;
	}
	chans[n_chans++] = (struct channel_ent){ .app_fd = sv[0], .peer_fd = sv[1] };
	pthread_mutex_unlock(&tbl_lock);
	resp->fd = (uint32_t)sv[0];
	return (ssize_t)count;
}

static ssize_t hook_write(int fd, const void *buf, size_t count)
{
	bool ours;

	pthread_mutex_lock(&tbl_lock);
	ours = is_cmd_fd_locked(fd);
	pthread_mutex_unlock(&tbl_lock);
	if (ours)
		return emulate_cmd(buf, count);
	return orig_write(fd, buf, count);
}

int uroce_chan_add_cq(int channel_fd, struct ibv_cq *cq)
{
	int ret = 0;

	pthread_mutex_lock(&tbl_lock);
	if (n_chan_cqs == cap_chan_cqs) {
		size_t cap = cap_chan_cqs ? cap_chan_cqs * 2 : 8;
		struct chan_cq *n = realloc(chan_cqs, cap * sizeof(*n));

		if (!n) {
			ret = ENOMEM;
			goto out;
		}
		chan_cqs = n;
		cap_chan_cqs = cap;
	}
	chan_cqs[n_chan_cqs++] = (struct chan_cq){ .app_fd = channel_fd, .cq = cq };
out:
	pthread_mutex_unlock(&tbl_lock);
	return ret;
}

static struct chan_cq *find_cq_locked(int fd, struct ibv_cq *cq)
{
	for (size_t i = 0; i < n_chan_cqs; i++)
		if (chan_cqs[i].app_fd == fd && chan_cqs[i].cq == cq)
			return &chan_cqs[i];
	return NULL;
}

void uroce_chan_remove_cq(int channel_fd, struct ibv_cq *cq)
{
	struct chan_cq *e;

	pthread_mutex_lock(&tbl_lock);
	while ((e = find_cq_locked(channel_fd, cq)) && e->held)
		pthread_cond_wait(&held_cond, &tbl_lock);
	if (e)
		*e = chan_cqs[--n_chan_cqs];
	pthread_mutex_unlock(&tbl_lock);
}

/* UROCE_STALE_EVENT_WAIT_MS from the environment (0..60000), else the default. */
static int stale_wait_ms(void)
{
	const char *s = getenv("UROCE_STALE_EVENT_WAIT_MS");
	char *end;
	long v;

	if (!s || !*s)
		return UROCE_STALE_EVENT_WAIT_MS;
	v = strtol(s, &end, 10);
	return (*end || v < 0 || v > 60000) ? UROCE_STALE_EVENT_WAIT_MS : (int)v;
}

static bool is_channel(int fd)
{
	bool ours;

	pthread_mutex_lock(&tbl_lock);
	ours = find_chan_locked(fd) != NULL;
	pthread_mutex_unlock(&tbl_lock);
	return ours;
}

enum cq_take { CQ_GONE, CQ_TAKEN, CQ_HELD };

/*
 * For an event of cq just read from channel fd: CQ_GONE if the CQ was
 * destroyed meanwhile (its event is void, as over the kernel); CQ_HELD if it
 * may be held back (blocking fd, the only CQ of its channel), with a hold
 * that uroce_chan_remove_cq waits for; else CQ_TAKEN. CQ_TAKEN counts the
 * event as read (ibv_destroy_cq then waits for its ack) under the same lock
 * as the destroy, so a delivered event always names a live CQ.
 */
static enum cq_take take_cq(int fd, struct ibv_cq *cq, bool may_hold)
{
	enum cq_take t = CQ_GONE;
	struct chan_cq *e;
	size_t ncq = 0;

	pthread_mutex_lock(&tbl_lock);
	e = find_cq_locked(fd, cq);
	for (size_t i = 0; e && i < n_chan_cqs; i++)
		ncq += chan_cqs[i].app_fd == fd;
	if (e && may_hold && ncq == 1) {
		e->held++;
		t = CQ_HELD;
	} else if (e) {
		uroce_cq_count_event_read(cq);
		t = CQ_TAKEN;
	}
	pthread_mutex_unlock(&tbl_lock);
	return t;
}

static void release_cq(int fd, struct ibv_cq *cq)
{
	struct chan_cq *e;

	pthread_mutex_lock(&tbl_lock);
	e = find_cq_locked(fd, cq);
	if (e && e->held && --e->held == 0)
		pthread_cond_broadcast(&held_cond);
	pthread_mutex_unlock(&tbl_lock);
}

static ssize_t hook_read(int fd, void *buf, size_t count)
{
	struct ib_uverbs_comp_event_desc ev;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	bool blocking, stale;
	struct ibv_cq *cq;
	ssize_t n;
	int fl;

	if (count != sizeof(ev) || !is_channel(fd))
		return orig_read(fd, buf, count);
	fl = fcntl(fd, F_GETFL);
	blocking = fl >= 0 && !(fl & O_NONBLOCK);
	for (;;) {
		n = orig_read(fd, &ev, sizeof(ev));
		if (n != (ssize_t)sizeof(ev))
			return n;
		cq = (struct ibv_cq *)(uintptr_t)ev.cq_handle;
		switch (take_cq(fd, cq, blocking)) {
		case CQ_GONE:
			continue;
		case CQ_TAKEN:
			memcpy(buf, &ev, sizeof(ev));
			return n;
		case CQ_HELD:
			break;
		}
		stale = uroce_cq_event_is_stale(cq);
		release_cq(fd, cq);
		/* A newer event of the same (only) CQ replaces a stale one; without
		 * one in time, the stale one is delivered after all. */
		if (stale && poll(&pfd, 1, stale_wait_ms()) == 1)
			continue;
		if (take_cq(fd, cq, false) == CQ_TAKEN) {
			memcpy(buf, &ev, sizeof(ev));
			return n;
		}
	}
}

static int hook_close(int fd)
{
	struct channel_ent *e;
	int peer = -1;

	pthread_mutex_lock(&tbl_lock);
	e = find_chan_locked(fd);
	if (e) {
		peer = e->peer_fd;
		*e = chans[--n_chans];
	}
	for (size_t i = 0; i < n_cmd_fds; i++) {
		if (cmd_fds[i] == fd) {
			cmd_fds[i] = cmd_fds[--n_cmd_fds];
			break;
		}
	}
	pthread_mutex_unlock(&tbl_lock);
	if (peer >= 0)
		orig_close(peer);
	return orig_close(fd);
}

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

static void do_install(void)
{
	const ElfW(Rela) *jmprel = NULL, *rela = NULL;
	size_t jmprel_sz = 0, rela_sz = 0;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	void **write_slot = NULL, **close_slot = NULL, **read_slot = NULL;
	struct link_map *lm = NULL;
	const char *env_now = getenv("LD_BIND_NOW");
	bool bind_now = env_now && *env_now;
	void *old;
	Dl_info info;

	if (!dladdr1((void *)uroce_verbs_register_driver, &info, (void **)&lm,
		     RTLD_DL_LINKMAP) || !lm) {
		snprintf(install_why, sizeof(install_why), "libibverbs link map not found");
		install_errno = EOPNOTSUPP;
		return;
	}
	for (const ElfW(Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_JMPREL: jmprel = (const void *)dyn_addr(lm, d->d_un.d_ptr); break;
		case DT_PLTRELSZ: jmprel_sz = d->d_un.d_val; break;
		case DT_RELA: rela = (const void *)dyn_addr(lm, d->d_un.d_ptr); break;
		case DT_RELASZ: rela_sz = d->d_un.d_val; break;
		case DT_SYMTAB: symtab = (const void *)dyn_addr(lm, d->d_un.d_ptr); break;
		case DT_STRTAB: strtab = (const void *)dyn_addr(lm, d->d_un.d_ptr); break;
		case DT_BIND_NOW: bind_now = true; break;
		case DT_FLAGS: bind_now |= (d->d_un.d_val & DF_BIND_NOW) != 0; break;
		case DT_FLAGS_1: bind_now |= (d->d_un.d_val & DF_1_NOW) != 0; break;
		}
	}
	if (!symtab || !strtab) {
		snprintf(install_why, sizeof(install_why), "%s has no symbol table", info.dli_fname);
		install_errno = EOPNOTSUPP;
		return;
	}
	if (jmprel)
		scan_relocs(lm, jmprel, jmprel_sz / sizeof(*jmprel), symtab, strtab,
			    &write_slot, &close_slot, &read_slot);
	if (rela)
		scan_relocs(lm, rela, rela_sz / sizeof(*rela), symtab, strtab,
			    &write_slot, &close_slot, &read_slot);
	if (!write_slot || !close_slot || !read_slot) {
		snprintf(install_why, sizeof(install_why),
			 "%s has no GOT entry for write/close/read", info.dli_fname);
		install_errno = EOPNOTSUPP;
		return;
	}
	/*
	 * Chain to what the slots hold now. Debian's libibverbs is linked with
	 * BIND_NOW, so they hold libc's functions; with lazy binding they would
	 * hold PLT stubs whose resolver rewrites the slot, so look the symbols up.
	 */
	if (bind_now) {
		orig_write = (write_fn)*write_slot;
		orig_close = (close_fn)*close_slot;
		orig_read = (read_fn)*read_slot;
	} else {
		orig_write = (write_fn)dlsym(RTLD_DEFAULT, "write");
		orig_close = (close_fn)dlsym(RTLD_DEFAULT, "close");
		orig_read = (read_fn)dlsym(RTLD_DEFAULT, "read");
	}
	if (!orig_write || !orig_close || !orig_read) {
		snprintf(install_why, sizeof(install_why), "cannot resolve libc write/close/read");
		install_errno = EOPNOTSUPP;
		return;
	}
	if (patch_slot(close_slot, (void *)hook_close, &old) ||
	    patch_slot(read_slot, (void *)hook_read, &old) ||
	    patch_slot(write_slot, (void *)hook_write, &old)) {
		install_errno = errno;
		snprintf(install_why, sizeof(install_why),
			 "cannot patch the GOT of %s: %s", info.dli_fname, strerror(errno));
		return;
	}
	install_result = 0;
}
#else
static void do_install(void)
{
	snprintf(install_why, sizeof(install_why),
		 "GOT interception is not implemented for this architecture");
	install_errno = EOPNOTSUPP;
}
#endif

int uroce_chan_install(void)
{
	pthread_once(&install_once, do_install);
	if (install_result != 0)
		errno = install_errno;
	return install_result;
}
