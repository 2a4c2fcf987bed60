# tests/interop.mk: make check-interop, uroce against the Linux kernel's
# Soft-RoCE (rdma_rxe) in a QEMU guest (docs/interop.md).  Not part of
# make check: it needs root, and QEMU and a Debian kernel, which
# scripts/install-deps-interop installs first (idempotent).  The script
# prints one line per case and "N passed, N failed"; it exits 77 (SKIP) when
# it cannot run, which make reports as an error too: a skip is not a pass.
INTEROP_FILES = tests/interop/rxe_vm.sh tests/interop/mkinitramfs.sh \
	tests/interop/guest-init tests/interop/guest-lib.sh
# Frames the kernel's rxe sent, kept from the rig's captures (docs/interop.md).
EXTRA_DIST += $(INTEROP_FILES) scripts/install-deps-interop tests/interop.mk \
	tests/data/rxe-ipv4.pcap tests/data/rxe-ipv6.pcap
# The guest's initramfs (cached) and the last run's logs and captures.
CLEANFILES += tests/interop-initrd-*.gz
clean-local: clean-interop
clean-interop:
	rm -rf tests/interop-out

check-interop: all
	-$(abs_top_srcdir)/scripts/install-deps-interop
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' TSHARK='$(TSHARK)' \
		$(SHELL) $(abs_top_srcdir)/tests/interop/rxe_vm.sh
.PHONY: check-interop clean-interop

# make check-container: the container image (system/container/Containerfile)
# built on a debootstrap base and run by podman three ways
# (docs/container.md).  Needs root and podman (scripts/install-deps
# --container); like check-interop, not part of make check.
EXTRA_DIST += tests/container/run.sh system/container/Containerfile
check-container: all
	-$(abs_top_srcdir)/scripts/install-deps --container
	$(SHELL) $(abs_top_srcdir)/tests/container/run.sh
.PHONY: check-container

# make check-cluster: scripts/cluster with CLUSTER_N hosts (default 4), one
# network namespace and uroced each on a bridge; Open MPI over UCX, perftest
# pairs, loss and a killed daemon across them (docs/cluster.md).  Needs root;
# not part of make check.
EXTRA_DIST += tests/cluster/run.sh tests/cluster_mpi.c scripts/cluster
check-cluster: all
	top_builddir=$(abs_top_builddir) top_srcdir=$(abs_top_srcdir) $(SHELL) $(abs_top_srcdir)/tests/cluster/run.sh
.PHONY: check-cluster
