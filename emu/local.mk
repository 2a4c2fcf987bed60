# emu/local.mk: uroced, the emulated NIC (object model in emu/obj, control
# plane in emu/ctl and emu/cm, the NIC in emu/nic, emu/eth and emu/mcast). The daemon's code is a
# convenience library so the unit tests link the same objects; the transport
# engine has its own fragment (emu/xport/local.mk).
noinst_LTLIBRARIES += emu/liburoced.la
emu_liburoced_la_SOURCES = \
	emu/log.c emu/log.h \
	emu/obj/id_alloc.c emu/obj/id_alloc.h \
	emu/obj/keytab.c emu/obj/keytab.h \
	emu/ctl/qp_state.c emu/ctl/qp_state.h \
	emu/nic/hca_clock.c emu/nic/hca_clock.h \
	emu/nic/udp_port.c emu/nic/udp_port.h \
	emu/nic/device.c emu/nic/device.h \
	emu/ctl/client.c emu/obj/client.h \
	emu/obj/objtab.c emu/obj/objtab.h emu/obj/async_event.c emu/obj/async_event.h \
	emu/obj/objects.h emu/obj/timer.h emu/obj/limits.h emu/ctl/ops.h \
	emu/ctl/hello.c emu/ctl/query_port.c emu/ctl/quota.c emu/ctl/quota.h \
	emu/ctl/obj_pd.c emu/ctl/obj_mr.c emu/ctl/obj_mw.c emu/ctl/obj_advise.c emu/ctl/obj_cq.c emu/ctl/obj_qp.c emu/ctl/obj_srq.c emu/ctl/obj_ah.c \
	emu/ctl/server.c emu/ctl/server.h \
	emu/ctl/admin.c emu/ctl/admin.h tools/admin_client.c \
	emu/nic/cq_ring.c emu/nic/cq_ring.h \
	emu/nic/mem_access.c emu/nic/mem_access.h \
	emu/nic/mem_wb.c emu/nic/mem_wb.h \
	emu/nic/mem_window.c emu/nic/mem_window.h \
	emu/nic/wqe_reader.c emu/nic/wqe_reader.h \
	emu/nic/engine_glue.c emu/nic/engine_glue.h \
	emu/nic/port.c emu/nic/port.h emu/nic/loopback.c emu/nic/loopback.h \
	emu/nic/capture.c emu/nic/capture.h emu/nic/capture_stream.c emu/nic/capture_stream.h \
	emu/nic/fault.c emu/nic/fault.h emu/nic/fault_spec.c emu/nic/fault_spec.h \
	emu/nic/fault_queue.c emu/nic/fault_queue.h emu/nic/nic_time.c emu/nic/nic_time.h \
	emu/nic/doorbell.c emu/nic/doorbell.h emu/nic/poll_window.c emu/nic/poll_window.h \
	emu/nic/cpu_quota.c emu/nic/cpu_quota.h \
	emu/nic/sysfs_stats.c emu/nic/sysfs_stats.h \
	emu/cm/cm.h emu/cm/cm_int.h emu/cm/ucma.c emu/cm/cm_id.c emu/cm/cm_event.c \
	emu/cm/cm_conn.c emu/cm/cm_wire.c emu/cm/cm_qp_attr.c emu/cm/cm_status.c \
	emu/cm/cm_client.c emu/cm/cm_recv.c \
	emu/eth/eth.h emu/eth/eth_int.h emu/eth/frame.c emu/eth/frame.h emu/eth/segment.c \
	emu/eth/steer.c emu/eth/raw_qp.c emu/eth/raw_rx.c emu/eth/raw_rq.c emu/eth/raw_cqe.c emu/eth/rss.c emu/eth/rss_table.c emu/eth/counters.c
emu_liburoced_la_SOURCES += emu/ctl/obj_wq.c
emu_liburoced_la_SOURCES += emu/ctl/obj_dm.c
emu_liburoced_la_SOURCES += emu/mcast/mcast.h emu/mcast/table.c emu/mcast/ops.c emu/mcast/path.c emu/mcast/rx.c
emu_liburoced_la_CFLAGS = $(AM_CFLAGS) $(IBVERBS_CFLAGS)
emu_liburoced_la_LIBADD = emu/libxport.la netstack/libnetstack.la netstack/libpcapw.la $(LIBEV_LIBS)
noinst_HEADERS += include/uroce/abi_dm.h
noinst_HEADERS += include/uroce/abi.h include/uroce/abi_clock.h include/uroce/abi_ring.h include/uroce/abi_cq_mr.h include/uroce/abi_cm.h include/uroce/abi_flow.h include/uroce/abi_admin.h

sbin_PROGRAMS = emu/uroced
emu_uroced_SOURCES = emu/main.c
emu_uroced_CFLAGS = $(AM_CFLAGS) $(IBVERBS_CFLAGS)
emu_uroced_LDADD = emu/liburoced.la $(LIBEV_LIBS)
emu_liburoced_la_SOURCES += emu/nic/udp_gso.c emu/nic/udp_gso.h
emu_liburoced_la_SOURCES += emu/eth/raw_held.c emu/eth/raw_stride.c emu/eth/raw_write.c
emu_liburoced_la_SOURCES += emu/cm/cm_dup.c
emu_liburoced_la_SOURCES += emu/eth/tso.c emu/eth/tso.h emu/eth/raw_tso.c emu/eth/raw_gather.c
emu_liburoced_la_SOURCES += emu/cm/cm_mcast.c emu/cm/cm_mcast.h
noinst_HEADERS += include/uroce/abi_mcast.h
noinst_HEADERS += include/uroce/abi_asserts.h
emu_liburoced_la_SOURCES += emu/ctl/obj_xrcd.c
noinst_HEADERS += include/uroce/abi_xrc.h
emu_liburoced_la_SOURCES += emu/ctl/obj_xrc.c
emu_liburoced_la_SOURCES += emu/ctl/obj_share.c
noinst_HEADERS += include/uroce/abi_share.h
noinst_HEADERS += emu/ctl/share.h
emu_liburoced_la_SOURCES += emu/ctl/obj_tm.c
noinst_HEADERS += include/uroce/abi_tm.h
