#!/bin/sh
# traffic_pyverbs_raw: rdma-core's own python tests of raw packet QPs and
# flow steering on uroce0 through `uroce run` (docs/raw-packet.md):
# test_flow (ETH, IPv4, IPv6, TCP and UDP specs, 10 frames each between two
# raw QPs of the device, every frame compared), test_rss_traffic (8 WQs in an
# indirection table behind an RSS QP, 32 frames) and test_mlx5_timestamp's
# three raw tests (the real-time one passes; the two free-running ones need
# mlx5dv's timestamp conversion and skip). Pass = exit 0, no FAIL/ERROR,
# unittest's OK line, each test's outcome as in tests/pyverbs/MAJOR/traffic_pyverbs_raw.tsv (MAJOR: the
# installed rdma-core's, 44 on Debian 12, 56 on Debian 13).
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
pyverbs_run 300 tests.test_flow tests.test_rss_traffic \
	tests.test_mlx5_timestamp.TimeStampTest.test_timestamp_real_time_raw_traffic \
	tests.test_mlx5_timestamp.TimeStampTest.test_timestamp_free_running_send_raw_traffic \
	tests.test_mlx5_timestamp.TimeStampTest.test_timestamp_free_running_recv_raw_traffic
# the daemon took every frame: 5 x 10 flow frames, 32 RSS frames and one
# per timestamp test (the two that skip do so after their traffic)
uroce status --dev uroce0 >"$T/st" || fail "uroce status"
grep -q "^eth .* rx_no_rule=0 rx_rule_drop=0 rx_no_wqe=0 rx_delivered=85\$" "$T/st" ||
	fail "uroce0: every frame delivered" "rx_no_rule=0 rx_rule_drop=0 rx_no_wqe=0 rx_delivered=85" "$(grep '^eth' "$T/st")"
echo "ok: 85 frames delivered, none dropped"
