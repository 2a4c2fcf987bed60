#!/usr/bin/env python3
"""inspect_sample.py - the shipped capture tests/data/sample.pcap:

- equals, byte for byte, what tests/gen_pcap writes today (so it can always
  be regenerated: `make regen-sample`);
- `uroce inspect` (through the `uroce` dispatcher, as the README runs it)
  exits 0 and prints exactly the expected lines for the interesting frames
  and the exact summary;
- every frame's ICRC, as inspect reports it, equals an independent zlib
  computation (docs/wire-format.md §2.1) and the value listed in tests/data/icrc.tsv
  for the copied real frames.
"""
import json
import os
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inspect_lib import (GEN, ICRC_TSV, SAMPLE, UROCE, check, check_eq, finish,  # noqa: E402
                         icrc_oracle, inspect, read_pcap, run)

A, B = "192.168.0.1:49730", "192.168.0.2:4791"     # sport 0xC242 = flow label of QPs 0x11, 0x22
BA = "192.168.0.2:49730 > 192.168.0.1:4791"
AB = A + " > " + B
# frame -> exact line (frames chosen to cover every header kind and AETH type)
EXPECTED = {
    1: "1 RoCEv2 %s RC_SEND_ONLY dqpn 0x000022 psn 1000 payload 11 pad 1 flags SE,A ICRC ok" % AB,
    2: "2 RoCEv2 %s RC_ACKNOWLEDGE dqpn 0x000011 psn 1000 aeth ACK credit 31 msn 1 payload 0 pad 0 "
       "flags - ICRC ok" % BA,
    5: "5 RoCEv2 %s RC_SEND_LAST_IMM dqpn 0x000022 psn 1003 imm 0x12345678 payload 100 pad 0 flags A "
       "ICRC ok" % AB,
    7: "7 RoCEv2 %s RC_RDMA_WRITE_FIRST dqpn 0x000022 psn 1004 reth va 0x00007f0000001000 "
       "rkey 0x00001234 len 300 payload 256 pad 0 flags - ICRC ok" % AB,
    14: "14 RoCEv2 %s RC_RDMA_READ_RESPONSE_LAST dqpn 0x000011 psn 1009 aeth ACK credit 31 msn 5 "
        "payload 88 pad 0 flags - ICRC ok" % BA,
    15: "15 RoCEv2 %s RC_COMPARE_SWAP dqpn 0x000022 psn 1010 atomic va 0x00007f0000004000 "
        "rkey 0x00005678 swap_add 0x0000000000000002 compare 0x0000000000000001 payload 0 pad 0 "
        "flags A ICRC ok" % AB,
    16: "16 RoCEv2 %s RC_ATOMIC_ACKNOWLEDGE dqpn 0x000011 psn 1010 aeth ACK credit 31 msn 6 "
        "orig 0x0000000000000001 payload 0 pad 0 flags - ICRC ok" % BA,
    21: "21 RoCEv2 %s RC_SEND_ONLY_INVALIDATE dqpn 0x000022 psn 1013 ieth rkey 0x00001234 payload 3 "
        "pad 1 flags A ICRC ok" % AB,
    22: "22 RoCEv2 %s RC_ACKNOWLEDGE dqpn 0x000011 psn 1013 aeth RNR_NAK timer 1 (0.01 ms) msn 8 "
        "payload 0 pad 0 flags - ICRC ok" % BA,
    26: "26 RoCEv2 %s RC_ACKNOWLEDGE dqpn 0x000011 psn 1014 aeth NAK PSN_SEQ_ERR msn 9 payload 0 "
        "pad 0 flags - ICRC ok" % BA,
    28: "28 RoCEv2 %s RC_ACKNOWLEDGE dqpn 0x000011 psn 1014 aeth NAK REM_ACCESS_ERR msn 9 payload 0 "
        "pad 0 flags - ICRC ok" % BA,
    32: "32 RoCEv2 192.168.0.1:57020 > 192.168.0.2:4791 UD_SEND_ONLY_IMM dqpn 0x000044 psn 301 "
        "deth qkey 0x11111111 srcqp 0x000033 imm 0x00abcdef payload 6 pad 2 flags SE ICRC ok",
    33: "33 RoCEv2 %s CNP dqpn 0x000011 psn 0 payload 16 pad 0 flags BECN ICRC ok" % BA,
    34: "34 RoCEv2 [fd00::1]:60881 > [fd00::2]:4791 RC_SEND_ONLY dqpn 0x000456 psn 77 payload 11 "
        "pad 1 flags SE,A ICRC ok",
    # the real captures of tests/data/icrc.tsv (docs/wire-format.md §2.2)
    38: "38 RoCEv2 10.0.17.1:0 > 10.0.18.1:4791 CNP dqpn 0x000118 psn 0 payload 16 pad 0 "
        "flags BECN ICRC ok",
    39: "39 RoCEv1 ::ffff:15.0.0.2 > ::ffff:15.0.0.2 RC_RDMA_WRITE_ONLY dqpn 0x00010a psn 10979516 "
        "reth va 0x000055d4c0726000 rkey 0x000047b3 len 5 payload 5 pad 3 flags M,A ICRC ok",
    40: "40 RoCEv1 ::ffff:15.0.0.2 > ::ffff:15.0.0.2 RC_ACKNOWLEDGE dqpn 0x000109 psn 10979520 "
        "aeth ACK credit 0 msn 5 payload 0 pad 0 flags M ICRC ok",
    41: "41 RoCEv2 192.168.0.7:49152 > 192.168.0.7:4791 UC_SEND_ONLY dqpn 0x0000d3 psn 13571856 "
        "payload 18 pad 2 flags M ICRC ok",
}
SUMMARY = [
    "summary: 41 packets, RoCEv2 39, RoCEv1 2, non-RoCE skipped 0, malformed 0, bad ICRC 0",
    "opcodes: RC_SEND_FIRST 1, RC_SEND_MIDDLE 1, RC_SEND_LAST_IMM 1, RC_SEND_ONLY 3, "
    "RC_RDMA_WRITE_FIRST 1, RC_RDMA_WRITE_LAST 1, RC_RDMA_WRITE_ONLY 3, RC_RDMA_WRITE_ONLY_IMM 1, "
    "RC_RDMA_READ_REQUEST 2, RC_RDMA_READ_RESPONSE_FIRST 1, RC_RDMA_READ_RESPONSE_MIDDLE 1, "
    "RC_RDMA_READ_RESPONSE_LAST 1, RC_RDMA_READ_RESPONSE_ONLY 1, RC_ACKNOWLEDGE 10, "
    "RC_ATOMIC_ACKNOWLEDGE 2, RC_COMPARE_SWAP 1, RC_FETCH_ADD 1, RC_SEND_ONLY_INVALIDATE 2, "
    "UC_SEND_ONLY 2, UC_RDMA_WRITE_ONLY 1, UD_SEND_ONLY 1, UD_SEND_ONLY_IMM 1, CNP 2",
    "errors: none",
]
FLOWS = [
    "flow RoCEv2 %s dqpn 0x000022 requests: packets 15, psn 1000..1015, gaps 1, repeats 2" % AB,
    "flow RoCEv2 %s dqpn 0x000011 responses: packets 13, psn 1000..1014, gaps 2, repeats 2" % BA,
    "flow RoCEv2 192.168.0.1:57822 > 192.168.0.2:4791 dqpn 0x000066 requests: packets 2, psn 200..201, "
    "gaps 0, repeats 0",
    "flow RoCEv2 192.168.0.1:57020 > 192.168.0.2:4791 dqpn 0x000044 requests: packets 2, psn 300..301, "
    "gaps 0, repeats 0",
    "flow RoCEv2 [fd00::1]:60881 > [fd00::2]:4791 dqpn 0x000456 requests: packets 2, psn 77..78, "
    "gaps 0, repeats 0",
    "flow RoCEv2 [fd00::2]:60881 > [fd00::1]:4791 dqpn 0x000123 responses: packets 2, psn 77..78, "
    "gaps 0, repeats 0",
    "flow RoCEv1 ::ffff:15.0.0.2 > ::ffff:15.0.0.2 dqpn 0x00010a requests: packets 1, "
    "psn 10979516..10979516, gaps 0, repeats 0",
    "flow RoCEv1 ::ffff:15.0.0.2 > ::ffff:15.0.0.2 dqpn 0x000109 responses: packets 1, "
    "psn 10979520..10979520, gaps 0, repeats 0",
    "flow RoCEv2 192.168.0.7:49152 > 192.168.0.7:4791 dqpn 0x0000d3 requests: packets 1, "
    "psn 13571856..13571856, gaps 0, repeats 0",
]
# frames copied from icrc.tsv: frame -> row id
REAL = {38: "R1", 39: "R2", 40: "R3", 41: "S0"}


