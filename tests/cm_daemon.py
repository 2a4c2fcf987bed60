"""cm_daemon.py: the connection manager of two live uroced, driven over their
control sockets as the provider half drives it (include/uroce/abi_cm.h):
CM_HELLO with an event socket, then UCMA requests carrying the kernel's
rdma_ucm command structs; events read from the event socket.

Run by tests/it_cm_daemon.sh:
  cm_daemon.py SOCK0 SOCK1 UDP_PORT
uroce0 (127.0.0.1) is the passive side, uroce1 (127.0.0.2, --mtu 1024) the
active side; both run with a short --cm-timeout-ms. Every case checks exact
event types, statuses, private data and QP attributes. Prints one line per
check; exit 0 if all pass, 1 with the failures listed.
"""
import array, os, re, select, socket, struct, sys, time, zlib

QUOTA_MODE = sys.argv[1] == 'quota'   # cm_daemon.py quota SOCK N: run as a user with quotas
V6_MODE = sys.argv[1] == 'v6'         # cm_daemon.py v6 SOCK: one IPv6 device (::1), both ends
PENDING_MODE = sys.argv[1] == 'pending'   # cm_daemon.py pending SOCK PORT: as root, forks user nobody
if PENDING_MODE:
    SOCK0, PORT = sys.argv[2], int(sys.argv[3])
elif QUOTA_MODE:
    SOCK0, QUOTA_N = sys.argv[2], int(sys.argv[3])
elif V6_MODE:
    SOCK0 = sys.argv[2]
else:
    SOCK0, SOCK1, PORT = sys.argv[1], sys.argv[2], int(sys.argv[3])
# the control protocol's version, as the daemon built from this tree has it
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'include', 'uroce', 'abi.h')) as _h:
    ABI = int(re.search(r'#define UROCE_ABI_VERSION (\d+)', _h.read()).group(1))
MAGIC = 0x55524F43
OP_CM_HELLO, OP_UCMA = 40, 41
# enum rdma_ucm_cmd
CREATE_ID, DESTROY_ID, BIND_IP, RESOLVE_IP, RESOLVE_ROUTE, QUERY_ROUTE, CONNECT, LISTEN, ACCEPT, \
    REJECT, DISCONNECT, INIT_QP_ATTR, GET_EVENT, GET_OPTION, SET_OPTION, NOTIFY, JOIN_IP_MCAST, \
    LEAVE_MCAST, MIGRATE_ID, QUERY, BIND, RESOLVE_ADDR, JOIN_MCAST = range(23)
PS_TCP, PS_UDP = 0x0106, 0x0111
# rdma_cm_event_type
EV = {0: 'ADDR_RESOLVED', 1: 'ADDR_ERROR', 2: 'ROUTE_RESOLVED', 4: 'CONNECT_REQUEST',
      5: 'CONNECT_RESPONSE', 6: 'CONNECT_ERROR', 7: 'UNREACHABLE', 8: 'REJECTED',
      9: 'ESTABLISHED', 10: 'DISCONNECTED', 15: 'TIMEWAIT_EXIT'}
QPS_INIT, QPS_RTR, QPS_RTS = 1, 2, 3
failures = []
seq = [0]


def check(name, expected, actual):
    if expected != actual:
        failures.append(f'{name}: expected {expected!r}, got {actual!r}')
        print(f'FAIL: {name}: expected {expected!r}, got {actual!r}', flush=True)
    else:
        print(f'ok: {name} = {actual!r}', flush=True)


def sin(ip, port):
    """struct sockaddr_in padded to a sockaddr_storage (128 bytes)."""
    return struct.pack('<H', socket.AF_INET) + struct.pack('>H', port) + socket.inet_aton(ip) + bytes(120)


def conn_param(qpn=0, pdata=b'', rr=0, idepth=0, retry=0, rnr=0, valid=1, qkey=0):
    return struct.pack('<II', qpn, qkey) + pdata.ljust(256, b'\0') + \
        bytes([len(pdata), 0, rr, idepth, 0, retry, rnr, valid])


class CM:
    """One CM connection (an event channel on one device)."""

    def __init__(self, path, tag):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.s.connect(path)
        self.ev, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.tag = tag
        st, body = self.call(OP_CM_HELLO, struct.pack('<IIII', ABI, os.getpid(), tag, 0), 56, [theirs.fileno()])
        theirs.close()
        if st:
            raise OSError(st, f'CM_HELLO: {os.strerror(st)}')
        self.client_id, self.udp_port, self.family, self.guid = struct.unpack_from('<IHHQ', body, 24)

    def call(self, op, body, resp_len, fds=()):
        seq[0] += 1
        msg = struct.pack('<IHHIIiI', MAGIC, ABI, op, seq[0], 24 + len(body), 0, 0) + body
        anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', fds))] if fds else []
        self.s.sendmsg([msg], anc)
        r = self.s.recv(2048)
        st = struct.unpack_from('<i', r, 16)[0]
        return st, r

    def ucma(self, cmd, body, out_len=0):
        req = struct.pack('<IHH', cmd, len(body), out_len) + body.ljust(512, b'\0')
        st, r = self.call(OP_UCMA, req, 544)
        n = struct.unpack_from('<I', r, 24)[0]
        return st, r[32:32 + n]

    def create(self, uid, ps=PS_TCP):
        st, out = self.ucma(CREATE_ID, struct.pack('<QQHB5x', uid, 0, ps, 0), 4)
        assert st == 0, f'CREATE_ID: {os.strerror(st)}'
        return struct.unpack('<I', out)[0]

    def bind(self, h, ip, port):
        return self.ucma(BIND, struct.pack('<IHH', h, 16, 0) + sin(ip, port))[0]

    def resolve(self, h, ip, port):
        return self.ucma(RESOLVE_ADDR, struct.pack('<IIHHI', h, 2000, 0, 16, 0) + bytes(128) + sin(ip, port))[0]

    def listen(self, h, backlog=8):
        return self.ucma(LISTEN, struct.pack('<II', h, backlog))[0]

    def route(self, h):
        return self.ucma(RESOLVE_ROUTE, struct.pack('<II', h, 2000))[0]

    def connect(self, h, **kw):
        return self.ucma(CONNECT, conn_param(**kw) + struct.pack('<II', h, 0) + bytes(8))[0]

    def accept(self, h, uid=0, **kw):
        return self.ucma(ACCEPT, struct.pack('<Q', uid) + conn_param(**kw) + struct.pack('<II', h, 0) + bytes(8))[0]

    def reject(self, h, pdata=b'', reason=0):
        return self.ucma(REJECT, struct.pack('<IBB2x', h, len(pdata), reason) + pdata.ljust(256, b'\0'))[0]

    def disconnect(self, h):
        return self.ucma(DISCONNECT, struct.pack('<I', h))[0]

    def destroy(self, h):
        st, out = self.ucma(DESTROY_ID, struct.pack('<QII', 0, h, 0), 4)
        return st, (struct.unpack('<I', out)[0] if out else None)

    def query(self, h, option, out_len=280):
        return self.ucma(QUERY, struct.pack('<QII', 0, h, option), out_len)

    def qp_attr(self, h, state):
        st, out = self.ucma(INIT_QP_ATTR, struct.pack('<QII', 0, h, state), 144)
        if st:
            return st, None
        f = struct.unpack_from('<10I', out, 0)
        a = dict(mask=f[0], qp_state=f[1], path_mtu=f[3], qkey=f[5], rq_psn=f[6], sq_psn=f[7],
                 dest_qp_num=f[8], access=f[9])
        a['dgid'] = out[40:56]
        a['sgid_index'], a['hop_limit'], a['tclass'] = out[60], out[61], out[62]
        a['is_global'], a['port'] = out[40 + 29], out[40 + 30]
        (a['pkey_index'],) = struct.unpack_from('<H', out, 124)
        a['max_rd_atomic'], a['max_dest_rd_atomic'], a['min_rnr_timer'], a['port_num'], a['timeout'], \
            a['retry_cnt'], a['rnr_retry'] = out[130:137]
        return 0, a

    def set_option(self, h, level, name, val):
        return self.ucma(SET_OPTION, struct.pack('<QIIII', 0, h, level, name, len(val)) + val)[0]

    def event(self, timeout=20.0):
        r, _, _ = select.select([self.ev], [], [], timeout)
        if not r:
            return None
        b = self.ev.recv(1024)
        tag, _, uid, hid, ev, status = struct.unpack_from('<IIQIIi', b, 0)
        e = dict(tag=tag, uid=uid, id=hid, event=EV.get(ev, ev), status=status, raw=b)
        # conn param at 28: qp_num, qkey, private data, then its length and the rest
        e['qp_num'], e['qkey'] = struct.unpack_from('<II', b, 28)
        e['pdata'] = b[36:36 + 256]
        e['pdata_len'], e['srq'], e['rr'], e['idepth'], e['flow'], e['retry'], e['rnr'] = b[292:299]
        # ud param: ah_attr at 36, private data at 68, its length at 324
        e['ud_dgid'] = b[36:52]
        e['ud_is_global'], e['ud_port'] = b[65], b[66]
        e['ud_pdata'], e['ud_pdata_len'] = b[68:68 + 256], b[324]
        return e

    def no_event(self, secs):
        return self.event(secs)

    def close(self):
        self.s.close()
        self.ev.close()


