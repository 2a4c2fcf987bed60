#!/usr/bin/env python3
"""pyverbs_results.py RESULTS RUN_TESTS [ARGS...] - run rdma-core's pyverbs
test runner (RUN_TESTS, its tests/run_tests.py, with ARGS as on its command
line) unchanged, and write one line per test to RESULTS:

    TEST_ID<TAB>ok
    TEST_ID<TAB>skip<TAB>REASON
    TEST_ID<TAB>fail | error | xfail | xpass

TEST_ID is unittest's id() (module.Class.method), which does not change with
a docstring, unlike the "-v" lines. The runner's own output and exit status
are unchanged: only the result class unittest.main's TextTestRunner uses is
a subclass of TextTestResult that also records (Python's unittest docs:
TextTestRunner.resultclass). A subtest's failure or error counts for its
test.
"""
import os
import runpy
import sys
import unittest


def main():
    if len(sys.argv) < 3:
        sys.stderr.write("usage: pyverbs_results.py RESULTS RUN_TESTS [ARGS...]\n")
        return 2
    path, runner = sys.argv[1], sys.argv[2]
    rows = {}

    class Recording(unittest.TextTestResult):
        def _put(self, test, status, reason=None):
            tid = test.id()
            # a failed subtest makes its test fail; later "ok" does not undo it
            if rows.get(tid, ("ok",))[0] in ("fail", "error") and status == "ok":
                return
            rows[tid] = (status, reason)

        def addSuccess(self, test):
            super().addSuccess(test)
            self._put(test, "ok")

        def addSkip(self, test, reason):
            super().addSkip(test, reason)
            self._put(test, "skip", " ".join(str(reason).split()))

        def addFailure(self, test, err):
            super().addFailure(test, err)
            self._put(test, "fail")

        def addError(self, test, err):
            super().addError(test, err)
            # an error in setUpClass is reported on a _ErrorHolder, not a test
            self._put(test, "error")

        def addExpectedFailure(self, test, err):
            super().addExpectedFailure(test, err)
            self._put(test, "xfail")

        def addUnexpectedSuccess(self, test):
            super().addUnexpectedSuccess(test)
            self._put(test, "xpass")

        def addSubTest(self, test, subtest, err):
            super().addSubTest(test, subtest, err)
            if err is not None:
                failed = issubclass(err[0], test.failureException)
                self._put(test, "fail" if failed else "error")

        def stopTestRun(self):
            super().stopTestRun()
            with open(path, "w") as f:
                for tid in sorted(rows):
                    status, reason = rows[tid]
                    f.write(tid + "\t" + status + ("\t" + reason if reason is not None else "") + "\n")

    unittest.TextTestRunner.resultclass = Recording
    # run_tests.py imports its neighbours (args_parser) and parses sys.argv
    sys.path.insert(0, os.path.dirname(os.path.abspath(runner)))
    sys.argv = [runner] + sys.argv[3:]
    runpy.run_path(runner, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
