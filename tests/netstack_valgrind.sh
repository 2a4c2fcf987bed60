#!/bin/sh
# netstack_valgrind: the netstack unit tests again, under valgrind memcheck,
# so that "no parser reads outside its buffer" is checked by `make check`
# itself and not only by the fuzzers: the malformed-input table parses
# exact-size heap copies of every damaged packet, and the ICRC and round-trip
# tests parse every vector and every opcode.  An invalid read or write, a
# jump on uninitialised memory, or a definite leak fails the test (valgrind
# exits 99).  CK_FORK=no keeps each suite in the one process memcheck watches.
top_builddir=${top_builddir:-.}
# In the sanitizer build (make check-asan) the programs carry ASan, which
# valgrind cannot run; ASan itself checks the same reads and leaks there.
if grep -q __asan_init "$top_builddir/tests/netstack_malformed" 2>/dev/null; then
	echo "SKIP: the unit tests are built with AddressSanitizer (make check-asan): valgrind cannot run them"
	exit 77
fi
if ! command -v valgrind >/dev/null 2>&1; then
	echo "FAIL: valgrind not found (Debian package valgrind; scripts/install-deps installs it)"
	exit 1
fi
status=0
for t in netstack_malformed netstack_icrc netstack_roundtrip netstack_psn; do
	echo "== valgrind tests/$t"
	CK_FORK=no valgrind -q --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite "$top_builddir/tests/$t"
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL: tests/$t under valgrind: exit status $rc"
		status=1
	fi
done
exit $status
