/*
 * admin.c - the server side of `uroced --admin SOCK ...`: status (device,
 * clients, object counts), link up|down, capture start|stop, shutdown.
 * Permission (daemon uid or root) is checked by ctl_server.c. Formats and
 * errors: include/uroce/abi.h (ADMIN_*) and docs/daemon.md.
 */
#include "config.h"
#include "emu/cm/cm.h"
#include "emu/ctl/admin.h"
#include "emu/obj/client.h"
#include "emu/mcast/mcast.h"
#include "emu/nic/device.h"
#include "emu/ctl/quota.h"
#include "emu/nic/capture_stream.h"
#include "emu/nic/mem_wb.h"
#include "emu/nic/sysfs_stats.h"
#include "emu/nic/fault_queue.h"
#include "emu/nic/fault_spec.h"
#include "emu/log.h"
#include "emu/obj/objects.h"
#include "emu/ctl/ops.h"
#include "emu/eth/eth.h"
#include "emu/ctl/qp_state.h"
#include "emu/xport/xport.h"
#include "netstack/pcap_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The QP types of `uroce status` lines. */
static const char *qp_type_str(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" : t == IBV_QPT_XRC_SEND ? "XRC_SEND" :
	       t == IBV_QPT_XRC_RECV ? "XRC_RECV" : "UD";
}

/* A "client" line per verbs client, with an indented line per QP: where
 * each connection stands. */
static void clients_status(const struct uroce_dev *d, FILE *fp)
{
	const struct ctl_client *c;

	for (c = d->clients; c; c = c->next) {
		uint32_t h;

		if (!c->hello)
			continue;
		fprintf(fp, "client id=%u pid=%d uid=%d comm=%s pd=%u mr=%u cq=%u qp=%u ah=%u\n", c->id,
			(int)c->pid, (int)c->uid, c->comm, c->pds.count, c->mrs.count, c->cqs.count,
			c->qps.count, c->ahs.count);
		/* one indented line per QP: where each connection stands */
		for (h = 1; h <= c->qps.cap; h++) {
			const struct ctl_qp *qp = objtab_get(&c->qps, h);

			const struct xport_qp_stats *st;
			struct xport_qp_attr x;

			if (!qp)
				continue;
			if (qp->raw) {
				eth_qp_status(qp, fp);
				continue;
			}
			xport_qp_query(qp->xqp, &x);
			/* PSNs: the engine's current ones (next to send, next expected) */
			fprintf(fp, "  qp qpn=0x%x type=%s state=%s dest_qpn=0x%x sq_psn=0x%x rq_psn=0x%x "
				    "path_mtu=%u",
				qp->qpn, qp_type_str(qp->type),
				qp_state_name(x.qp_state), x.dest_qp_num, xport_qp_sq_psn(qp->xqp),
				xport_qp_rq_psn(qp->xqp), x.path_mtu ? 128u << x.path_mtu : 0);
			st = xport_qp_stats(qp->xqp);
			fprintf(fp, " tx_pkts=%llu rx_pkts=%llu retransmits=%llu timeouts=%llu timeout_copies=%llu "
				    "rnr_naks_rx=%llu seq_naks_rx=%llu dup_requests=%llu read_restarts=%llu dropped=%llu",
				(unsigned long long)st->tx_pkts, (unsigned long long)st->rx_pkts,
				(unsigned long long)st->retransmits, (unsigned long long)st->timeouts,
				(unsigned long long)st->timeout_copies,
				(unsigned long long)st->rnr_naks_rx, (unsigned long long)st->seq_naks_rx,
				(unsigned long long)st->dup_requests,
				(unsigned long long)st->read_restarts, (unsigned long long)st->dropped);
			fputc('\n', fp);
		}
	}
}

