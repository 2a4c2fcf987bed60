"""cm_tshark.py: real tshark decodes uroce0's capture of tests/cm_daemon.py's
first exchanges as InfiniBand CM MADs with the values the test put in: the
oracle that netstack/cm_mad.c writes the IBTA layouts (docs/rdma-cm.md).

  cm_tshark.py PCAP UDP_PORT LISTEN_PORT UROCE0_GUID UROCE1_GUID

The capture starts with: REQ (uroce1 -> uroce0), REP, RTU, DREQ, DREP of the
first connection; later a REQ with private data "please" answered by a REJ
(consumer, 28) and a REQ for the port after the listener's answered by a REJ
(invalid service ID, 8); the first two REJs between the devices are those. Exit 0 if every field matches, 1 otherwise.
"""
import os, subprocess, sys

PCAP, PORT, LPORT, GUID0, GUID1 = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
TSHARK = os.environ.get('TSHARK')
if not TSHARK:
    print('FAIL: $TSHARK is empty: configure did not find tshark (scripts/install-deps installs it)')
    sys.exit(1)
failures = []

FIELDS = {
    0x10: ['infiniband.cm.req', 'infiniband.cm.req.serviceid.protocol', 'infiniband.cm.req.serviceid.dport',
           'infiniband.cm.req.localcaguid', 'infiniband.cm.req.localqpn', 'infiniband.cm.req.responderres',
           'infiniband.cm.req.initdepth', 'infiniband.cm.req.remoteresptout', 'infiniband.cm.req.transpsvctype',
           'infiniband.cm.req.startpsn', 'infiniband.cm.req.localresptout', 'infiniband.cm.req.retrcount',
           'infiniband.cm.req.pkey', 'infiniband.cm.req.pppmtu', 'infiniband.cm.req.rnrretrcount',
           'infiniband.cm.req.maxcmretr', 'infiniband.cm.req.srq', 'infiniband.cm.req.prim_locallid',
           'infiniband.cm.req.prim_remotelid', 'infiniband.cm.req.prim_localgid_ipv4',
           'infiniband.cm.req.prim_remotegid_ipv4', 'infiniband.cm.req.prim_flowlabel',
           'infiniband.cm.req.prim_tfcclass', 'infiniband.cm.req.prim_hoplim', 'infiniband.cm.req.prim_sl',
           'infiniband.cm.req.prim_localacktout', 'infiniband.cm.req.ip_cm.ipv', 'infiniband.cm.req.ip_cm.sip4',
           'infiniband.cm.req.ip_cm.dip4', 'infiniband.cm.req.ip_cm.private'],
    0x13: ['infiniband.cm.rep', 'infiniband.cm.rep.remotecommid', 'infiniband.cm.rep.localqpn',
           'infiniband.cm.rep.startpsn', 'infiniband.cm.rep.respres', 'infiniband.cm.rep.initdepth',
           'infiniband.cm.rep.tgtackdelay', 'infiniband.cm.rep.failoveracc', 'infiniband.cm.rep.rnrretrcount',
           'infiniband.cm.rep.srq', 'infiniband.cm.rep.localcaguid', 'infiniband.cm.rep.private'],
    0x14: ['infiniband.cm.rtu.localcommid', 'infiniband.cm.rtu.remotecommid'],
    0x12: ['infiniband.cm.rej.localcommid', 'infiniband.cm.rej.remotecommid', 'infiniband.cm.rej.msgrej',
           'infiniband.cm.rej.reason', 'infiniband.cm.rej.private'],
    0x15: ['infiniband.cm.dreq.localcommid', 'infiniband.cm.dreq.remotecommid', 'infiniband.cm.req.remoteqpneecn'],
    0x16: ['infiniband.cm.drsp.localcommid', 'infiniband.cm.drsp.remotecommid'],
}
COMMON = ['frame.number', 'ip.src', 'infiniband.bth.destqp', 'infiniband.bth.p_key', 'infiniband.deth.q_key',
          'infiniband.deth.srcqp', 'infiniband.mad.baseversion', 'infiniband.mad.mgmtclass',
          'infiniband.mad.classversion', 'infiniband.mad.method', 'infiniband.mad.attributeid']


