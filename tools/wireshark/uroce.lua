-- uroce.lua: a Wireshark/tshark postdissector that checks the ICRC of
-- RoCEv2 packets (docs/inspect.md "Wireshark plugin").  Wireshark's
-- InfiniBand dissector shows the ICRC (infiniband.invariant.crc) but never
-- checks it; this adds
--   roce.icrc.status    "good" or "bad"
--   roce.icrc.computed  the ICRC computed over the packet, wire order
--   roce.icrc.wire      the 4 ICRC bytes the packet carries, wire order
--   roce.icrc.ip_id     IPv4 only, when the exact check fails: the IP ID with
--                       which the ICRC verifies (docs/icrc.md)
-- and expert info for a bad ICRC; then, for packets with a good ICRC, the
-- flow analysis of `uroce inspect --flows` (roce.analysis.*: retransmission,
-- NAKs, the wait after an RNR NAK; XRC as RC) with expert info; and for XRC
-- requests, which Wireshark 4.0 does not decode past the BTH,
--   roce.xrceth.xrcsrq  the XRC SRQ number of the XRCETH (Annex A14.3.2)
--
-- The ICRC (docs/wire-format.md §2.1, IBA §7.8.1, Annex A17.3.3): CRC-32
-- (IEEE 802.3, reflected, polynomial 0x04C11DB7) over eight 0xFF bytes, the
-- IP header with TOS, TTL and checksum (IPv4) or traffic class, flow label
-- and hop limit (IPv6) set to ones, the UDP header with the checksum set to
-- ones, the BTH with byte 4 set to ones, and the rest up to the ICRC, which
-- goes on the wire least significant byte first.  The IP header is read from
-- the frame, so the check is exact (as `uroce inspect`'s).
--
-- Load with `tshark -X lua_script:uroce.lua`, or install into a Wireshark
-- plugin directory (`make install`).  Works with Wireshark 4.0 (Lua 5.2)
-- and later (Lua 5.4): bit operations go through Wireshark's `bit` library
-- (Lua BitOp), which every Lua-enabled Wireshark loads, never through Lua
-- 5.3's operators.

local bit = bit
local band, bor, bxor, bnot = bit.band, bit.bor, bit.bxor, bit.bnot
local rshift, lshift, tobit = bit.rshift, bit.lshift, bit.tobit
local sbyte, schar = string.byte, string.char
local floor = math.floor   -- an integer in Lua 5.4, where / always gives a float

local U32 = 4294967296
local function u32(x) return x % U32 end

local roce = Proto("roce", "RoCEv2 ICRC check (uroce)")

local f_status = ProtoField.string("roce.icrc.status", "ICRC status")
local f_computed = ProtoField.uint32("roce.icrc.computed", "ICRC computed (wire order)", base.HEX)
local f_wire = ProtoField.uint32("roce.icrc.wire", "ICRC in the packet (wire order)", base.HEX)
local f_ip_id = ProtoField.uint16("roce.icrc.ip_id", "IPv4 ID the ICRC verifies with", base.HEX)
local f_retrans = ProtoField.bool("roce.analysis.retransmission", "Retransmission")
local f_max_psn = ProtoField.uint32("roce.analysis.max_psn", "Highest PSN the flow sent before")
local f_nak = ProtoField.string("roce.analysis.nak", "NAK")
local f_rnr_wait = ProtoField.relative_time("roce.analysis.rnr_wait", "Time since the RNR NAK")
local f_rnr_frame = ProtoField.framenum("roce.analysis.rnr_nak_frame", "RNR NAK in frame")
local f_xrcsrq = ProtoField.uint24("roce.xrceth.xrcsrq", "XRC SRQ number (XRCETH)", base.HEX)
roce.fields = { f_status, f_computed, f_wire, f_ip_id, f_retrans, f_max_psn, f_nak, f_rnr_wait, f_rnr_frame,
	f_xrcsrq }

local e_bad = ProtoExpert.new("roce.icrc.bad", "Bad ICRC", expert.group.CHECKSUM, expert.severity.ERROR)
local e_ip_id = ProtoExpert.new("roce.icrc.ip_id_differs",
	"ICRC verifies with another IPv4 ID", expert.group.CHECKSUM, expert.severity.WARN)
local e_retrans = ProtoExpert.new("roce.analysis.retransmission.expert",
	"Retransmission", expert.group.SEQUENCE, expert.severity.NOTE)
local e_nak_seq = ProtoExpert.new("roce.analysis.nak_seq", "PSN sequence error NAK",
	expert.group.SEQUENCE, expert.severity.WARN)
local e_nak_rnr = ProtoExpert.new("roce.analysis.nak_rnr", "RNR NAK", expert.group.SEQUENCE, expert.severity.NOTE)
local e_nak_fatal = ProtoExpert.new("roce.analysis.nak_fatal", "NAK", expert.group.RESPONSE_CODE,
	expert.severity.ERROR)
local e_rnr_retry = ProtoExpert.new("roce.analysis.rnr_retry", "Retry after an RNR NAK",
	expert.group.SEQUENCE, expert.severity.NOTE)
roce.experts = { e_bad, e_ip_id, e_retrans, e_nak_seq, e_nak_rnr, e_nak_fatal, e_rnr_retry }

roce.prefs.udp_port = Pref.uint("RoCEv2 UDP port", 4791,
	"UDP destination port of RoCEv2 (IANA 4791; uroce's tests use others)")
roce.prefs.any_ip_id = Pref.bool("Accept any IPv4 ID", false,
	"Call an ICRC good when it verifies with some IPv4 ID, as the uroce daemon's "
	.. "receive check does (it cannot see the ID); by default the ID in the header is used")

local fx_ip = Field.new("ip.version")
local fx_ipv6 = Field.new("ipv6.version")
local fx_udp_dport = Field.new("udp.dstport")
local fx_time = Field.new("frame.time_epoch")

-- CRC-32 table, reflected polynomial 0xEDB88320
local POLY = tobit(0xEDB88320)
local CRC_T = {}
for i = 0, 255 do
	local c = i
	for _ = 1, 8 do
		if band(c, 1) ~= 0 then c = bxor(rshift(c, 1), POLY) else c = rshift(c, 1) end
	end
	CRC_T[i] = c
end

-- crc_feed(reg, s): the CRC register after the bytes of string s
local function crc_feed(reg, s)
	for i = 1, #s do
		reg = bxor(CRC_T[band(bxor(reg, sbyte(s, i)), 0xff)], rshift(reg, 8))
	end
	return reg
end

-- GF(2) product mod P of two polynomials in the reflected representation
-- (bit 31 = x^0); as zlib's multmodp.
local function mulmod(a, b)
	local p = 0
	for i = 31, 0, -1 do
		if band(a, lshift(1, i)) ~= 0 then p = bxor(p, b) end
		if band(b, 1) ~= 0 then b = bxor(rshift(b, 1), POLY) else b = rshift(b, 1) end
	end
	return p
end

local X0 = tobit(0x80000000)     -- x^0
local XINV = tobit(0xDB710641)   -- x^-1 mod P (docs/icrc.md)
local xinv_pow_cache = {}

-- x^-n mod P by square and multiply, cached per n
local function xinv_pow(n)
	local r = xinv_pow_cache[n]
	if r then return r end
	r = X0
	local b, k = XINV, n
	while k > 0 do
		if k % 2 == 1 then r = mulmod(r, b) end
		b = mulmod(b, b)
		k = floor(k / 2)
	end
	xinv_pow_cache[n] = r
	return r
end

-- ip_id_fit(delta, total_len): the IPv4 ID difference that explains a CRC
-- difference delta (register form) in a packet of IP total length
-- total_len, or nil.  A change of the 16-bit ID changes the CRC by
-- D(x) * x^(8L - 48) mod P; D has degree < 16 exactly when some ID explains
-- delta (docs/icrc.md "Solving for the ID").
local function ip_id_fit(delta, total_len)
	local d = mulmod(delta, xinv_pow(8 * total_len - 48))
	if band(d, 0xffff) ~= 0 then return nil end
	-- bit 16+k is the ID's first byte's bit k, bit 24+k its second byte's
	return bor(lshift(band(rshift(d, 16), 0xff), 8), band(rshift(d, 24), 0xff))
end

-- last(fx, before): the offset of the last instance of a field that lies
-- before offset `before`, or nil
local function last_offset(fx, before)
	local best
	for _, fi in ipairs({ fx() }) do
		if fi.offset < before and (not best or fi.offset > best) then best = fi.offset end
	end
	return best
end

local function be16(s, i) return sbyte(s, i) * 256 + sbyte(s, i + 1) end

-- the masked IP header, the UDP length (header included) and (IPv4) the total length
-- and ID; nil when the packet is not one RoCEv2 checks (IPv4 options or a
-- fragment, IPv6 extension headers: `uroce inspect` reports those malformed)
local function ip_part(tvb, udp_off)
	local ip4 = last_offset(fx_ip, udp_off)
	local ip6 = last_offset(fx_ipv6, udp_off)
	if ip4 and (not ip6 or ip4 > ip6) then
		if ip4 + 20 ~= udp_off or tvb:len() < udp_off then return nil end
		local h = tvb:raw(ip4, 20)
		if sbyte(h, 1) ~= 0x45 or sbyte(h, 10) ~= 17 then return nil end
		local frag = be16(h, 7)
		if band(frag, 0x3fff) ~= 0 then return nil end   -- MF or an offset
		local total = be16(h, 3)
		local masked = h:sub(1, 1) .. "\255" .. h:sub(3, 8) .. "\255" .. h:sub(10, 10)
			.. "\255\255" .. h:sub(13, 20)
		return masked, total - 20, total, be16(h, 5), h:sub(13, 16), h:sub(17, 20)
	elseif ip6 then
		if ip6 + 40 ~= udp_off or tvb:len() < udp_off then return nil end
		local h = tvb:raw(ip6, 40)
		if sbyte(h, 7) ~= 17 then return nil end
		local masked = schar(bor(sbyte(h, 1), 0x0f), 255, 255, 255) .. h:sub(5, 7) .. "\255"
			.. h:sub(9, 40)
		return masked, be16(h, 5), nil, nil, h:sub(9, 24), h:sub(25, 40)
	end
	return nil
end

local function wire_order(reg_crc)
	-- the CRC value's bytes least significant first, read big-endian
	local c = u32(reg_crc)
	local b0, b1, b2 = c % 256, floor(c / 256) % 256, floor(c / 65536) % 256
	local b3 = floor(c / 16777216)
	return ((b0 * 256 + b1) * 256 + b2) * 256 + b3
end

-- check(tvb, udp_off): verdict table for the RoCEv2 packet whose UDP header
-- starts at udp_off, or nil when it cannot be checked (not RoCEv2 as above,
-- or cut short by the capture's snapshot length)
local function check(tvb, udp_off)
	local masked_ip, udp_len, total, ip_id, src, dst = ip_part(tvb, udp_off)
	if not masked_ip then return nil end
	-- UDP header 8, BTH 12, ICRC 4
	if udp_len < 8 + 12 + 4 or tvb:len() < udp_off + udp_len then return nil end
	local u = tvb:raw(udp_off, 8)
	if be16(u, 5) ~= udp_len then return nil end
	local bth = tvb:raw(udp_off + 8, 12)
	local reg = crc_feed(-1, "\255\255\255\255\255\255\255\255")
	reg = crc_feed(reg, masked_ip)
	reg = crc_feed(reg, u:sub(1, 6) .. "\255\255")
	reg = crc_feed(reg, bth:sub(1, 4) .. "\255" .. bth:sub(6, 12))
	local rest = udp_len - 8 - 12 - 4
	if rest > 0 then reg = crc_feed(reg, tvb:raw(udp_off + 20, rest)) end
	local crc = bnot(reg)
	local w = tvb:raw(udp_off + udp_len - 4, 4)
	local wire_le = tobit(((sbyte(w, 4) * 256 + sbyte(w, 3)) * 256 + sbyte(w, 2)) * 256 + sbyte(w, 1))
	local v = {
		computed = wire_order(crc),
		wire = ((sbyte(w, 1) * 256 + sbyte(w, 2)) * 256 + sbyte(w, 3)) * 256 + sbyte(w, 4),
		good = crc == wire_le,
		icrc_off = udp_off + udp_len - 4,
		src = src, dst = dst, ports = u:sub(1, 4), bth = bth,
		aeth = udp_len >= 8 + 12 + 4 + 4 and tvb:raw(udp_off + 20, 1) or nil,
	}
	if not v.good and total then
		local d = ip_id_fit(bxor(crc, wire_le), total)
		if d then v.ip_id, v.header_ip_id = bxor(ip_id, d), ip_id end
	end
	return v
end

-- Flow analysis, the rules of `uroce inspect --flows` (docs/inspect.md): a
-- flow is one direction of one QP (addresses, UDP ports, dest QPN, requests
-- or responses); a packet whose PSN is not after the highest its flow sent
-- is a retransmission (or a duplicate, or late).  RNR NAK to retry: the next
-- request the other way between the same addresses at the NAK's PSN.
-- State is built on the first pass in frame order and kept per frame.
local flows, rnr_pending, per_frame = {}, {}, {}

function roce.init()
	flows, rnr_pending, per_frame = {}, {}, {}
end

local NAK_NAMES = { [0] = "PSN_SEQ_ERR", "INVALID_REQ", "REM_ACCESS_ERR", "REM_OP_ERR", "INVALID_RD_REQ" }

local function psn_after(a, b)
	local d = (a - b) % 16777216
	return d ~= 0 and d < 8388608
end

-- analyse(v, pinfo): the analysis of one packet with a good ICRC, or nil
local function analyse(v, pinfo)
	local op = sbyte(v.bth, 1)
	-- XRC: RC's operations under another prefix (Annex A14)
	if op >= 0xa0 and op <= 0xb7 then op = op - 0xa0 end
	local transport = op - op % 32
	-- RC, UC and UD opcodes the codec decodes; CNP and XRC are left out
	if not (transport == 0 and op <= 0x17 and op ~= 0x15) and not (transport == 0x20 and op <= 0x0b + 0x20)
		and not (op == 0x64 or op == 0x65) then return nil end
	local dqpn = be16(v.bth, 7) + sbyte(v.bth, 6) * 65536
	local psn = be16(v.bth, 11) + sbyte(v.bth, 10) * 65536
	local response = transport == 0 and op >= 0x0d and op <= 0x12
	local key = v.src .. v.dst .. v.ports .. dqpn .. (response and "r" or "q")
	local a = {}
	local fl = flows[key]
	if not fl then
		flows[key] = { max = psn }
	elseif not psn_after(psn, fl.max) then
		a.retrans, a.max = true, fl.max
	else
		fl.max = psn
	end
	local now = fx_time().value
	if response and op ~= 0x0e and v.aeth then
		local syn = sbyte(v.aeth, 1)
		local kind = floor(syn / 32) % 4
		if kind == 1 then
			a.nak = "RNR"
			rnr_pending[v.dst .. v.src .. psn] = { t = now, frame = pinfo.number }
		elseif kind == 3 then
			a.nak = NAK_NAMES[syn % 32] or string.format("NAK_0x%02x", syn % 32)
		end
	elseif not response then
		local k = v.src .. v.dst .. psn
		local n = rnr_pending[k]
		if n then
			a.rnr_wait, a.rnr_frame = now - n.t, n.frame
			rnr_pending[k] = nil
		end
	end
	return a
end

local function add_analysis(t, tvb, a)
	if a.retrans then
		t:add(f_retrans, true):set_generated()
		t:add(f_max_psn, a.max):set_generated()
		t:add_proto_expert_info(e_retrans, string.format(
			"Retransmission: PSN not after %d, the highest this flow sent", a.max))
	end
	if a.nak then
		t:add(f_nak, a.nak):set_generated()
		if a.nak == "RNR" then
			t:add_proto_expert_info(e_nak_rnr)
		elseif a.nak == "PSN_SEQ_ERR" then
			t:add_proto_expert_info(e_nak_seq)
		else
			t:add_proto_expert_info(e_nak_fatal, "NAK " .. a.nak)
		end
	end
	if a.rnr_wait then
		t:add(f_rnr_wait, a.rnr_wait):set_generated()
		t:add(f_rnr_frame, a.rnr_frame):set_generated()
		t:add_proto_expert_info(e_rnr_retry, string.format("Retry %s s after the RNR NAK in frame %d",
			tostring(a.rnr_wait), a.rnr_frame))
	end
end

function roce.dissector(tvb, pinfo, tree)
	local port = roce.prefs.udp_port
	local udp_off
	for _, fi in ipairs({ fx_udp_dport() }) do
		if fi.value == port then udp_off = fi.offset - 2 end
	end
	if not udp_off then return end
	local v = check(tvb, udp_off)
	if not v then return end
	local good = v.good or (v.ip_id ~= nil and roce.prefs.any_ip_id)
	local icrc_range = tvb:range(v.icrc_off, 4)
	local t = tree:add(roce, icrc_range)
	t:add(f_status, icrc_range, good and "good" or "bad")
	t:add(f_computed, icrc_range, v.computed)
	t:add(f_wire, icrc_range, v.wire)
	if v.ip_id then
		t:add(f_ip_id, icrc_range, v.ip_id)
		t:add_proto_expert_info(e_ip_id, string.format(
			"ICRC verifies with IPv4 ID 0x%04x, the header carries 0x%04x", v.ip_id, v.header_ip_id))
	end
	if not good then
		t:add_proto_expert_info(e_bad, string.format("Bad ICRC: computed 0x%08x, packet carries 0x%08x",
			v.computed, v.wire))
	end
	t:append_text(good and ", ICRC good" or ", ICRC BAD")
	-- XRC requests: 0xA0-0xAC, 0xB3, 0xB4, 0xB6, 0xB7; the XRCETH follows the BTH
	local op = sbyte(v.bth, 1)
	if (op >= 0xa0 and op <= 0xac) or op == 0xb3 or op == 0xb4 or op == 0xb6 or op == 0xb7 then
		if v.icrc_off >= udp_off + 8 + 12 + 4 then
			t:add(f_xrcsrq, tvb:range(udp_off + 8 + 12 + 1, 3))
		end
	end
	if good then
		local a = per_frame[pinfo.number]
		if a == nil and not pinfo.visited then
			a = analyse(v, pinfo) or false
			per_frame[pinfo.number] = a
		end
		if a then add_analysis(t, tvb, a) end
	end
end

register_postdissector(roce)