def expect(cm, name, event, status=0):
    e = cm.event()
    check(f'{name}: event', (event, status), (e['event'], e['status']) if e else None)
    return e


def v4mapped(ip):
    return bytes(10) + b'\xff\xff' + socket.inet_aton(ip)


def status(sock):
    import subprocess
    out = subprocess.run([os.environ['UROCED'], '--admin', sock, 'status'], stdout=subprocess.PIPE,
                         text=True).stdout
    for line in out.splitlines():
        if line.startswith('cm '):
            return dict(kv.split('=', 1) for kv in line.split()[1:])
    return {}


def sin6(ip, port):
    """struct sockaddr_in6 padded to a sockaddr_storage."""
    return struct.pack('<H', socket.AF_INET6) + struct.pack('>HI', port, 0) + \
        socket.inet_pton(socket.AF_INET6, ip) + bytes(4) + bytes(100)


if V6_MODE:
    L, C = CM(SOCK0, 1), CM(SOCK0, 2)
    port6 = 20000 + os.getpid() % 20000
    hl = L.create(1)
    check('v6: bind ::1', 0, L.ucma(BIND, struct.pack('<IHH', hl, 28, 0) + sin6('::1', port6))[0])
    check('v6: bind an IPv4 address on an IPv6 device', 19, C.bind(C.create(5), '192.0.2.1', 0))
    check('v6: listen', 0, L.listen(hl))
    hc = C.create(2)
    st = C.ucma(RESOLVE_ADDR, struct.pack('<IIHHI', hc, 2000, 0, 28, 0) + bytes(128) + sin6('::1', port6))[0]
    check('v6: resolve ::1', 0, st)
    expect(C, 'v6 resolve', 'ADDR_RESOLVED')
    C.route(hc)
    expect(C, 'v6 route', 'ROUTE_RESOLVED')
    check('v6: connect', 0, C.connect(hc, qpn=0x61, pdata=b'six'))
    e = expect(L, 'v6 passive', 'CONNECT_REQUEST')
    check('v6: private data after the IPv6 cma header', b'six', e['pdata'][:3])
    hp = e['id']
    st, q = L.query(hp, 0)
    check('v6: the new id\'s addresses (AF_INET6 ::1, port)', (28, 28, socket.AF_INET6, port6,
                                                              socket.inet_pton(socket.AF_INET6, '::1')),
          (struct.unpack_from('<H', q, 12)[0], struct.unpack_from('<H', q, 14)[0], struct.unpack_from('<H', q, 16)[0],
           struct.unpack_from('>H', q, 18)[0], q[24:40]))
    L.accept(hp, qpn=0x62)
    expect(C, 'v6 active', 'CONNECT_RESPONSE')
    st, r6 = C.qp_attr(hc, QPS_RTR)
    check('v6: RTR dgid ::1, dest QPN', (socket.inet_pton(socket.AF_INET6, '::1'), 0x62), (r6['dgid'], r6['dest_qp_num']))
    C.accept(hc, valid=0)
    expect(L, 'v6 passive', 'ESTABLISHED')
    C.disconnect(hc)
    expect(L, 'v6 passive', 'DISCONNECTED')
    L.disconnect(hp)
    expect(C, 'v6 active', 'DISCONNECTED')
    L.close()
    C.close()
    if failures:
        sys.exit(1)
    print('v6: all passed')
    sys.exit(0)