def frames(attr):
    argv = [TSHARK, '-n', '-r', PCAP, '-d', f'udp.port=={PORT},infiniband', '-Y',
            f'infiniband.mad.attributeid == {attr} && !(ip.src == 127.0.0.3) && !(ip.dst == 127.0.0.3)',
            '-T', 'fields', '-E', 'separator=|']
    for f in COMMON + FIELDS[attr]:
        argv += ['-e', f]
    out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    rows = []
    for line in out.splitlines():
        v = line.split('|')
        rows.append(dict(zip(COMMON + FIELDS[attr], v)))
    return rows


def check(name, expected, actual):
    if expected != actual:
        failures.append(f'{name}: expected {expected!r}, got {actual!r}')
        print(f'FAIL: {name}: expected {expected!r}, got {actual!r}')
    else:
        print(f'ok: {name} = {actual!r}')


def num(s):
    return int(s, 0)


def common(name, r):
    check(f'{name}: BTH dest QP 1, P_Key 0xffff, DETH Q_Key 0x80010000, source QP 1, MAD 1/0x07/2/SEND',
          (1, 0xffff, 0x80010000, 1, 1, 7, 2, 3),
          (num(r['infiniband.bth.destqp']), num(r['infiniband.bth.p_key']), num(r['infiniband.deth.q_key']),
           num(r['infiniband.deth.srcqp']), num(r['infiniband.mad.baseversion']),
           num(r['infiniband.mad.mgmtclass']), num(r['infiniband.mad.classversion']),
           num(r['infiniband.mad.method'])))


def text(hexstr, n):
    return bytes.fromhex(hexstr.replace(':', ''))[:n]


req, rep, rtu = frames(0x10), frames(0x13), frames(0x14)
rej, dreq, drep = frames(0x12), frames(0x15), frames(0x16)
check('frames: REQ, REP, RTU, REJ, DREQ, DREP at least', True,
      len(req) >= 3 and len(rep) >= 1 and len(rtu) >= 1 and len(rej) >= 2 and len(dreq) >= 1 and len(drep) >= 1)
if failures:
    sys.exit(1)
r = req[0]
common('REQ', r)
check('REQ: sender 127.0.0.2', '127.0.0.2', r['ip.src'])
check('REQ: service ID protocol TCP, port', (6, LPORT),
      (num(r['infiniband.cm.req.serviceid.protocol']), num(r['infiniband.cm.req.serviceid.dport'])))
check('REQ: local CA GUID (uroce1)', GUID1, num(r['infiniband.cm.req.localcaguid']))
check('REQ: local QPN, responder resources, initiator depth', (0x1234, 4, 2),
      (num(r['infiniband.cm.req.localqpn']), num(r['infiniband.cm.req.responderres']),
       num(r['infiniband.cm.req.initdepth'])))
check('REQ: remote/local CM response timeout 20, transport RC, retry 7, rnr 6', (20, 20, 0, 7, 6),
      (num(r['infiniband.cm.req.remoteresptout']), num(r['infiniband.cm.req.localresptout']),
       num(r['infiniband.cm.req.transpsvctype']), num(r['infiniband.cm.req.retrcount']),
       num(r['infiniband.cm.req.rnrretrcount'])))
check('REQ: P_Key, path MTU 1024 (3), max CM retries 15, SRQ 0', (0xffff, 3, 15, 0),
      (num(r['infiniband.cm.req.pkey']), num(r['infiniband.cm.req.pppmtu']), num(r['infiniband.cm.req.maxcmretr']),
       num(r['infiniband.cm.req.srq'])))
check('REQ: primary path LIDs permissive, GIDs, flow label 0, TClass 0, hop limit 64, SL 0, ACK timeout 17',
      (0xffff, 0xffff, '127.0.0.2', '127.0.0.1', 0, 0, 64, 0, 17),
      (num(r['infiniband.cm.req.prim_locallid']), num(r['infiniband.cm.req.prim_remotelid']),
       r['infiniband.cm.req.prim_localgid_ipv4'], r['infiniband.cm.req.prim_remotegid_ipv4'],
       num(r['infiniband.cm.req.prim_flowlabel']), num(r['infiniband.cm.req.prim_tfcclass']),
       num(r['infiniband.cm.req.prim_hoplim']), num(r['infiniband.cm.req.prim_sl']),
       num(r['infiniband.cm.req.prim_localacktout'])))