int admin_write_status(struct uroce_dev *d, FILE *fp)
{
	struct dev_port_counters pc;

	fprintf(fp, "device %s addr %s port %u mtu %u state %s\n", d->name, d->addr_str, d->port,
		d->mtu, d->port_state == IBV_PORT_ACTIVE ? "PORT_ACTIVE" : "PORT_DOWN");
	fprintf(fp, "daemon pid=%d gid_tbl_len=%u clock_khz=%llu clock_bits=%u\n", (int)d->pid,
		d->gid_tbl_len, (unsigned long long)d->clock.freq_khz, d->clock.bits);
	fprintf(fp, "udp rx_packets=%llu rx_bytes=%llu tx_packets=%llu tx_bytes=%llu tx_dropped=%llu "
		    "tx_errors=%llu tx_too_big=%llu rx_taken=%llu\n",
		(unsigned long long)d->udp.rx_packets, (unsigned long long)d->udp.rx_bytes,
		(unsigned long long)d->udp.tx_packets, (unsigned long long)d->udp.tx_bytes,
		(unsigned long long)d->udp.tx_dropped, (unsigned long long)d->udp.tx_errors,
		(unsigned long long)d->udp.tx_too_big, (unsigned long long)d->rx_taken);
	fprintf(fp, "udp_buffers rcvbuf=%d sndbuf=%d\n", d->udp.rcvbuf, d->udp.sndbuf);
	/* UDP_SEGMENT / UDP_GRO (docs/gso.md): on, off (--no-gso), or the errno
	 * name the kernel refused it with; sends and reads that carried several */
	fprintf(fp, "udp_offload gso=%s gro=%s gso_sends=%llu gso_packets=%llu gso_fallbacks=%llu "
		    "gro_reads=%llu gro_packets=%llu\n",
		d->udp.gso ? "on" : d->udp.gso_refused ? strerrorname_np(d->udp.gso_refused) : "off",
		d->udp.gro ? "on" : d->udp.gro_refused ? strerrorname_np(d->udp.gro_refused) : "off",
		(unsigned long long)d->udp.tx_gso_sends, (unsigned long long)d->udp.tx_gso_packets,
		(unsigned long long)d->udp.tx_gso_fallbacks, (unsigned long long)d->udp.rx_gro_reads,
		(unsigned long long)d->udp.rx_gro_packets);
	/* event-loop turns; reads of datagrams sent to self through the socket
	 * without a wake-up (udp_port_settle); datagrams to self delivered by
	 * the internal loopback and those it sent through the socket (loopback.h) */
	fprintf(fp, "loop turns=%u self_reads=%llu self_reads_empty=%llu loopback=%llu loopback_spilled=%llu\n",
		d->loop ? ev_iteration(d->loop) : 0u, (unsigned long long)d->udp.rx_self_reads,
		(unsigned long long)d->udp.rx_self_empty, (unsigned long long)d->udp.lb.packets,
		(unsigned long long)d->udp.lb.spilled);
	/* --poll-window (poll_window.h): windows opened by traffic, those
	 * that ran out, loop turns polled inside them, turns that found traffic,
	 * windows closed by a stall, traffic turns that found windows shut */
	fprintf(fp, "poll_window usec=%u opened=%llu closed=%llu turns=%llu caught=%llu "
		"stall_usec=%u stalls=%llu shut=%llu\n",
		(unsigned)(d->poll_window.window * 1e6 + 0.5), (unsigned long long)d->poll_window.opened,
		(unsigned long long)d->poll_window.closed, (unsigned long long)d->poll_window.turns,
		(unsigned long long)d->poll_window.caught, (unsigned)(d->poll_window.stall * 1e6 + 0.5),
		(unsigned long long)d->poll_window.stalls, (unsigned long long)d->poll_window.shut);
	/* the clients' doorbell eventfds: reads, and the writes they drained */
	fprintf(fp, "doorbells reads=%llu rings=%llu budget_stops=%llu turn_max=%u shared_stops=%llu shared_max=%u pauses=%llu\n",
		(unsigned long long)d->doorbell_reads, (unsigned long long)d->doorbell_rings,
		(unsigned long long)d->doorbell_budget_stops, d->doorbell_turn_max,
		(unsigned long long)d->doorbell_shared_stops, d->doorbell_shared_max,
		(unsigned long long)d->doorbell_pauses);
	if (d->xdev) {
		const struct xport_dev_stats *xs = xport_dev_stats(d->xdev);

		/* bad: malformed or bad ICRC, dropped before any QP saw it */
		fprintf(fp, "rx_drops bad=%llu no_qp=%llu bad_src=%llu bad_icrc=%llu rcvbuf_full=%llu\n",
			(unsigned long long)xs->rx_bad, (unsigned long long)xs->rx_no_qp,
			(unsigned long long)xs->rx_bad_src, (unsigned long long)xs->rx_bad_icrc,
			(unsigned long long)udp_port_rx_drops(&d->udp));
		/* registered memory read for packets; prefetch: small send
		 * WQEs' payloads read together (docs/transport.md) */
		fprintf(fp, "mem_reads preads=%llu bytes=%llu prefetch_reads=%llu prefetch_wqes=%llu\n",
			(unsigned long long)d->mem_preads, (unsigned long long)d->mem_pread_bytes,
			(unsigned long long)xs->prefetch_reads, (unsigned long long)xs->prefetch_wqes);
		/* request PSNs in flight over all RC QPs (emu/xport/dev_window.c) */
		fprintf(fp, "device_window psns=%u fair=%u in_flight=%u max=%u stops=%llu\n",
			XPORT_DEV_UNACKED_PSNS, XPORT_FAIR_UNACKED_PSNS, xport_dev_unacked(d->xdev),
			xs->window_max, (unsigned long long)xs->window_stops);
	}
	if (d->wb)
		fprintf(fp, "mem_wb staged=%llu pwrites=%llu bytes=%llu mem_write_faults=%llu\n",
			(unsigned long long)d->wb->st.staged, (unsigned long long)d->wb->st.pwrites,
			(unsigned long long)d->wb->st.bytes, (unsigned long long)d->wb->st.faults);
	fault_dev_status(d, fp);
	if (d->vt.on)
		fprintf(fp, "deterministic seed=%llu virtual_ns=%llu\n", (unsigned long long)d->seed,
			(unsigned long long)d->vt.now);
	dev_port_counters(d, &pc);
	/* the port's counters as the device tree has them (docs/install.md) */
	fprintf(fp, "counters port_xmit_data=%llu port_rcv_data=%llu port_xmit_packets=%llu "
		    "port_rcv_packets=%llu port_rcv_errors=%llu port_xmit_discards=%llu link_downed=%llu\n",
		(unsigned long long)pc.xmit_data, (unsigned long long)pc.rcv_data,
		(unsigned long long)pc.xmit_packets, (unsigned long long)pc.rcv_packets,
		(unsigned long long)pc.rcv_errors, (unsigned long long)pc.xmit_discards,
		(unsigned long long)pc.link_downed);
	fprintf(fp, "hw_counters duplicate_request=%llu packet_seq_err=%llu local_ack_timeout_err=%llu "
		    "rnr_nak_retry_err=%llu\n",
		(unsigned long long)pc.duplicate_request, (unsigned long long)pc.packet_seq_err,
		(unsigned long long)pc.local_ack_timeout_err, (unsigned long long)pc.rnr_nak_retry_err);
	quota_status(d, fp);
	eth_status(d, fp);
	mcast_status(d, fp);
	if (d->capture && d->capture_stream)
		fprintf(fp, "capture on file=%s frames=%llu dropped=%llu\n", d->capture_path,
			(unsigned long long)pcapw_frames(d->capture),
			(unsigned long long)capture_stream_dropped(d->capture_stream));
	else if (d->capture)
		fprintf(fp, "capture on file=%s frames=%llu\n", d->capture_path,
			(unsigned long long)pcapw_frames(d->capture));
	else
		fprintf(fp, "capture off\n");
	clients_status(d, fp);
	cm_status(d, fp);
	fprintf(fp, "totals clients=%u pd=%u mr=%u cq=%u qp=%u ah=%u\n", d->n_clients, d->counts.pd,
		d->counts.mr, d->counts.cq, d->counts.qp, d->counts.ah);
	return ferror(fp) ? EIO : 0;
}

