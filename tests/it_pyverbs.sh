#!/bin/sh
# it_pyverbs: rdma-core 44's own python tests (Debian's python3-pyverbs
# ships them, gzipped) pass on uroce0 through `uroce run`: test_device,
# test_pd, test_addr, test_cq, test_qp (no data moves there) and the tests
# of test_mr that move no data.  Pass = exit 0, no FAIL/ERROR, unittest's
# "OK" line, and every skip reason in the allow-list below (features uroce
# answers with EOPNOTSUPP, or hardware this machine lacks).
. "$top_srcdir/tests/lib.sh"
src=/usr/share/doc/rdma-core/tests
[ -f "$src/run_tests.py" ] || fail "pyverbs tests" "$src/run_tests.py (Debian package python3-pyverbs)" "missing"

mkdir "$T/rdma" && cp -r "$src" "$T/rdma/" && gunzip "$T/rdma/tests/"*.gz ||
	fail "copying and unpacking $src"
up --dev uroce0

cd "$T/rdma" || fail "cd $T/rdma"
timeout 900 "$UROCE" run -- /usr/bin/python3 tests/run_tests.py --dev uroce0 --port 1 --gid 0 -v \
	tests.test_device tests.test_pd tests.test_addr tests.test_cq tests.test_qp \
	tests.test_mr.MRTest.test_reg_mr_bad_flags tests.test_mr.MWTest.test_reg_mw_wrong_type \
	tests.test_mr.DeviceMemoryAPITest tests.test_mr.DmaBufMRTest >"$T/py.log" 2>&1
rc=$?
cd / || true
cat "$T/py.log"
echo "==== summary"
grep -E '^Ran [0-9]+ tests' "$T/py.log"
tail -n 1 "$T/py.log"
expect_eq "run_tests.py exit status" 0 "$rc"
# python3-pyverbs 44.0-2 has exactly 72 tests in this selection.
expect_eq "tests run" "Ran 72 tests" "$(sed -n 's/^\(Ran [0-9]* tests\) in .*/\1/p' "$T/py.log")"
expect_eq "FAIL/ERROR lines" "" "$(grep -E '^(FAIL|ERROR):' "$T/py.log")"
case $(tail -n 1 "$T/py.log") in
OK | "OK (skipped="*")") echo "ok: $(tail -n 1 "$T/py.log")" ;;
*) fail "unittest result line" "OK [(skipped=N)]" "$(tail -n 1 "$T/py.log")" ;;
esac

# Every skip reason must be one of these (EOPNOTSUPP-style, or no GPU).
allowed='^Create QP type [0-9]+ is not supported$
^Create Raw Packet QP (with|without)( extended)? attrs is not supported$
^To Create RAW QP must be done by root on Ethernet link layer$
^Operation not supported \(.*\)$
^Resize CQ is not supported$
^Device memory is not supported$
^Create memory window of type 3 is not supported$
^Reg dma-buf MR is not supported by the RDMA driver$
^Device /dev/dri/renderD[0-9]+ is not present$
^Lack of permission to access /dev/dri/renderD[0-9]+$
^Allocating dmabuf is not supported by /dev/dri/renderD[0-9]+$
^Some object imports are not supported$'
sed -n "s/.* \.\.\. skipped '\(.*\)'\$/\1/p" "$T/py.log" | sort | uniq -c >"$T/skips"
echo "skip reasons:"
cat "$T/skips"
bad=$(sed 's/^ *[0-9]* //' "$T/skips" | grep -Ev "$allowed" || true)
expect_eq "skip reasons outside the allow-list" "" "$bad"