check('REQ: IP CM header (IPv4, 127.0.0.2 -> 127.0.0.1) and private data', (4, '127.0.0.2', '127.0.0.1',
                                                                            b'hello-from-active'),
      (num(r['infiniband.cm.req.ip_cm.ipv']), r['infiniband.cm.req.ip_cm.sip4'], r['infiniband.cm.req.ip_cm.dip4'],
       text(r['infiniband.cm.req.ip_cm.private'], 17)))
req_comm = num(r['infiniband.cm.req'])
p = rep[0]
common('REP', p)
check('REP: sender 127.0.0.1, remote comm ID = the REQ\'s local comm ID', ('127.0.0.1', req_comm),
      (p['ip.src'], num(p['infiniband.cm.rep.remotecommid'])))
check('REP: local QPN, responder resources, initiator depth, target ACK delay 15, failover 0, rnr 5, SRQ 0',
      (0x5678, 3, 1, 15, 0, 5, 0),
      (num(p['infiniband.cm.rep.localqpn']), num(p['infiniband.cm.rep.respres']), num(p['infiniband.cm.rep.initdepth']),
       num(p['infiniband.cm.rep.tgtackdelay']), num(p['infiniband.cm.rep.failoveracc']),
       num(p['infiniband.cm.rep.rnrretrcount']), num(p['infiniband.cm.rep.srq'])))
check('REP: local CA GUID (uroce0), private data', (GUID0, b'hello-from-passive'),
      (num(p['infiniband.cm.rep.localcaguid']), text(p['infiniband.cm.rep.private'], 18)))
rep_comm = num(p['infiniband.cm.rep'])
t = rtu[0]
common('RTU', t)
check('RTU: comm IDs', (req_comm, rep_comm),
      (num(t['infiniband.cm.rtu.localcommid']), num(t['infiniband.cm.rtu.remotecommid'])))
d = dreq[0]
common('DREQ', d)
check('DREQ: comm IDs, remote QPN', (req_comm, rep_comm, 0x5678),
      (num(d['infiniband.cm.dreq.localcommid']), num(d['infiniband.cm.dreq.remotecommid']),
       num(d['infiniband.cm.req.remoteqpneecn'])))
d = drep[0]
common('DREP', d)
check('DREP: comm IDs', (rep_comm, req_comm),
      (num(d['infiniband.cm.drsp.localcommid']), num(d['infiniband.cm.drsp.remotecommid'])))
req_please = [q for q in req if text(q['infiniband.cm.req.ip_cm.private'], 6) == b'please']
req_nobody = [q for q in req if num(q['infiniband.cm.req.serviceid.dport']) == LPORT + 1]
check('one REQ with private data "please", one for the port nobody listens on', (1, 1),
      (len(req_please), len(req_nobody)))
if failures:
    sys.exit(1)
j = rej[0]
common('REJ', j)
check('REJ (consumer): remote comm ID = the "please" REQ\'s, message REQ, reason 28, private data',
      (num(req_please[0]['infiniband.cm.req']), 0, 28, b'no-thanks'),
      (num(j['infiniband.cm.rej.remotecommid']), num(j['infiniband.cm.rej.msgrej']), num(j['infiniband.cm.rej.reason']),
       text(j['infiniband.cm.rej.private'], 9)))
j = rej[1]
check('REJ (no listener): local comm ID 0, remote = that REQ\'s, reason 8', (0, num(req_nobody[0]['infiniband.cm.req']), 8),
      (num(j['infiniband.cm.rej.localcommid']), num(j['infiniband.cm.rej.remotecommid']),
       num(j['infiniband.cm.rej.reason'])))
if failures:
    print(f'{len(failures)} FAILED')
    sys.exit(1)
print('tshark: all CM fields as sent')