int op_admin_status(struct ctl_client *c, struct ctl_call *call)
{
	struct uroce_admin_status_resp *resp = call->resp;
	int fd = memfd_create("uroce-status", MFD_CLOEXEC);
	FILE *fp;
	int rc;

	if (fd < 0)
		return errno;
	fp = fdopen(dup(fd), "w");
	if (!fp) {
		close(fd);
		return ENOMEM;
	}
	sysfs_stats_update(c->dev); /* so the files agree with this report */
	rc = admin_write_status(c->dev, fp);
	resp->text_bytes = (uint64_t)ftell(fp);
	if (fclose(fp) != 0 && !rc)
		rc = EIO;
	if (rc) {
		close(fd);
		return rc;
	}
	lseek(fd, 0, SEEK_SET);
	call->out_fds[0] = fd;
	call->n_out = 1;
	call->close_out = true;
	return 0;
}

int op_admin_link(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_admin_link_req *req = call->req;

	if (req->up > 1 || req->reserved)
		return EINVAL;
	dev_set_link(c->dev, req->up);
	return 0;
}

int admin_capture_open(struct uroce_dev *d, const char *path, char *err, size_t errlen)
{
	struct pcapw *w;

	if (d->capture)
		return EBUSY;
	w = pcapw_open(path, PCAPW_LINK_RAW, 0, err, errlen);
	if (!w)
		return errno ? errno : EIO;
	d->capture = w;
	return 0;
}