def pending_flood():
    """User nobody listens (backlog 1024), floods its own listener with REQs
    from 127.0.0.3 and reads the CONNECT_REQUESTs without answering any:
    its pending requests are bounded by its own quota of CM ids, and another
    user's listener on the same device still gets its connection."""
    import zlib as z_
    rd, wr = os.pipe()
    rd2, wr2 = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rd)
        os.close(wr2)
        os.setgroups([])
        os.setresgid(65534, 65534, 65534)
        os.setresuid(65534, 65534, 65534)
        X = CM(SOCK0, 0x6666)
        hx = X.create(1)
        X.bind(hx, '127.0.0.1', LP)
        X.listen(hx, backlog=1024)
        fl = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        fl.bind(('127.0.0.3', 0))
        sp = fl.getsockname()[1]
        got = 0
        for i in range(1100):
            b_ = bytearray(232)
            struct.pack_into('>I', b_, 0, 0x10000 + i)
            struct.pack_into('>Q', b_, 8, (0x0106 << 16) | LP)
            b_[141] = 0x40
            b_[140 + 16:140 + 20] = socket.inet_aton('127.0.0.3')
            b_[140 + 32:140 + 36] = socket.inet_aton('127.0.0.1')
            bth = struct.pack('>BBHII', 0x64, 0, 0xffff, 1, 1)
            p_ = bth + struct.pack('>II', 0x80010000, 1) + \
                struct.pack('>BBBBHHQHHI', 1, 7, 2, 3, 0, 0, i, 0x10, 0, 0) + bytes(b_) + b'\0\0\0\0'
            udp_len = 8 + len(p_)
            ip = struct.pack('>BBHHHBBH4s4s', 0x45, 0xff, 20 + udp_len, 0, 0x4000, 0xff, 17, 0xffff,
                             socket.inet_aton('127.0.0.3'), socket.inet_aton('127.0.0.1'))
            h_ = bytearray(p_[:-4])
            h_[4] = 0xff
            crc = z_.crc32(b'\xff' * 8 + ip + struct.pack('>HHHH', sp, PORT, udp_len, 0xffff) + bytes(h_))
            fl.sendto(p_[:-4] + struct.pack('<I', crc & 0xffffffff), ('127.0.0.1', PORT))
            while X.event(0) is not None:
                got += 1
            if i % 64 == 63:
                time.sleep(0.02)
        while X.event(1.0) is not None:
            got += 1
        os.write(wr, struct.pack('<I', got))
        os.read(rd2, 1)   # hold the pending requests until the other user is done
        os._exit(0)
    os.close(wr)
    os.close(rd2)
    got = struct.unpack('<I', os.read(rd, 4))[0]
    check('pending: nobody\'s CONNECT_REQUESTs = its quota of ids (1024) less its listener', 1023, got)
    check('pending: device pending count', '1023', status(SOCK0)['pending'])
    V = CM(SOCK0, 0x7777)
    hv = V.create(2)
    V.bind(hv, '127.0.0.1', LP + 1)
    V.listen(hv)
    for k in range(2):   # the device had room for one more before
        a = V.create(3 + k)
        V.resolve(a, '127.0.0.1', LP + 1); expect(V, 'pending: resolve', 'ADDR_RESOLVED')
        V.route(a); expect(V, 'pending: route', 'ROUTE_RESOLVED')
        V.connect(a, qpn=0x99 + k)
        e = V.event()
        check(f'pending: root\'s listener still gets connect request {k + 1}', 'CONNECT_REQUEST', e and e['event'])
    os.write(wr2, b'x')
    os.waitpid(pid, 0)
    V.close()


if PENDING_MODE:
    LP = 20000 + os.getpid() % 20000
    pending_flood()
    for i in range(40):   # the nobody process's ids go with its connection
        if status(SOCK0)['pending'] == '0':
            break
        time.sleep(0.25)
    check('pending: none left after nobody\'s connection closed', '0', status(SOCK0)['pending'])
    if failures:
        sys.exit(1)
    print('pending: all passed')
    sys.exit(0)

if QUOTA_MODE:
    # the per-uid quota of CM ids, over two CM connections of the uid
    q1, q2 = CM(SOCK0, 1), CM(SOCK0, 2)
    made, q2_ids = [], []
    for i in range(QUOTA_N):
        st, out = (q1 if i % 2 else q2).ucma(CREATE_ID, struct.pack('<QQHB5x', i, 0, PS_TCP, 0), 4)
        made.append(st)
        if not i % 2 and not st:
            q2_ids.append(struct.unpack('<I', out)[0])
    check(f'{QUOTA_N} ids over two connections', [0] * QUOTA_N, made)
    check('one more: ENOMEM', 12, q1.ucma(CREATE_ID, struct.pack('<QQHB5x', 99, 0, PS_TCP, 0), 4)[0])
    check('one destroyed, one more', 0, q2.destroy(q2_ids[0])[0])
    check('then CREATE_ID again', 0, q1.ucma(CREATE_ID, struct.pack('<QQHB5x', 98, 0, PS_TCP, 0), 4)[0])
    q1.close()
    q2.close()
    if failures:
        sys.exit(1)
    print('quota: all passed')
    sys.exit(0)

# ---- CM_HELLO rules (abi_cm.h)
def raw_conn():
    c = CM.__new__(CM)
    c.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.s.connect(SOCK0)
    return c


ev_mine, ev_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
c = raw_conn()
check('CM_HELLO with another pid', 1, c.call(OP_CM_HELLO, struct.pack('<IIII', ABI, os.getpid() + 1, 1, 0), 56,
                                             [ev_theirs.fileno()])[0])   # EPERM
c = raw_conn()
check('CM_HELLO without the event socket', 9, c.call(OP_CM_HELLO, struct.pack('<IIII', ABI, os.getpid(), 1, 0), 56)[0])
c = raw_conn()
rp, wp = os.pipe()
check('CM_HELLO with a pipe as event socket', 9,
      c.call(OP_CM_HELLO, struct.pack('<IIII', ABI, os.getpid(), 1, 0), 56, [rp])[0])   # EBADF
c = raw_conn()
check('UCMA before CM_HELLO', 71, c.call(OP_UCMA, bytes(520), 544)[0])   # EPROTO
c = CM(SOCK0, 1)
check('second CM_HELLO', 114, c.call(OP_CM_HELLO, struct.pack('<IIII', ABI, os.getpid(), 1, 0), 56,
                                     [ev_theirs.fileno()])[0])   # EALREADY
check('a verbs opcode (QUERY_PORT) on a CM connection', 71, c.call(2, struct.pack('<II', 1, 0), 24 + 48)[0])
check('UCMA command 999', 95, c.ucma(999, b'')[0])
st, r = c.call(OP_UCMA, struct.pack('<IHH', CREATE_ID, 600, 4) + bytes(512), 544)
check('UCMA in_len over 512', 22, st)
check('CREATE_ID without room for the answer', 28, c.ucma(CREATE_ID, struct.pack('<QQHB5x', 1, 0, PS_TCP, 0), 2)[0])
check('CREATE_ID of an unknown port space', 22, c.ucma(CREATE_ID, struct.pack('<QQHB5x', 1, 0, 0x77, 0), 4)[0])
c.close()

P = CM(SOCK0, 0xAAAA)   # passive, uroce0 127.0.0.1
A = CM(SOCK1, 0xBBBB)   # active, uroce1 127.0.0.2 (MTU 1024)
LPORT = 20000 + os.getpid() % 20000
print(f'params {LPORT} {P.guid} {A.guid}', flush=True)

# ---- bind rules
h = P.create(1)
check('bind to an address that is not the device\'s', 19, P.bind(h, '192.0.2.9', LPORT))   # ENODEV
# A loopback address that is not the device's binds as the wildcard, and the
# wildcard binds no device (cma.c cma_any_addr): QUERY_ROUTE answers
# node_guid 0 and port_num 0 (ucma.c ucma_query_route), the address as bound.
for ip, uid in (('127.0.0.9', 5), ('0.0.0.0', 6)):
    hl = P.create(uid)
    check(f'bind to {ip}', 0, P.bind(hl, ip, 0))
    st, q = P.ucma(QUERY_ROUTE, struct.pack('<QII', 0, hl, 0), 208)
    check(f'bound to {ip}: no device (node_guid, port_num)', (0, bytes(8), 0), (st, q[0:8], q[196]))
    check(f'bound to {ip}: src_addr', socket.inet_aton(ip), q[136 + 4:136 + 8])
    st, q = P.query(hl, 0)
    check(f'bound to {ip}: query addr: node_guid 0, port_num 0, pkey 0', (0, bytes(8), 0, 0),
          (st, q[0:8], q[8], struct.unpack_from('<H', q, 10)[0]))
    check(f'listen on {ip}', 0, P.listen(hl))
    st, q = P.ucma(QUERY_ROUTE, struct.pack('<QII', 0, hl, 0), 208)
    check(f'listening on {ip}: still no device', bytes(8), q[0:8])
    check(f'destroy the {ip} listener', 0, P.destroy(hl)[0])
