/*
 * device.c - the emulated device's identity, limits and port (see device.h).
 */
#include "config.h"
#include "emu/mcast/mcast.h"
#include "emu/nic/device.h"
#include "netstack/pcap_writer.h"
#include "emu/obj/client.h"
#include "emu/nic/engine_glue.h"
#include "emu/nic/sysfs_stats.h"
#include "emu/log.h"
#include "uroce/abi.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum ibv_mtu dev_mtu_enum(uint32_t bytes)
{
	switch (bytes) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	case 4096: return IBV_MTU_4096;
	default: return 0;
	}
}

static void clock_tick(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct uroce_dev *d = w->data;

	hca_clock_update(&d->clock);
	/* a reader following the capture file (inspect --follow) lags at most
	 * one tick behind */
	if (d->capture)
		pcapw_flush(d->capture);
}

static void fill_attr(struct uroce_dev *d)
{
	struct ibv_device_attr *a = &d->attr;

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "%s", PACKAGE_VERSION);
	a->node_guid = htobe64(d->node_guid);
	a->sys_image_guid = htobe64(d->node_guid);
	a->max_mr_size = DEV_MAX_MR_SIZE;
	a->page_size_cap = 4096;
	a->vendor_id = UROCE_VENDOR_ID;
	a->vendor_part_id = UROCE_VENDOR_PART_ID;
	a->hw_ver = 1;
	a->max_qp = DEV_MAX_QP;
	a->max_qp_wr = DEV_MAX_QP_WR;
	/* memory windows type 1 and 2B, as a ConnectX reports them */
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT |
			      IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_MEM_WINDOW |
			      IBV_DEVICE_MEM_WINDOW_TYPE_2B;
	a->max_mw = DEV_MAX_MW;
	a->max_sge = DEV_MAX_SGE;
	a->max_sge_rd = DEV_MAX_SGE;
	a->max_cq = DEV_MAX_CQ;
	a->max_cqe = DEV_MAX_CQE;
	a->max_mr = DEV_MAX_MR;
	a->max_pd = DEV_MAX_PD;
	a->max_qp_rd_atom = DEV_MAX_QP_RD_ATOM;
	a->max_qp_init_rd_atom = DEV_MAX_QP_RD_ATOM;
	a->max_res_rd_atom = DEV_MAX_QP * DEV_MAX_QP_RD_ATOM;
	/* One single-threaded daemon executes every atomic of the device
	 * (docs/transport.md, "Atomics"). */
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_ah = DEV_MAX_AH;
	a->max_mcast_grp = MCAST_MAX_GROUPS;
	a->max_mcast_qp_attach = MCAST_MAX_QP_ATTACH;
	a->max_total_mcast_qp_attach = MCAST_MAX_TOTAL_ATTACH;
	a->max_srq = DEV_MAX_SRQ;
	a->max_srq_wr = DEV_MAX_SRQ_WR;
	a->max_srq_sge = DEV_MAX_SRQ_SGE;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
}