def main():
    # 1. The committed file is the generator's output.
    tmp = tempfile.mkdtemp(prefix="inspect_sample.")
    regen = os.path.join(tmp, "sample.pcap")
    rc, manifest, err = run([GEN, "sample", regen, ICRC_TSV])
    check_eq(rc, 0, "gen_pcap sample exit status (stderr %r)" % err)
    with open(regen, "rb") as a, open(SAMPLE, "rb") as b:
        check(a.read() == b.read(), "tests/data/sample.pcap differs from gen_pcap's output "
              "(run `make regen-sample` and commit the result)")
    os.unlink(regen)
    os.rmdir(tmp)

    # 2. `uroce inspect` as the README runs it.
    rc, out, err = run([UROCE, "inspect", SAMPLE])
    check_eq(rc, 0, "uroce inspect exit status (stderr %r)" % err)
    lines = out.splitlines()
    check_eq(len(lines), 41 + 3, "one line per frame plus 3 summary lines")
    for n, want in EXPECTED.items():
        check_eq(lines[n - 1] if n <= len(lines) else None, want, "frame %d" % n)
    check(all(line.endswith(" ICRC ok") for line in lines[:-3]), "every frame: ICRC ok")
    check_eq(lines[-3:], SUMMARY, "summary")

    # PSN continuity per flow: the request flow lost 1014 (a gap, then its
    # retransmission) and resent 1013 after the RNR NAK; the response flow
    # has coalesced ACKs (1000 -> 1003 -> 1006) and two answers to 1013/1014.
    rc, out, err = run([UROCE, "inspect", "--flows", "--summary", SAMPLE])
    check_eq(rc, 0, "uroce inspect --flows exit status")
    lines = out.splitlines()
    check_eq(lines[:18:2], FLOWS, "--flows lines")
    check_eq([l[:16] for l in lines[1:18:2]], ["  stats: goodput"] * 9, "--flows: a statistics line each")
    # the first flow's statistics (tests/inspect_flow_stats.py derives such
    # numbers by hand): 10 us per frame; the RNR retry 10 us after its NAK;
    # SEND ONLY 1000 acknowledged 10 us later, the 3-packet SEND 30 us after
    # its FIRST, ...
    check_eq(lines[1], "  stats: goodput 954 bytes in 260000 ns = 29353846 bit/s, retransmitted 1 packets "
             "3 bytes, duplicates 0, out-of-order 1, NAKs PSN_SEQ_ERR 0 INVALID_REQ 0 REM_ACCESS_ERR 0 "
             "REM_OP_ERR 0 INVALID_RD_REQ 0 RNR 0, RNR waits 1 total 10000 ns, messages 9 latency p50 10000 "
             "p99 30000 max 30000 ns", "--flows: the request flow's statistics")
    check_eq(lines[18:], SUMMARY, "--flows --summary: then the summary")

    # 3. ICRC against the independent oracle and the vector table.
    rc, out, err = inspect(SAMPLE, "--json")
    check_eq(rc, 0, "inspect --json exit status")
    objs = [json.loads(line) for line in out.splitlines()]
    _, _, recs = read_pcap(SAMPLE)
    tsv = {}
    with open(ICRC_TSV) as f:
        for line in f:
            if line.startswith("#") or line.startswith("id\t"):
                continue
            cols = line.rstrip("\n").split("\t")
            tsv[cols[0]] = (cols[2], cols[3])
    for o in objs[:-1]:
        n = o["frame"]
        oracle = "0x%08x" % icrc_oracle(recs[n - 1][4])
        check_eq(o["icrc_expected"], oracle, "frame %d: ICRC vs zlib oracle" % n)
        check_eq(o["icrc"], oracle, "frame %d: wire ICRC" % n)
        if n in REAL:
            icrc, frame = tsv[REAL[n]]
            check_eq(recs[n - 1][4].hex(), frame, "frame %d: copied verbatim from %s" % (n, REAL[n]))
            check_eq(o["icrc"], "0x" + icrc, "frame %d: ICRC listed for %s" % (n, REAL[n]))
    check_eq(objs[-1]["summary"], {
        "packets": 41, "roce": 41, "rocev2": 39, "rocev1": 2, "non_roce": 0, "malformed": 0,
        "bad_icrc": 0, "opcodes": objs[-1]["summary"]["opcodes"], "errors": {}}, "JSON summary")
    check_eq(sum(objs[-1]["summary"]["opcodes"].values()), 41, "JSON summary: opcode counts add up")
    check_eq([line.split("\t")[0] for line in manifest.splitlines()], [str(i) for i in range(1, 42)],
             "generator manifest numbers every frame")
    finish("inspect_sample")


if __name__ == "__main__":
    main()
