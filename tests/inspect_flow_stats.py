#!/usr/bin/env python3
"""inspect_flow_stats.py - the statistics of `uroce inspect --flows`, exact.

A constructed RC exchange (packets made from the sample capture's frames,
with our own PSNs, payloads, AETHs and timestamps, every ICRC right) in
which each counted event happens a known number of times:

  t(us)  request flow (A > B, QP 0x22)         response flow (B > A, QP 0x11)
   0     SEND ONLY psn 100, 40 bytes
   1                                             ACK 100, MSN 1
   2     SEND FIRST 101, 256 bytes
         (SEND MIDDLE 102 lost before the capture)
   4     SEND LAST 103, 100 bytes
   5                                             NAK PSN sequence error 102, MSN 1
   6     SEND MIDDLE 102 (late: out of order)
   7     SEND LAST 103 again (retransmitted)
   8                                             ACK 103, MSN 2
   9     SEND ONLY 104, 20 bytes
  10                                             RNR NAK 104, timer 1 (10 us), MSN 2
  25     SEND ONLY 104 again (the retry: retransmitted, RNR wait 15 us)
  25.001 the same packet once more, back to back (a duplicate)
  26                                             ACK 104, MSN 3
  27     READ 105, 600 bytes (3 responses at MTU 256)
  28-30                                          READ FIRST/MIDDLE/LAST 105..107
  31                                             READ MIDDLE 106 again

So, request flow: goodput 672 bytes in 27 us, 2 packets / 120 bytes
retransmitted, 1 duplicate, 1 out of order, RNR waits 1 (15000 ns), 4
messages with latencies 1, 6, 17 and 3 us (p50 3 us, p99 and max 17 us).
Response flow: goodput 600 bytes in 30 us, 1 packet / 256 bytes
retransmitted, NAKs: PSN sequence error 1, RNR 1. `--check --mtu 256`
finds nothing in it (every loss repaired as the rules say).
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inspect_lib import check, check_eq, finish, inspect  # noqa: E402
from inspect_lossy import write_lossy  # noqa: E402

tmp = tempfile.mkdtemp(prefix="inspect-flow-stats.")
path = os.path.join(tmp, "stats.pcap")
write_lossy(path)

rc, out, err = inspect(path, "--check", "--mtu", "256")
check_eq((rc, [l for l in out.splitlines() if l.startswith("frame ")]), (0, []),
         "--check --mtu 256: exit 0, no finding")
check("check: retransmitted 3 packets 376 bytes, duplicates 1, out-of-order 1, gaps repaired 1, "
      "NAKs: sequence 1 RNR 1 fatal 0, unpaired responses 0" in out, "--check counts: %s" % out)

rc, out, err = inspect(path, "--flows")
check_eq(rc, 0, "--flows: exit status")
lines = out.splitlines()
i = [n for n, l in enumerate(lines) if l.startswith("flow ")]
check_eq(len(i), 2, "--flows: two flows")
A, B = "192.168.0.1:49730", "192.168.0.2:49730"
check_eq(lines[i[0]:i[0] + 2], [
    "flow RoCEv2 %s > 192.168.0.2:4791 dqpn 0x000022 requests: packets 9, psn 100..105, gaps 1, repeats 4" % A,
    "  stats: goodput 672 bytes in 27000 ns = 199111111 bit/s, retransmitted 2 packets 120 bytes, "
    "duplicates 1, out-of-order 1, NAKs PSN_SEQ_ERR 0 INVALID_REQ 0 REM_ACCESS_ERR 0 REM_OP_ERR 0 "
    "INVALID_RD_REQ 0 RNR 0, RNR waits 1 total 15000 ns, messages 4 latency p50 3000 p99 17000 max 17000 ns"],
    "--flows: request flow and its statistics")
check_eq(lines[i[1]:i[1] + 2], [
    "flow RoCEv2 %s > 192.168.0.1:4791 dqpn 0x000011 responses: packets 9, psn 100..107, gaps 1, repeats 2" % B,
    "  stats: goodput 600 bytes in 30000 ns = 160000000 bit/s, retransmitted 1 packets 256 bytes, "
    "duplicates 0, out-of-order 0, NAKs PSN_SEQ_ERR 1 INVALID_REQ 0 REM_ACCESS_ERR 0 REM_OP_ERR 0 "
    "INVALID_RD_REQ 0 RNR 1, RNR waits 0 total 0 ns, messages 0 latency p50 0 p99 0 max 0 ns"],
    "--flows: response flow and its statistics")

rc, out, err = inspect(path, "--flows", "--json", "--summary")
objs = [json.loads(l) for l in out.splitlines()]
flows = [o["flow"] for o in objs if "flow" in o]
check_eq(flows[0]["stats"], {
    "goodput_bytes": 672, "duration_ns": 27000, "goodput_bps": 199111111, "retransmitted": 2,
    "retransmitted_bytes": 120, "duplicates": 1, "out_of_order": 1,
    "naks": {"PSN_SEQ_ERR": 0, "INVALID_REQ": 0, "REM_ACCESS_ERR": 0, "REM_OP_ERR": 0, "INVALID_RD_REQ": 0,
             "RNR": 0},
    "rnr_waits": 1, "rnr_wait_ns": 15000, "messages": 4, "latency_p50_ns": 3000, "latency_p99_ns": 17000,
    "latency_max_ns": 17000}, "--flows --json: request flow stats")
check_eq((flows[1]["stats"]["goodput_bytes"], flows[1]["stats"]["retransmitted_bytes"],
          flows[1]["stats"]["naks"]["PSN_SEQ_ERR"], flows[1]["stats"]["naks"]["RNR"]), (600, 256, 1, 1),
         "--flows --json: response flow stats")
check_eq(list(objs[-1]), ["summary"], "--flows --json: the summary comes last")
os.unlink(path)
os.rmdir(tmp)
finish("inspect_flow_stats")