int dev_init(struct uroce_dev *d, struct ev_loop *loop, const char *name,
	     const struct sockaddr *addr, socklen_t addr_len, uint32_t mtu, uint32_t gid_tbl_len,
	     uint64_t clock_khz, uint32_t clock_bits)
{
	const uint8_t *last4;
	int rc;

	memset(d, 0, sizeof(*d));
	d->listen_fd = -1;
	d->udp.fd = -1;
	d->clock.fd = -1;
	d->loop = loop;
	d->pid = getpid();
	d->uid = getuid();
	d->next_client_id = 1;
	if (!name[0] || strlen(name) >= sizeof(d->name)) {
		ulog(ULOG_ERR, "bad device name '%s'", name);
		return EINVAL;
	}
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->active_mtu = dev_mtu_enum(mtu);
	if (!d->active_mtu) {
		ulog(ULOG_ERR, "bad --mtu %u: must be 256, 512, 1024, 2048 or 4096", mtu);
		return EINVAL;
	}
	d->mtu = mtu;
	if (gid_tbl_len < 1 || gid_tbl_len > 128) {
		ulog(ULOG_ERR, "bad --gid-tbl-len %u: must be 1..128", gid_tbl_len);
		return EINVAL;
	}
	d->gid_tbl_len = gid_tbl_len;
	d->port_state = IBV_PORT_ACTIVE;
	memcpy(&d->addr, addr, addr_len);
	d->addr_len = addr_len;
	if (addr->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)addr;

		inet_ntop(AF_INET, &s4->sin_addr, d->addr_str, sizeof(d->addr_str));
		d->port = ntohs(s4->sin_port);
		last4 = (const uint8_t *)&s4->sin_addr;
	} else {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)addr;

		inet_ntop(AF_INET6, &s6->sin6_addr, d->addr_str, sizeof(d->addr_str));
		d->port = ntohs(s6->sin6_port);
		last4 = s6->sin6_addr.s6_addr + 12;
	}
	d->node_guid = uroce_node_guid(last4);
	fill_attr(d);

	rc = hca_clock_init(&d->clock, clock_khz, clock_bits);
	if (rc) {
		ulog(ULOG_ERR, "HCA clock (--clock-khz %llu --clock-bits %u): %s",
		     (unsigned long long)clock_khz, clock_bits, strerror(rc));
		return rc;
	}
	ev_timer_init(&d->clock_timer, clock_tick, d->clock.page->update_period_ns / 1e9,
		      d->clock.page->update_period_ns / 1e9);
	d->clock_timer.data = d;
	ev_timer_start(loop, &d->clock_timer);

	if ((rc = keytab_init(&d->keys, DEV_MAX_MR + DEV_MAX_MW)) || (rc = id_alloc_init(&d->qpns, DEV_QPN_FIRST, DEV_MAX_QP)) ||
	    (rc = id_alloc_init(&d->cqns, 1, DEV_MAX_CQ)) || (rc = id_alloc_init(&d->pdns, 1, DEV_MAX_PD)) ||
	    (rc = id_alloc_init(&d->srqns, 1, DEV_MAX_SRQ)))
		return rc;

	rc = udp_port_open(&d->udp, loop, addr, addr_len);
	if (rc) {
		ulog(ULOG_ERR, "cannot bind UDP %s port %u: %s", d->addr_str, d->port, strerror(rc));
		return rc;
	}
	if (d->port == 0) {
		/* --port 0: the kernel chose a free port; report that one. */
		struct sockaddr_storage b;
		socklen_t bl = sizeof(b);

		if (getsockname(d->udp.fd, (struct sockaddr *)&b, &bl) == 0)
			d->port = ntohs(b.ss_family == AF_INET ? ((struct sockaddr_in *)&b)->sin_port
							       : ((struct sockaddr_in6 *)&b)->sin6_port);
	}
	rc = engine_init(d);
	if (rc) {
		ulog(ULOG_ERR, "transport engine: %s", strerror(rc));
		return rc;
	}
	return 0;
}

void dev_fini(struct uroce_dev *d)
{
	if (d->clock.page)
		ev_timer_stop(d->loop, &d->clock_timer);
	mcast_dev_fini(d);
	engine_fini(d);
	udp_port_close(&d->udp, d->loop);
	hca_clock_fini(&d->clock);
	keytab_fini(&d->keys);
	id_alloc_fini(&d->qpns);
	id_alloc_fini(&d->cqns);
	id_alloc_fini(&d->pdns);
	id_alloc_fini(&d->srqns);
}

void dev_port_attr(const struct uroce_dev *d, struct ibv_port_attr *pa)
{
	memset(pa, 0, sizeof(*pa));
	pa->state = d->port_state;
	pa->max_mtu = IBV_MTU_4096;
	pa->active_mtu = d->active_mtu;
	pa->gid_tbl_len = (int)d->gid_tbl_len;
	pa->max_msg_sz = 1u << 31;
	pa->pkey_tbl_len = 1;
	pa->max_vl_num = 1;            /* VL0 only */
	pa->active_width = 2;          /* 4X */
	pa->active_speed = 32;         /* EDR (25 Gb/s per lane) */
	pa->phys_state = d->port_state == IBV_PORT_ACTIVE ? 5 /* LinkUp */ : 3 /* Disabled */;
	pa->link_layer = IBV_LINK_LAYER_ETHERNET;
}

void dev_set_link(struct uroce_dev *d, bool up)
{
	enum ibv_port_state s = up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	struct ctl_client *c;

	if (d->port_state == s)
		return;
	d->port_state = s;
	if (!up)
		d->link_downed++;
	sysfs_stats_update(d);
	ulog(ULOG_INFO, "%s port 1 %s", d->name, up ? "PORT_ACTIVE" : "PORT_DOWN");
	for (c = d->clients; c; c = c->next)
		if (c->hello)
			client_async_event(c, 1, up ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR);
}
