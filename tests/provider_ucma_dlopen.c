/*
 * provider_ucma_dlopen: the other load order of docs/rdma-cm.md, "Provider":
 * libibverbs loads the provider first (ibv_get_device_list), librdmacm is
 * dlopen()ed later with RTLD_LOCAL (as Python loads pyverbs' rdma_cm module),
 * so its symbols are not global. The provider's hooks on libibverbs'
 * open/openat must patch it when librdmacm's ucma_init reads
 * class/misc/rdma_cm/abi_version, before it opens rdma_cm. This program is
 * not linked to librdmacm. Run under `uroce run` (tests/provider_ucma.sh);
 * each test runs in its own process (Check's fork mode), so each sees its
 * own load order.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "check_main.h"

#define SYM(h, name) ((__typeof__(&name))dlsym(h, #name))

START_TEST(dlopen_after_ibverbs)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(7471) };
	struct rdma_event_channel *ch;
	struct rdma_cm_event *ev = NULL;
	struct ibv_device **l;
	struct rdma_cm_id *id;
	int n = 0;
	void *h;

	l = ibv_get_device_list(&n);
	ck_assert_ptr_nonnull(l);
	ck_assert_int_ge(n, 1);
	ck_assert_ptr_null(dlopen("librdmacm.so.1", RTLD_NOW | RTLD_NOLOAD)); /* not loaded yet */
	h = dlopen("librdmacm.so.1", RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(h != NULL, "dlopen librdmacm: %s", dlerror());
	ck_assert_ptr_null(dlsym(RTLD_DEFAULT, "rdma_create_event_channel")); /* RTLD_LOCAL */

	ch = SYM(h, rdma_create_event_channel)();
	ck_assert_msg(ch != NULL, "rdma_create_event_channel: %s", strerror(errno));
	ck_assert_int_eq(fcntl(ch->fd, F_SETFL, O_NONBLOCK), 0);
	errno = 0;
	ck_assert_int_eq(SYM(h, rdma_get_cm_event)(ch, &ev), -1);
	ck_assert_int_eq(errno, EAGAIN);
	ck_assert_int_eq(SYM(h, rdma_create_id)(ch, &id, NULL, RDMA_PS_TCP), 0);
	ck_assert_int_eq(inet_pton(AF_INET, "192.0.2.99", &sa.sin_addr), 1);
	errno = 0;
	ck_assert_int_eq(SYM(h, rdma_bind_addr)(id, (struct sockaddr *)&sa), -1);
	ck_assert_int_eq(errno, ENODEV);
	ck_assert_int_eq(SYM(h, rdma_destroy_id)(id), 0);
	SYM(h, rdma_destroy_event_channel)(ch);
	ibv_free_device_list(l);
}
END_TEST

/*
 * The third order: librdmacm dlopen()ed RTLD_LOCAL before anything loaded
 * the provider; its ucma_init's ibv_get_device_list loads it, and the
 * constructor finds librdmacm among the loaded objects although none of its
 * symbols is global.
 */
START_TEST(dlopen_before_provider)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(7471) };
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	void *h;

	h = dlopen("librdmacm.so.1", RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(h != NULL, "dlopen librdmacm: %s", dlerror());
	ch = SYM(h, rdma_create_event_channel)();
	ck_assert_msg(ch != NULL, "rdma_create_event_channel: %s", strerror(errno));
	ck_assert_int_eq(SYM(h, rdma_create_id)(ch, &id, NULL, RDMA_PS_UDP), 0);
	ck_assert_int_eq(inet_pton(AF_INET, "192.0.2.99", &sa.sin_addr), 1);
	errno = 0;
	ck_assert_int_eq(SYM(h, rdma_bind_addr)(id, (struct sockaddr *)&sa), -1);
	ck_assert_int_eq(errno, ENODEV);
	ck_assert_int_eq(SYM(h, rdma_destroy_id)(id), 0);
	SYM(h, rdma_destroy_event_channel)(ch);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("provider_ucma_dlopen");
	TCase *tc = tcase_create("order");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, dlopen_after_ibverbs);
	tcase_add_test(tc, dlopen_before_provider);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
