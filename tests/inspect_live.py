#!/usr/bin/env python3
"""inspect_live.py - real traffic, real capture: tests/inspect_live_send
sends one RoCEv2 packet per opcode over IPv4 and IPv6 loopback through the
kernel's UDP stack; real tshark captures them twice at once: on lo (Ethernet,
pcapng) and on any as Linux cooked v2 (classic pcap).  `uroce inspect`
must find every packet in both files, decode the intended opcodes, and verify
every ICRC over the IP header the kernel really wrote (DF, IP ID 0, TTL).

Capturing needs CAP_NET_RAW.  Without it the test says why and exits 77,
which the automake harness reports as SKIP (not as a pass).
"""
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inspect_lib import TOP_BUILDDIR, check, check_eq, finish, inspect, run  # noqa: E402

SEND = os.path.join(TOP_BUILDDIR, "tests", "inspect_live_send")
EXPECTED_OPCODES = sorted(list(range(0x00, 0x15)) + [0x16, 0x17, 0x1C, 0x1D] +
                          list(range(0x20, 0x2C)) + [0x64, 0x65, 0x81] +
                          list(range(0xA0, 0xB5)) + [0xB6, 0xB7])  # XRC: docs/xrc.md
LIMIT = 60      # seconds any capture may run at most (a safety stop, not an assertion)


class Capture:
    """A real tshark capture that prints each packet's UDP destination port
    (-P -T fields) while it writes the file, so the test can tell when the
    capture is live and when every packet is in."""

    def __init__(self, what, path, argv):
        self.what, self.path, self.buf, self.ports = what, path, b"", []
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def poll(self, timeout):
        """Collect the ports printed so far; False if tshark has ended."""
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not r:
            return self.p.poll() is None
        chunk = os.read(self.p.stdout.fileno(), 4096)
        if not chunk:
            return False
        self.buf += chunk
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            self.ports.append(line.strip().decode())
        return True

    def error(self):
        self.p.kill()
        return self.p.stderr.read().decode("utf-8", "replace").strip()


def free_udp_port():
    """A bound socket on a free port (kept open so probes are not refused)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    return s, s.getsockname()[1]


def main():
    tshark = os.environ.get("TSHARK")
    if not tshark:
        print("FAIL: $TSHARK is empty: configure did not find tshark")
        sys.exit(1)
    rc, out, err = run([SEND, "--count"])
    count = int(out)
    check_eq(count, 2 * len(EXPECTED_OPCODES), "packets per run")

    sender = subprocess.Popen([SEND, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    port = int(sender.stdout.readline())
    probe_sock, probe_port = free_udp_port()
    tmp = tempfile.mkdtemp(prefix="inspect_live.")
    filt = "udp and (dst port %d or dst port %d)" % (port, probe_port)
    common = ["-n", "-l", "-P", "-T", "fields", "-e", "udp.dstport", "-f", filt,
              "-a", "duration:%d" % LIMIT]
    caps = [
        Capture("tshark -i lo", os.path.join(tmp, "lo.pcapng"),
                [tshark, "-i", "lo"] + common + ["-w", os.path.join(tmp, "lo.pcapng")]),
        Capture("tshark -i any -y LINUX_SLL2", os.path.join(tmp, "any.pcap"),
                [tshark, "-i", "any", "-y", "LINUX_SLL2", "-F", "pcap"] + common +
                ["-w", os.path.join(tmp, "any.pcap")]),
    ]

    # "Capturing on" comes before the capture is really live: probe (UDP to
    # another port) until every capture has seen a probe.
    end = time.monotonic() + LIMIT
    while time.monotonic() < end and not all(c.ports for c in caps):
        probe_sock.sendto(b"probe", ("127.0.0.1", probe_port))
        for c in caps:
            if not c.ports and not c.poll(0.2):
                problem = c.error()
                for d in caps:
                    d.p.kill()
                sender.kill()
                if "ermission" in problem or "not permitted" in problem:
                    print("SKIP: capturing needs CAP_NET_RAW (run as root): " + problem)
                    sys.exit(77)
                print("FAIL: %s ended: %s" % (c.what, problem))
                sys.exit(1)
    if not check(all(c.ports for c in caps), "every capture became live"):
        for c in caps:
            c.p.kill()
        sender.kill()
        finish("inspect_live")

    sender.stdin.write(b"go\n")
    sender.stdin.close()
    check_eq(sender.wait(timeout=LIMIT), 0, "inspect_live_send exit status")
    for c in caps:
        while c.ports.count(str(port)) < count and time.monotonic() < end and c.poll(0.5):
            pass
        check_eq(c.ports.count(str(port)), count, c.what + ": packets captured")
        c.p.terminate()     # tshark closes the file cleanly on SIGTERM
        c.p.wait(timeout=LIMIT)
        check_eq(c.p.returncode, 0, c.what + ": exit status")
    probe_sock.close()

    for c in caps:
        what = c.what
        rc, out, err = inspect(c.path, "--json", "--port", str(port))
        check_eq(rc, 0, "%s: inspect exit status (stderr %r)" % (what, err))
        objs = [json.loads(line) for line in out.splitlines()]
        if not objs:
            check(False, what + ": no output")
            continue
        summary = objs.pop()["summary"]
        probes = c.ports.count(str(probe_port))
        check_eq((summary["packets"], summary["rocev2"], summary["non_roce"], summary["malformed"],
                  summary["bad_icrc"]), (count + probes, count, probes, 0, 0),
                 what + ": packets, RoCEv2, non-RoCE (probes), malformed, bad ICRC")
        v4 = [o for o in objs if o.get("src") == "127.0.0.1"]
        v6 = [o for o in objs if o.get("src") == "::1"]
        check_eq(sorted(o["opcode"] for o in v4), EXPECTED_OPCODES, what + ": IPv4 opcodes")
        check_eq(sorted(o["opcode"] for o in v6), EXPECTED_OPCODES, what + ": IPv6 opcodes")
        for o in objs:
            where = "%s frame %d" % (what, o["frame"])
            check_eq((o["status"], o["icrc_ok"], o["dport"]), ("ok", True, port), where)
            check_eq(o["icrc"], o["icrc_expected"], where + ": ICRC")
        os.unlink(c.path)
    os.rmdir(tmp)
    finish("inspect_live")


if __name__ == "__main__":
    main()