check('bind with addr_size 128 (not sockaddr_in\'s)', 22,
      P.ucma(BIND, struct.pack('<IHH', h, 128, 0) + sin('127.0.0.1', LPORT))[0])
check('bind to the device address', 0, P.bind(h, '127.0.0.1', LPORT))
check('second bind of the same id', 22, P.bind(h, '127.0.0.1', LPORT))                     # EINVAL
hb2 = P.create(2)
check('second id on the same address and port', 98, P.bind(hb2, '127.0.0.1', LPORT))       # EADDRINUSE
check('wildcard on the same port', 98, P.bind(hb2, '0.0.0.0', LPORT))
check('port 0 picks an ephemeral port', 0, P.bind(hb2, '127.0.0.1', 0))
st, q = P.query(hb2, 0)
eport = struct.unpack_from('>H', q, 18)[0]
check('ephemeral port in 32768..60999', True, 32768 <= eport <= 60999)
check('query addr: port_num, pkey', (1, 0xffff), (q[8], struct.unpack_from('<H', q, 10)[0]))
check('query addr: node_guid big-endian', struct.pack('>Q', P.guid), q[0:8])
check('query addr: ibdev_index', 0xffffffff, struct.unpack_from('<I', q, 272)[0])
check('destroy id', 0, P.destroy(hb2)[0])
check('destroy a freed handle', 2, P.destroy(hb2)[0])
hx = P.create(3)
check('a new id does not reuse a destroyed id\'s handle', True, hx not in (h, hb2))
P.destroy(hx)                                        # ENOENT
check('MIGRATE_ID of no id', 2, P.ucma(MIGRATE_ID, bytes(16), 4)[0])   # ENOENT
hm = P.create(4)
check('MIGRATE_ID to a connection tag of no connection', 2,
      P.ucma(MIGRATE_ID, struct.pack('<QII', 0, hm, 0x5151), 4)[0])
check('MIGRATE_ID to its own connection', 0, P.ucma(MIGRATE_ID, struct.pack('<QII', 0, hm, P.tag), 4)[0])
P.destroy(hm)
check('short JOIN_MCAST', 22, P.ucma(JOIN_MCAST, bytes(64), 4)[0])
check('JOIN_MCAST of no id', 2, P.ucma(JOIN_MCAST, bytes(152), 4)[0])   # ENOENT
check('JOIN_IP_MCAST of no id', 2, P.ucma(JOIN_IP_MCAST, bytes(48), 4)[0])
check('LEAVE_MCAST of no membership', 2, P.ucma(LEAVE_MCAST, bytes(16), 4)[0])
check('short CREATE_ID', 22, P.ucma(CREATE_ID, bytes(8), 4)[0])
check('id of another connection', 2, A.bind(h, '127.0.0.2', 0))   # handle h is P's, not A's
check('listen', 0, P.listen(h))

# ---- an unreachable destination: ADDR_ERROR with the routing errno
u = A.create(0x1010)
check('resolve 8.8.8.8 from 127.0.0.2 (accepted; the answer is an event)', 0, A.resolve(u, '8.8.8.8', 7))
expect(A, 'no route from a loopback address', 'ADDR_ERROR', -22)
check('resolve_route after ADDR_ERROR', 22, A.route(u))
A.destroy(u)

# ---- listen / connect / accept / RTU / ESTABLISHED / disconnect
a = A.create(0x1111)
check('resolve_addr', 0, A.resolve(a, '127.0.0.1', LPORT))
expect(A, 'resolve', 'ADDR_RESOLVED')
check('resolve_route', 0, A.route(a))
expect(A, 'route', 'ROUTE_RESOLVED')
st, qp = A.ucma(QUERY, struct.pack('<QII', 0, a, 1), 8 + 72 * 6)
num, = struct.unpack_from('<I', qp, 0)
flags, = struct.unpack_from('<I', qp, 8)
rec = qp[16:80]
check('query path: one path, flags GMP|PRIMARY|BIDIRECTIONAL', (1, 0x2b), (num, flags))
check('path record: service ID (TCP port space, port)', (0x0106 << 16) | LPORT, struct.unpack_from('>Q', rec, 0)[0])
check('path record: DGID, SGID', (v4mapped('127.0.0.1'), v4mapped('127.0.0.2')), (rec[8:24], rec[24:40]))
check('path record: P_Key, MTU (selector 2, 1024)', (0xffff, 0x83), (struct.unpack_from('>H', rec, 50)[0], rec[54]))
st, init = A.qp_attr(a, QPS_INIT)
check('INIT before connect: mask STATE|ACCESS|PKEY_INDEX|PORT, access 0, port 1',
      (0, 1 | 8 | 16 | 32, 0, 1), (st, init['mask'], init['access'], init['port_num']))
check('RTR before connect', 22, A.qp_attr(a, QPS_RTR)[0])
check('connect', 0, A.connect(a, qpn=0x1234, pdata=b'hello-from-active', rr=4, idepth=2, retry=7, rnr=6))
e = expect(P, 'passive', 'CONNECT_REQUEST')
pa = e['id']
check('CONNECT_REQUEST: a new id, the listener\'s uid, the connection\'s tag', (True, 1, 0xAAAA),
      (pa != h, e['uid'], e['tag']))
check('CONNECT_REQUEST: private data after the 36-byte header', (56, b'hello-from-active'),
      (e['pdata_len'], e['pdata'][:17]))
check('CONNECT_REQUEST: responder resources/initiator depth swapped, retry, rnr, qp_num',
      (2, 4, 7, 6, 0x1234), (e['rr'], e['idepth'], e['retry'], e['rnr'], e['qp_num']))
st, prtr = P.qp_attr(pa, QPS_RTR)
check('passive RTR: dest_qp_num, path MTU = min(4096, 1024), max_dest_rd_atomic, dgid, hop limit',
      (0, 0x1234, 3, 2, v4mapped('127.0.0.2'), 64, 1, 0),
      (st, prtr['dest_qp_num'], prtr['path_mtu'], prtr['max_dest_rd_atomic'], prtr['dgid'], prtr['hop_limit'],
       prtr['is_global'], prtr['sgid_index']))
check('passive RTR mask: STATE|AV|PATH_MTU|DEST_QPN|RQ_PSN|MAX_DEST_RD_ATOMIC|MIN_RNR_TIMER',
      1 | 128 | 256 | 1048576 | 4096 | 131072 | 32768, prtr['mask'])
