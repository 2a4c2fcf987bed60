"""inspect_lib.py - shared helpers of the `uroce inspect` tests (stdlib only).

- classic pcap read/write (µs and ns magic), to build crafted captures
  (VLAN, Linux cooked SLL/SLL2, raw IP, corrupted and truncated frames)
  independently of the C pcap writer under test;
- an independent ICRC oracle on zlib.crc32, written from docs/wire-format.md §2.1
  (not from the C code), for IPv4, IPv6 and RoCEv1 GRH frames;
- paths and program runners from the automake test environment;
- a PNG reader (the pixels of what rsvg-convert rendered).
"""
import os
import struct
import subprocess
import sys
import zlib

TOP_SRCDIR = os.environ.get("top_srcdir") or os.path.join(os.path.dirname(__file__), "..")
TOP_BUILDDIR = os.environ.get("top_builddir") or "."
INSPECT = os.path.join(TOP_BUILDDIR, "tools", "inspect", "uroce-inspect")
UROCE = os.path.join(TOP_BUILDDIR, "uroce")
GEN = os.path.join(TOP_BUILDDIR, "tests", "gen_pcap")
SAMPLE = os.path.join(TOP_SRCDIR, "tests", "data", "sample.pcap")
ICRC_TSV = os.path.join(TOP_SRCDIR, "tests", "data", "icrc.tsv")

# tshark flags of docs/wire-format.md §3: payload heuristics off (they mark
# arbitrary SEND payloads "Malformed").
TSHARK_FLAGS = []
for h in ("rpcrdma_infiniband", "mellanox_eoib", "sdp_infiniband", "smb_direct_infiniband",
          "smcr_infiniband", "iser_infiniband", "nvme_rdma", "lnet_ib", "fc_infiniband",
          "eth_over_ib"):
    TSHARK_FLAGS += ["--disable-heuristic", h]
# The one expert item we tolerate: IPv6 UDP checksum 0, which rxe sends (§3a item 8).
TSHARK_IGNORED_EXPERT = "Illegal checksum value (0)"

PCAP_MAGIC_US = 0xA1B2C3D4
PCAP_MAGIC_NS = 0xA1B23C4D
LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101
LINKTYPE_LINUX_SLL = 113
LINKTYPE_LINUX_SLL2 = 276

failures = []


def check(cond, what):
    """Record a failed expectation (the test goes on, and fails at the end)."""
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def check_eq(got, want, what):
    return check(got == want, "%s: expected %r, got %r" % (what, want, got))


def finish(name):
    if failures:
        print("%s: %d failure(s)" % (name, len(failures)))
        sys.exit(1)
    print("%s: all checks passed" % name)
    sys.exit(0)


