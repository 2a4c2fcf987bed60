# emu/local.mk: uroced, the emulated NIC (control plane: objects, QP state
# machine, CQ rings, HCA clock, control socket, admin). The daemon's code is a
# convenience library so the unit tests link the same objects; the transport
# engine has its own fragment (emu/transport.mk).
noinst_LTLIBRARIES += emu/liburoced.la
emu_liburoced_la_SOURCES = \
	emu/log.c emu/log.h \
	emu/id_alloc.c emu/id_alloc.h \
	emu/keytab.c emu/keytab.h \
	emu/qp_state.c emu/qp_state.h \
	emu/hca_clock.c emu/hca_clock.h \
	emu/udp_port.c emu/udp_port.h \
	emu/device.c emu/device.h \
	emu/client.c emu/client.h \
	emu/objects.h \
	emu/hello.c \
	emu/obj_pd.c emu/obj_mr.c emu/obj_cq.c emu/obj_qp.c emu/obj_ah.c \
	emu/ctl_server.c emu/ctl_server.h \
	emu/admin.c emu/admin.h emu/admin_client.c \
	emu/cqe_writer.c emu/cqe_writer.h \
	emu/mem_access.c emu/mem_access.h \
	emu/wqe_reader.c emu/wqe_reader.h \
	emu/datapath.c emu/datapath.h
emu_liburoced_la_CFLAGS = $(AM_CFLAGS) $(IBVERBS_CFLAGS)
emu_liburoced_la_LIBADD = emu/libxport.la netstack/libnetstack.la netstack/libpcapw.la $(LIBEV_LIBS)
noinst_HEADERS += include/uroce/abi.h

bin_PROGRAMS += emu/uroced
emu_uroced_SOURCES = emu/main.c
emu_uroced_CFLAGS = $(AM_CFLAGS) $(IBVERBS_CFLAGS)
emu_uroced_LDADD = emu/liburoced.la $(LIBEV_LIBS)