st, prts = P.qp_attr(pa, QPS_RTS)
check('passive RTS: max_rd_atomic, retry, rnr (the REQ\'s), timeout 17',
      (0, 4, 7, 6, 17), (st, prts['max_rd_atomic'], prts['retry_cnt'], prts['rnr_retry'], prts['timeout']))
check('accept', 0, P.accept(pa, uid=0x2222, qpn=0x5678, pdata=b'hello-from-passive', rr=3, idepth=1, rnr=5))
e = expect(A, 'active', 'CONNECT_RESPONSE')
check('CONNECT_RESPONSE: id, uid, private data (196 bytes)', (a, 0x1111, 196, b'hello-from-passive'),
      (e['id'], e['uid'], e['pdata_len'], e['pdata'][:18]))
check('CONNECT_RESPONSE: responder resources/initiator depth swapped, qp_num, rnr',
      (1, 3, 0x5678, 5), (e['rr'], e['idepth'], e['qp_num'], e['rnr']))
st, artr = A.qp_attr(a, QPS_RTR)
st2, arts = A.qp_attr(a, QPS_RTS)
check('active RTR: dest_qp_num, path MTU 1024, max_dest_rd_atomic = 1', (0x5678, 3, 1),
      (artr['dest_qp_num'], artr['path_mtu'], artr['max_dest_rd_atomic']))
check('PSNs exchanged: active rq_psn = passive sq_psn', prts['sq_psn'], artr['rq_psn'])
check('PSNs exchanged: passive rq_psn = active sq_psn', arts['sq_psn'], prtr['rq_psn'])
check('active RTS: max_rd_atomic 3, retry 7, rnr 5, timeout 17', (3, 7, 5, 17),
      (arts['max_rd_atomic'], arts['retry_cnt'], arts['rnr_retry'], arts['timeout']))
st, ainit = A.qp_attr(a, QPS_INIT)
check('active INIT after the REP: REMOTE_WRITE|READ|ATOMIC (responder resources > 0)', 2 | 4 | 8, ainit['access'])
check('active accept (sends the RTU)', 0, A.accept(a, valid=0))
e = expect(P, 'passive', 'ESTABLISHED')
check('ESTABLISHED: id, uid from ACCEPT', (pa, 0x2222), (e['id'], e['uid']))
check('active disconnect (DREQ)', 0, A.disconnect(a))
expect(P, 'passive', 'DISCONNECTED')
check('passive disconnect (the DREP went with the DREQ: nothing to send)', 0, P.disconnect(pa))
expect(A, 'active', 'DISCONNECTED')
expect(A, 'active', 'TIMEWAIT_EXIT')
expect(P, 'passive', 'TIMEWAIT_EXIT')
st, n = A.destroy(a)
check('destroy: events reported (5 for the active id)', (0, 5), (st, n))
P.destroy(pa)

# ---- both ends on one device (MADs through the internal loopback)
S = CM(SOCK0, 0xCCCC)
a = S.create(0x9999)
S.resolve(a, '127.0.0.1', LPORT); expect(S, 'same device: resolve', 'ADDR_RESOLVED')
S.route(a); expect(S, 'same device: route', 'ROUTE_RESOLVED')
S.connect(a, qpn=0x31, pdata=b'self')
e = expect(P, 'same device: passive', 'CONNECT_REQUEST')
check('same device: CONNECT_REQUEST private data, qp_num', (b'self', 0x31), (e['pdata'][:4], e['qp_num']))
pa = e['id']
check('same device: accept', 0, P.accept(pa, qpn=0x32))
e = expect(S, 'same device: active', 'CONNECT_RESPONSE')
check('same device: CONNECT_RESPONSE qp_num', 0x32, e['qp_num'])
st, srtr = S.qp_attr(a, QPS_RTR)
check('same device: RTR dest_qp_num, path MTU 4096, dgid', (0x32, 5, v4mapped('127.0.0.1')),
      (srtr['dest_qp_num'], srtr['path_mtu'], srtr['dgid']))
S.accept(a, valid=0)
expect(P, 'same device: passive', 'ESTABLISHED')
P.disconnect(pa)
expect(S, 'same device: active', 'DISCONNECTED')
S.disconnect(a)
expect(P, 'same device: passive', 'DISCONNECTED')
expect(P, 'same device: passive', 'TIMEWAIT_EXIT')
expect(S, 'same device: active', 'TIMEWAIT_EXIT')
P.destroy(pa)
S.close()

# ---- REJECT with private data
a = A.create(0x3333)
A.resolve(a, '127.0.0.1', LPORT); expect(A, 'resolve', 'ADDR_RESOLVED')
A.route(a); expect(A, 'route', 'ROUTE_RESOLVED')
A.connect(a, qpn=0x99, pdata=b'please')
e = expect(P, 'passive', 'CONNECT_REQUEST')
r = e['id']
check('reject', 0, P.reject(r, b'no-thanks'))
e = expect(A, 'active', 'REJECTED', 28)
check('REJECTED: private data (148 bytes)', (148, b'no-thanks'), (e['pdata_len'], e['pdata'][:9]))
check('reject twice', 22, P.reject(r, b''))
check('accept after reject', 22, P.accept(r, qpn=1))
P.destroy(r)
A.destroy(a)

# ---- no listener: REJ reason 8 (invalid service ID)
a = A.create(0x4444)
A.resolve(a, '127.0.0.1', LPORT + 1); expect(A, 'resolve', 'ADDR_RESOLVED')
A.route(a); expect(A, 'route', 'ROUTE_RESOLVED')
A.connect(a, qpn=0x98)
expect(A, 'no listener', 'REJECTED', 8)
A.destroy(a)

# ---- no answer: REQ retransmitted, then UNREACHABLE -ETIMEDOUT
before = int(status(SOCK1).get('retransmits', '0'))
a = A.create(0x5555)
A.resolve(a, '127.0.0.3', LPORT); expect(A, 'resolve', 'ADDR_RESOLVED')
A.route(a); expect(A, 'route', 'ROUTE_RESOLVED')
A.connect(a, qpn=0x97)
expect(A, 'nobody answers', 'UNREACHABLE', -110)
check('REQ retransmitted 15 times', 15, int(status(SOCK1)['retransmits']) - before)
A.destroy(a)

# ---- forged and malformed MADs at uroce0: dropped and counted, nothing moves


def icrc(src, dst, sport, dport, payload):
    """ICRC of a RoCEv2 UDP payload (BTH .. ICRC slot) over IPv4 (docs/icrc.md)."""
    udp_len = 8 + len(payload)
    ip = struct.pack('>BBHHHBBH4s4s', 0x45, 0xff, 20 + udp_len, 0, 0x4000, 0xff, 17, 0xffff,
                     socket.inet_aton(src), socket.inet_aton(dst))
    udp = struct.pack('>HHHH', sport, dport, udp_len, 0xffff)
    bth = bytearray(payload[:-4])
    bth[4] = 0xff
    crc = zlib.crc32(b'\xff' * 8 + ip + udp + bytes(bth)) & 0xffffffff
    return struct.pack('<I', crc)