int op_admin_capture_start(struct ctl_client *c, struct ctl_call *call)
{
	struct uroce_dev *d = c->dev;
	char path[64], err[PCAPW_ERRBUF_SIZE] = "";
	int fl = fcntl(call->fds[0], F_GETFL);
	struct stat st;
	ssize_t n;
	int rc;

	if (d->capture)
		return EBUSY;
	if (fl < 0 || ((fl & O_ACCMODE) != O_WRONLY && (fl & O_ACCMODE) != O_RDWR))
		return EBADF;
	if (fstat(call->fds[0], &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
		/* a live reader: records go through a queue (capture_stream.c) */
		int fd = fcntl(call->fds[0], F_DUPFD_CLOEXEC, 3);
		FILE *sfp = fd < 0 ? NULL : capture_stream_open(d, fd);

		if (!sfp)
			return errno ? errno : EIO;
		snprintf(path, sizeof(path), "fd:%d", call->fds[0]);
		d->capture = pcapw_open_fp(sfp, path, PCAPW_LINK_RAW, 0, err, sizeof(err));
		rc = d->capture ? 0 : errno ? errno : EIO;
	} else {
		/* A duplicate of the admin's descriptor: the daemon (service user)
		 * may lack the right to open the admin's file itself. */
		snprintf(path, sizeof(path), "fd:%d", call->fds[0]);
		rc = admin_capture_open(d, path, err, sizeof(err));
	}
	if (rc) {
		ulog(ULOG_WARN, "capture start: %s", err[0] ? err : strerror(rc));
		return rc;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", call->fds[0]);
	n = readlink(path, d->capture_path, sizeof(d->capture_path) - 1);
	d->capture_path[n > 0 ? n : 0] = 0;
	ulog(ULOG_INFO, "capture started: %s", d->capture_path);
	return 0;
}

int admin_capture_close(struct uroce_dev *d)
{
	int rc = 0;

	if (!d->capture)
		return ENOENT;
	ulog(ULOG_INFO, "capture stopped: %s (%llu frames)", d->capture_path,
	     (unsigned long long)pcapw_frames(d->capture));
	if (pcapw_close(d->capture) < 0)
		rc = errno ? errno : EIO;
	d->capture = NULL;
	d->capture_path[0] = 0;
	return rc;
}

int op_admin_capture_stop(struct ctl_client *c, struct ctl_call *call)
{
	return admin_capture_close(c->dev);
}

int op_admin_fault(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_admin_fault_req *req = call->req;
	struct fault_cfg cfg;
	char err[512], shown[FAULT_SPEC_MAX + 64];
	int rc;

	if (req->dir > 2 || req->reserved || !memchr(req->spec, 0, sizeof(req->spec)))
		return EINVAL;
	rc = fault_spec_parse(req->spec, &cfg, err, sizeof(err));
	if (rc) {
		ulog(ULOG_WARN, "fault set by pid %d refused: %s", (int)c->pid, err);
		return rc;
	}
	if (req->dir != 1)
		fault_dev_set(c->dev, FAULT_TX, &cfg);
	if (req->dir != 0)
		fault_dev_set(c->dev, FAULT_RX, &cfg);
	ulog(ULOG_INFO, "fault %s set by pid %d: %s", req->dir == 0 ? "tx" : req->dir == 1 ? "rx" : "tx+rx",
	     (int)c->pid, fault_spec_format(&cfg, shown, sizeof(shown)));
	return 0;
}

int op_admin_shutdown(struct ctl_client *c, struct ctl_call *call)
{
	ulog(ULOG_INFO, "shutdown requested by pid %d uid %d", (int)c->pid, (int)c->uid);
	c->dev->stopping = true;
	return 0;
}
