# emu/xport/local.mk: the RoCE transport engine (requester, responder,
# completer for RC/UC/UD) as a libtool convenience library the daemon links
# and the tests drive in-process (tests/transport.mk). Interface: emu/xport/xport.h.
noinst_LTLIBRARIES += emu/libxport.la
emu_libxport_la_SOURCES = emu/xport/xport.h emu/xport/xport_int.h emu/xport/qp.c \
	emu/xport/timer.c emu/xport/recv.c emu/xport/req.c emu/xport/resp.c emu/xport/atomic.c emu/xport/comp.c \
	emu/xport/common.c emu/xport/readahead.c emu/xport/prefetch.c emu/xport/run.c emu/xport/ack.c emu/xport/srq.c \
	emu/xport/dev_window.c
emu_libxport_la_CFLAGS = $(AM_CFLAGS) $(IBVERBS_CFLAGS)
emu_libxport_la_LIBADD = netstack/libnetstack.la
emu_libxport_la_SOURCES += emu/xport/flush_aw.c
emu_libxport_la_SOURCES += emu/xport/tm.c