def mad(attr, body=b'', cls=7, ver=2, method=3):
    return struct.pack('>BBBBHHQHHI', 1, cls, ver, method, 0, 0, 0x1234, attr, 0, 0) + body.ljust(232, b'\0')


def ud_packet(src, sport, payload, qpn=1, qkey=0x80010000):
    bth = struct.pack('>BBHI I', 0x64, 0, 0xffff, qpn, 0x000001)
    deth = struct.pack('>II', qkey, 1)
    p = bth + deth + payload + b'\0\0\0\0'
    return p[:-4] + icrc(src, '127.0.0.1', sport, PORT, p)


f = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
f.bind(('127.0.0.3', PORT))   # answers go to the peer's device port
fs = f.getsockname()[1]
before = int(status(SOCK0)['drops'])
forged = [
    ('junk to QP1', b'\x64\0\xff\xff\0\0\0\x01' + bytes(20)),
    ('bad ICRC', ud_packet('127.0.0.3', fs, mad(0x10))[:-1] + b'\0'),
    ('MAD of another class', ud_packet('127.0.0.3', fs, mad(0x10, cls=4))),
    ('MAD of 255 bytes', ud_packet('127.0.0.3', fs, mad(0x10)[:255])),
    ('wrong Q_Key', ud_packet('127.0.0.3', fs, mad(0x10), qkey=0x1234)),
    ('unknown attribute', ud_packet('127.0.0.3', fs, mad(0x77))),
    ('REP for no connection', ud_packet('127.0.0.3', fs, mad(0x13, struct.pack('>II', 7, 0x11223344)))),
    ('ClassPortInfo GET', ud_packet('127.0.0.3', fs, mad(0x01, method=1))),
    ('LAP', ud_packet('127.0.0.3', fs, mad(0x19))),
]
for name, pkt in forged:
    f.sendto(pkt, ('127.0.0.1', PORT))
time.sleep(1.0)
check('forged MADs dropped and counted', len(forged), int(status(SOCK0)['drops']) - before)
check('no event from forged MADs', None, P.no_event(0.5))
# a DREQ for no connection is answered with a DREP (cm.c cm_issue_drep): the
# comm IDs swapped, the DREQ's TID; counted as a duplicate, not a drop
before = int(status(SOCK0)['duplicates'])
f.sendto(ud_packet('127.0.0.3', fs, mad(0x15, struct.pack('>III', 7, 0x11223344, 5))), ('127.0.0.1', PORT))
f.settimeout(2)
b = f.recv(2048)
check('DREQ for no connection: a DREP, comm IDs swapped, TID 0x1234',
      (0x16, 0x1234, 0x11223344, 7),
      (struct.unpack_from('>H', b, 36)[0], struct.unpack_from('>Q', b, 28)[0]) + struct.unpack_from('>II', b, 44))
check('DREQ for no connection: a duplicate', 1, int(status(SOCK0)['duplicates']) - before)

# ---- a REQ flood beyond the listener's backlog is refused with REJ 28
hb = P.create(7)
P.bind(hb, '127.0.0.1', LPORT + 2)
P.listen(hb, backlog=2)


def req(comm, port):
    body = bytearray(232)
    struct.pack_into('>I', body, 0, comm)
    struct.pack_into('>Q', body, 8, (0x0106 << 16) | port)
    body[51] = 15 << 4     # Max CM Retries 15, as cma's REQ (the REP is resent that often)
    body[140 + 1] = 0x40   # cma header: IPv4
    body[140 + 4 + 12:140 + 20] = socket.inet_aton('127.0.0.3')
    body[140 + 20 + 12:140 + 36] = socket.inet_aton('127.0.0.1')
    return bytes(body)


before = int(status(SOCK0)['refused_backlog'])
for i in range(20):
    f.sendto(ud_packet('127.0.0.3', fs, mad(0x10, req(0x100 + i, LPORT + 2))), ('127.0.0.1', PORT))
time.sleep(1.0)
got = [P.event(0.5) for _ in range(3)]
check('flood: CONNECT_REQUESTs delivered = backlog 2', ['CONNECT_REQUEST', 'CONNECT_REQUEST', None],
      [g['event'] if g else None for g in got])
check('flood: 18 refused', 18, int(status(SOCK0)['refused_backlog']) - before)
f.settimeout(2)
rejs = 0
try:
    while True:
        b = f.recv(2048)
        if b[12 + 8 + 16:12 + 8 + 18] == b'\x00\x12':
            rejs += 1
except socket.timeout:
    pass
check('flood: the forger got REJs (at least the 18 refusals)', True, rejs >= 18)
P.destroy(hb)   # its two pending ids stay with the connection
st = status(SOCK0)

# ---- a scripted peer at 127.0.0.3: retransmitted REQ/REP/DREQ are answered as
#      the IBTA state machine says, and a MAD with the right comm IDs from
#      another address moves nothing


def recv_mads(timeout=2.0):
    """MADs the scripted peer received: [(attr, message bytes)]."""
    out = []
    f.settimeout(timeout)
    try:
        while True:
            b = f.recv(2048)
            out.append((struct.unpack_from('>H', b, 36)[0], b[44:44 + 232]))
            f.settimeout(0.3)
    except socket.timeout:
        pass
    return out


def send_mad(attr, body, src_sock=None, src='127.0.0.3'):
    s_ = src_sock or f
    s_.sendto(ud_packet(src, s_.getsockname()[1], mad(attr, body)), ('127.0.0.1', PORT))


recv_mads(0.5)   # what the flood left
hd = P.create(9)
P.bind(hd, '127.0.0.1', LPORT + 4)
P.listen(hd)
body = bytearray(req(0x7001, LPORT + 4))
struct.pack_into('>I', body, 32, 0xABCDE << 8 | 3)   # local QPN 0xabcde, responder resources 3
struct.pack_into('>I', body, 44, 0x424242 << 8)      # starting PSN
body[50] = 3 << 4                                     # path MTU 1024
send_mad(0x10, bytes(body))
e = expect(P, 'scripted REQ', 'CONNECT_REQUEST')
pd_ = e['id']
before = int(status(SOCK0)['duplicates'])
send_mad(0x10, bytes(body))                           # the same REQ again
check('retransmitted REQ: no second CONNECT_REQUEST', None, P.event(1.0))
P.accept(pd_, qpn=0x4444)


def first(attr, timeout=5.0):
    """The message bytes of the first MAD with ATTR the scripted peer gets."""
    f.settimeout(timeout)
    try:
        while True:
            b = f.recv(2048)
            if struct.unpack_from('>H', b, 36)[0] == attr:
                return b[44:44 + 232]
    except socket.timeout:
        return None


reps = [first(0x13)]
check('REP to the scripted peer', True, reps[0] is not None)
p_comm = struct.unpack_from('>I', reps[0], 0)[0]
check('REP: remote comm ID 0x7001, QPN 0x4444', (0x7001, 0x4444),
      (struct.unpack_from('>I', reps[0], 4)[0], struct.unpack_from('>I', reps[0], 12)[0] >> 8))