def read_pcap(path):
    """Return (linktype, nanosecond?, [(sec, frac, caplen, origlen, bytes)])."""
    with open(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack("<I", data[:4])
    if magic in (PCAP_MAGIC_US, PCAP_MAGIC_NS):
        end = "<"
    else:
        end = ">"
        magic, = struct.unpack(">I", data[:4])
    if magic not in (PCAP_MAGIC_US, PCAP_MAGIC_NS):
        raise ValueError("%s: not a classic pcap file" % path)
    _, _, _, _, _, linktype = struct.unpack(end + "HHiIII", data[4:24])
    off, recs = 24, []
    while off < len(data):
        sec, frac, caplen, origlen = struct.unpack(end + "IIII", data[off:off + 16])
        recs.append((sec, frac, caplen, origlen, data[off + 16:off + 16 + caplen]))
        off += 16 + caplen
    return linktype & 0xFFFF, magic == PCAP_MAGIC_NS, recs


def write_pcap(path, linktype, records, nsec=True, snaplen=65535):
    """records: [(sec, frac, origlen or None, bytes)]; caplen = len(bytes)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", PCAP_MAGIC_NS if nsec else PCAP_MAGIC_US, 2, 4, 0, 0,
                            snaplen, linktype))
        for sec, frac, origlen, b in records:
            f.write(struct.pack("<IIII", sec, frac, len(b), len(b) if origlen is None else origlen))
            f.write(b)


def run(argv, **kw):
    """Run a program; return (exit status, stdout text, stderr text)."""
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def inspect(path, *args):
    return run([INSPECT] + list(args) + [path])


def icrc_oracle(frame):
    """ICRC of an Ethernet frame (no FCS; last 4 bytes = ICRC), docs/wire-format.md §2.1.

    Returns the CRC as the wire bytes read big-endian (tshark's form), as an
    int; or None when the frame is not RoCE over IPv4/IPv6/GRH."""
    etype, off = struct.unpack(">H", frame[12:14])[0], 14
    while etype in (0x8100, 0x88A8):
        etype, off = struct.unpack(">H", frame[off + 2:off + 4])[0], off + 4
    pkt = bytearray(frame[off:])
    if etype == 0x0800:
        ihl = (pkt[0] & 0x0F) * 4
        total = struct.unpack(">H", pkt[2:4])[0]
        pkt = pkt[:total]
        pkt[1] = 0xFF            # TOS
        pkt[8] = 0xFF            # TTL
        pkt[10:12] = b"\xff\xff"  # header checksum
        udp = ihl
    elif etype == 0x86DD:
        plen = struct.unpack(">H", pkt[4:6])[0]
        pkt = pkt[:40 + plen]
        pkt[0:4] = bytes([pkt[0] | 0x0F, 0xFF, 0xFF, 0xFF])  # traffic class, flow label
        pkt[7] = 0xFF            # hop limit
        udp = 40
    elif etype == 0x8915:
        plen = struct.unpack(">H", pkt[4:6])[0]
        pkt = pkt[:40 + plen]
        pkt[0:4] = bytes([pkt[0] | 0x0F, 0xFF, 0xFF, 0xFF])
        pkt[7] = 0xFF
        pkt[40 + 4] = 0xFF       # BTH byte 4: F, B, Resv6
        return _crc(pkt)
    else:
        return None
    pkt[udp + 6:udp + 8] = b"\xff\xff"   # UDP checksum
    pkt[udp + 8 + 4] = 0xFF              # BTH byte 4
    return _crc(pkt)


def _crc(masked):
    crc = zlib.crc32(b"\xff" * 8 + bytes(masked[:-4])) & 0xFFFFFFFF
    return struct.unpack(">I", struct.pack("<I", crc))[0]


def tshark_fields(path, fields):
    """Run real tshark ($TSHARK) with the §3a flags; one dict per frame.

    A field seen more than once in a frame gives "a;b" (tshark 4.0 lists
    ImmDt and IETH twice)."""
    tshark = os.environ.get("TSHARK")
    if not tshark:
        print("FAIL: $TSHARK is empty: configure did not find tshark (scripts/install-deps installs it)")
        sys.exit(1)
    argv = [tshark, "-n", "-r", path] + TSHARK_FLAGS + ["-T", "fields", "-E", "separator=|",
                                                       "-E", "aggregator=;"]
    for f in ["frame.number"] + fields:
        argv += ["-e", f]
    rc, out, err = run(argv)
    if rc != 0:
        print("FAIL: tshark exited %d: %s" % (rc, err))
        sys.exit(1)
    rows = []
    for line in out.splitlines():
        vals = line.split("|")
        rows.append(dict(zip(["frame.number"] + fields, vals)))
    return rows


def png_pixels(path):
    """(width, height, rows of RGBA tuples) of an 8-bit RGBA or RGB PNG (PNG spec §9 filters)."""
    d = open(path, "rb").read()
    assert d[:8] == b"\x89PNG\r\n\x1a\n"
    off, idat, w = 8, b"", 0
    while off < len(d):
        n, typ = struct.unpack(">I4s", d[off:off + 8])
        body = d[off + 8:off + 8 + n]
        if typ == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
            bpp = 4 if ctype == 6 else 3
        elif typ == b"IDAT":
            idat += body
        off += 12 + n
    raw, stride, prev, rows, p = zlib.decompress(idat), w * bpp, None, [], 0
    for _ in range(h):
        ft, line = raw[p], bytearray(raw[p + 1:p + 1 + stride])
        p += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i] if prev else 0
            c = prev[i - bpp] if prev and i >= bpp else 0
            if ft == 1:
                line[i] = (line[i] + a) & 0xFF
            elif ft == 2:
                line[i] = (line[i] + b) & 0xFF
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif ft == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(line)
        prev = line
    return w, h, [[tuple(r[x * bpp:x * bpp + 3]) for x in range(w)] for r in rows]
