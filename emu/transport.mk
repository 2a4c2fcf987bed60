# emu/transport.mk: the RoCE transport engine (requester, responder,
# completer for RC/UC/UD) as a libtool convenience library the daemon links
# and the tests drive in-process (tests/transport.mk). Interface: emu/xport.h.
noinst_LTLIBRARIES += emu/libxport.la
emu_libxport_la_SOURCES = emu/xport.h emu/xport_int.h emu/xport_qp.c \
	emu/xport_timer.c emu/xport_input.c emu/req.c emu/resp.c emu/comp.c
emu_libxport_la_CFLAGS = $(AM_CFLAGS) $(IBVERBS_CFLAGS)
emu_libxport_la_LIBADD = netstack/libnetstack.la