st, sa = P.qp_attr(pd_, QPS_RTR)
check('RTR from the scripted REQ: dest QPN, RQ PSN = the REP\'s starting PSN, path MTU 1024',
      (0xABCDE, struct.unpack_from('>I', reps[0], 20)[0] >> 8, 3),
      (sa['dest_qp_num'], sa['rq_psn'], sa['path_mtu']))
st, sa = P.qp_attr(pd_, QPS_RTS)
check('RTS from the scripted REQ: SQ PSN = the REQ\'s starting PSN', 0x424242, sa['sq_psn'])
recv_mads(0.05)
send_mad(0x10, bytes(body))                           # REQ again while the REP waits for its RTU
check('REQ during REP_SENT: nothing but the REP\'s own resends', True, first(0x13, 2.0) is not None)
check('REQ during REP_SENT: no event', None, P.event(0.3))
send_mad(0x14, struct.pack('>II', 0x7001, p_comm))    # RTU (before the REP's 15 resends run out)
expect(P, 'scripted RTU', 'ESTABLISHED')
recv_mads(0.5)   # the REP's resends until the RTU came
send_mad(0x14, struct.pack('>II', 0x7001, p_comm))    # RTU again
check('retransmitted RTU: no second ESTABLISHED', None, P.event(0.5))
check('duplicates counted', 3, int(status(SOCK0)['duplicates']) - before)
g = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
g.bind(('127.0.0.4', 0))
drops = int(status(SOCK0)['drops'])
send_mad(0x15, struct.pack('>III', 0x7001, p_comm, 0x4444 << 8), g, '127.0.0.4')   # right IDs, wrong peer
time.sleep(0.5)
check('DREQ with the right comm IDs from another address: dropped', 1, int(status(SOCK0)['drops']) - drops)
check('DREQ from another address: no event', None, P.event(0.5))
send_mad(0x15, struct.pack('>III', 0x7001, p_comm, 0x4443 << 8))                  # wrong QPN
check('DREQ naming another QPN: no event', None, P.event(0.5))
send_mad(0x15, struct.pack('>III', 0x7001, p_comm, 0x4444 << 8))
expect(P, 'scripted DREQ', 'DISCONNECTED')
check('DISCONNECT after the DREQ came (answered already): 0', 0, P.disconnect(pd_))
send_mad(0x15, struct.pack('>III', 0x7001, p_comm, 0x4444 << 8))                  # DREQ again
mads = recv_mads()
check('DREP at once, then the DREP again for the retransmitted DREQ', [0x16, 0x16], [a_ for a_, m in mads])
check('retransmitted DREQ: no second DISCONNECTED', 'TIMEWAIT_EXIT', (P.event(5) or {}).get('event'))
P.destroy(pd_)
P.destroy(hd)

# ---- REJs from the scripted peer (cm.c's cm_acquire_rejected_id): once both
#      comm IDs are known a REJ must name both; a "timeout" REJ of a peer that
#      gave up its REQ names only its own comm ID (ours is 0) and the peer's
#      CA GUID as ARI, and ends the connect request the application holds


def rej(local, remote, reason, msg_rej, ari=b''):
    b_ = bytearray(232)
    struct.pack_into('>II', b_, 0, local, remote)
    b_[8] = msg_rej << 6
    b_[9] = len(ari) << 1
    struct.pack_into('>H', b_, 10, reason)
    b_[12:12 + len(ari)] = ari
    return bytes(b_)


hr = P.create(10)
P.bind(hr, '127.0.0.1', LPORT + 5)
P.listen(hr)
recv_mads(0.3)
send_mad(0x10, req(0x7101, LPORT + 5))
e = expect(P, 'REJ case: scripted REQ', 'CONNECT_REQUEST')
pr = e['id']
P.accept(pr, qpn=0x4545)
rep_ = first(0x13)
r_comm = struct.unpack_from('>I', rep_, 0)[0]
send_mad(0x14, struct.pack('>II', 0x7101, r_comm))
expect(P, 'REJ case: scripted RTU', 'ESTABLISHED')
drops = int(status(SOCK0)['drops'])
send_mad(0x12, rej(0x7999, r_comm, 28, 1))   # our comm ID right, the sender's wrong
time.sleep(0.5)
check('REJ naming our comm ID with another sender comm ID: dropped', 1, int(status(SOCK0)['drops']) - drops)
check('REJ with another sender comm ID: no event', None, P.event(0.5))
send_mad(0x12, rej(0x7101, r_comm, 28, 1))
e = expect(P, 'REJ with both comm IDs', 'REJECTED', 28)
P.destroy(pr)
recv_mads(0.3)
send_mad(0x10, req(0x7102, LPORT + 5))
e = expect(P, 'timeout REJ case: scripted REQ', 'CONNECT_REQUEST')
pt = e['id']
send_mad(0x12, rej(0x7102, 0, 1, 0, bytes.fromhex('0200fffe7f000003')))   # the peer destroyed its id
expect(P, 'timeout REJ (remote comm ID 0) of the REQ the application holds', 'REJECTED', 1)
check('ACCEPT after the REJ: EINVAL', 22, P.accept(pt, qpn=0x4546))
check('no REP went out for it', None, first(0x13, 1.0))
P.destroy(pt)
P.destroy(hr)

# the active side against the scripted peer: a REP resent after the RTU gets the RTU again
a = A.create(0x8888)
A.resolve(a, '127.0.0.3', LPORT); expect(A, 'resolve', 'ADDR_RESOLVED')
A.route(a); expect(A, 'route', 'ROUTE_RESOLVED')
A.connect(a, qpn=0x2222)
f.settimeout(5)
while True:   # the REQ from uroce1 (from 127.0.0.2)
    b, src = f.recvfrom(2048)
    if src[0] == '127.0.0.2' and struct.unpack_from('>H', b, 36)[0] == 0x10:
        break
a_comm = struct.unpack_from('>I', b, 44)[0]
rep = bytearray(232)
struct.pack_into('>IIIII', rep, 0, 0x7002, a_comm, 0, 0x3333 << 8, 0)
struct.pack_into('>I', rep, 20, 0x515151 << 8)
rep[24], rep[25] = 2, 2


def ud_packet_to(dst, attr, body_):
    bth = struct.pack('>BBHII', 0x64, 0, 0xffff, 1, 2)
    p_ = bth + struct.pack('>II', 0x80010000, 1) + mad(attr, body_) + b'\0\0\0\0'
    return p_[:-4] + icrc('127.0.0.3', dst, PORT, PORT, p_)


