#!/bin/sh
# traffic_pyverbs_tm: rdma-core's tests.test_tag_matching on uroce0 through
# `uroce run`: a TM-SRQ with 127 tags, tagged EAGER messages matched
# (TMH stripped), unexpected messages with the SYNC after each, NO_TAG,
# and rendezvous (the server READs the client's buffer, two completions,
# the client's FIN receive), every CQE's wr_id, opcode, wc_flags and tag
# checked by pyverbs. Pass = exit 0, each test's outcome as in
# tests/pyverbs/MAJOR/traffic_pyverbs_tm.tsv (MAJOR: the installed
# rdma-core's, 44 on Debian 12, 56 on Debian 13). docs/tag-matching.md.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
pyverbs_run 300 tests.test_tag_matching