f.sendto(ud_packet_to('127.0.0.2', 0x13, bytes(rep)), ('127.0.0.2', PORT))
e = expect(A, 'REP from the scripted peer', 'CONNECT_RESPONSE')
check('CONNECT_RESPONSE: QPN 0x3333', 0x3333, e['qp_num'])
st, ar = A.qp_attr(a, QPS_RTS)
check('active RTS: SQ PSN = the REP\'s starting PSN', 0x515151, ar['sq_psn'])
A.accept(a, valid=0)
f.sendto(ud_packet_to('127.0.0.2', 0x13, bytes(rep)), ('127.0.0.2', PORT))   # REP again
got = []
f.settimeout(2)
try:
    while True:
        b, src = f.recvfrom(2048)
        if src[0] == '127.0.0.2':
            got.append(struct.unpack_from('>H', b, 36)[0])
except socket.timeout:
    pass
check('RTU, then the RTU again for the retransmitted REP', [0x14, 0x14], got)
check('retransmitted REP: no second CONNECT_RESPONSE', None, A.event(0.5))
A.destroy(a)   # connected: sends a DREQ
f.settimeout(2)
b, src = f.recvfrom(2048)
check('DESTROY_ID of a connected id sends a DREQ', 0x15, struct.unpack_from('>H', b, 36)[0])

# ---- MRAs: a peer that answers a REQ with MRA after MRA gets one more wait,
#      not an endless one (cm.c's cm_mra_handler takes the first MRA of a
#      state; later ones are duplicates): the connect still ends UNREACHABLE
a = A.create(0x8889)
A.resolve(a, '127.0.0.3', LPORT); expect(A, 'resolve', 'ADDR_RESOLVED')
A.route(a); expect(A, 'route', 'ROUTE_RESOLVED')
recv_mads(0.3)
A.connect(a, qpn=0x2223)
f.settimeout(5)
while True:
    b, src = f.recvfrom(2048)
    if src[0] == '127.0.0.2' and struct.unpack_from('>H', b, 36)[0] == 0x10:
        break
mra = bytearray(232)
struct.pack_into('>II', mra, 0, 0x7003, struct.unpack_from('>I', b, 44)[0])
mra[9] = 0 << 3    # message MRAed: REQ (0); service timeout 0: 1 + 512 ms (cm_mra_handler)
before = int(status(SOCK1)['duplicates'])
t0 = time.time()
got = None
while time.time() - t0 < 40:   # after the first MRA the REQ's resends come 513 ms apart
    f.sendto(ud_packet_to('127.0.0.2', 0x11, bytes(mra)), ('127.0.0.2', PORT))
    got = A.event(0.1)
    if got:
        break
check('MRA after MRA: the connect ends UNREACHABLE -110 all the same', ('UNREACHABLE', -110),
      (got['event'], got['status']) if got else None)
check('MRAs after the first counted as duplicates', True, int(status(SOCK1)['duplicates']) - before > 1)
A.destroy(a)
recv_mads(0.3)

# ---- SIDR (UD): accept and reject
hu = P.create(8, PS_UDP)
P.bind(hu, '127.0.0.1', LPORT + 3)
P.listen(hu)
a = A.create(0x6666, PS_UDP)
A.resolve(a, '127.0.0.1', LPORT + 3); expect(A, 'resolve', 'ADDR_RESOLVED')
A.route(a); expect(A, 'route', 'ROUTE_RESOLVED')
st, ud_init = A.qp_attr(a, QPS_INIT)
check('UD INIT: qkey 0x01234567, mask STATE|PKEY_INDEX|PORT|QKEY', (0x01234567, 1 | 16 | 32 | 64),
      (ud_init['qkey'], ud_init['mask']))
check('SIDR connect', 0, A.connect(a, qpn=0x4321, pdata=b'sidr-hi'))
e = expect(P, 'passive', 'CONNECT_REQUEST')
check('SIDR CONNECT_REQUEST: private data (180 bytes after the header)', (180, b'sidr-hi'),
      (e['ud_pdata_len'], e['ud_pdata'][:7]))
check('SIDR accept', 0, P.accept(e['id'], qpn=0x777, pdata=b'sidr-ok'))
e = expect(A, 'active', 'ESTABLISHED')
check('SIDR ESTABLISHED: qp_num, qkey, ah dgid, is_global, port', (0x777, 0x01234567, v4mapped('127.0.0.1'), 1, 1),
      (e['qp_num'], e['qkey'], e['ud_dgid'], e['ud_is_global'], e['ud_port']))
check('SIDR ESTABLISHED: private data', (136, b'sidr-ok'), (e['ud_pdata_len'], e['ud_pdata'][:7]))
A.destroy(a)
a = A.create(0x6667, PS_UDP)
A.resolve(a, '127.0.0.1', LPORT + 3); expect(A, 'resolve', 'ADDR_RESOLVED')
A.route(a); expect(A, 'route', 'ROUTE_RESOLVED')
A.connect(a, qpn=0x4322)
e = expect(P, 'passive', 'CONNECT_REQUEST')
P.reject(e['id'], b'')
expect(A, 'SIDR rejected', 'UNREACHABLE', 2)
A.destroy(a)

# ---- SET_OPTION: TOS and ACK timeout reach the QP attributes
a = A.create(0x7777)
check('set TOS 0x28', 0, A.set_option(a, 0, 0, b'\x28'))
check('set ACK timeout 14', 0, A.set_option(a, 0, 3, b'\x0e'))
check('TOS with a 4-byte value', 22, A.set_option(a, 0, 0, b'\0\0\0\0'))
check('REUSEADDR while idle', 0, A.set_option(a, 0, 1, struct.pack('<i', 1)))
check('unknown option', 38, A.set_option(a, 0, 99, b'\0'))   # ENOSYS
A.resolve(a, '127.0.0.1', LPORT); expect(A, 'resolve', 'ADDR_RESOLVED')
A.route(a); expect(A, 'route', 'ROUTE_RESOLVED')
A.connect(a, qpn=0x55)
e = expect(P, 'passive', 'CONNECT_REQUEST')
pa = e['id']
P.accept(pa, qpn=0x66)
expect(A, 'active', 'CONNECT_RESPONSE')
st, artr = A.qp_attr(a, QPS_RTR)
st, arts = A.qp_attr(a, QPS_RTS)
check('TOS -> RTR traffic class; ACK timeout -> RTS timeout', (0x28, 14), (artr['tclass'], arts['timeout']))
A.accept(a, valid=0)
expect(P, 'passive', 'ESTABLISHED')

# ---- closing the active CM connection: the peer gets DISCONNECTED
s1 = status(SOCK1)
check('status: ids and established on uroce1', ('1', '1'), (s1['ids'], s1['established']))
A.close()
expect(P, 'after the active side closed its connection', 'DISCONNECTED')
time.sleep(0.5)
check('uroce1: no ids left after the close', '0', status(SOCK1)['ids'])
s0 = status(SOCK0)
for k in ('req_rx', 'rep_tx', 'rtu_rx', 'rej_tx', 'dreq_rx', 'drep_tx', 'sidr_req_rx', 'sidr_rep_tx'):
    check(f'status uroce0 {k} > 0', True, int(s0[k]) > 0)
P.close()

if failures:
    print(f'{len(failures)} FAILED:')
    for x in failures:
        print('  ' + x)
    sys.exit(1)
print('all passed')
