-- uroce.lua: a Wireshark/tshark postdissector that checks the ICRC of
-- RoCEv2 packets (docs/inspect.md "Wireshark plugin").  Wireshark's
-- InfiniBand dissector shows the ICRC (infiniband.invariant.crc) but never
-- checks it; this adds
--   roce.icrc.status    "good" or "bad"
--   roce.icrc.computed  the ICRC computed over the packet, wire order
--   roce.icrc.wire      the 4 ICRC bytes the packet carries, wire order
--   roce.icrc.ip_id     IPv4 only, when the exact check fails: the IP ID with
--                       which the ICRC verifies (docs/icrc.md)
-- and expert info for a bad ICRC.
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

local U32 = 4294967296
local function u32(x) return x % U32 end

local roce = Proto("roce", "RoCEv2 ICRC check (uroce)")

local f_status = ProtoField.string("roce.icrc.status", "ICRC status")
local f_computed = ProtoField.uint32("roce.icrc.computed", "ICRC computed (wire order)", base.HEX)
local f_wire = ProtoField.uint32("roce.icrc.wire", "ICRC in the packet (wire order)", base.HEX)
local f_ip_id = ProtoField.uint16("roce.icrc.ip_id", "IPv4 ID the ICRC verifies with", base.HEX)
roce.fields = { f_status, f_computed, f_wire, f_ip_id }

local e_bad = ProtoExpert.new("roce.icrc.bad", "Bad ICRC", expert.group.CHECKSUM, expert.severity.ERROR)
local e_ip_id = ProtoExpert.new("roce.icrc.ip_id_differs",
	"ICRC verifies with another IPv4 ID", expert.group.CHECKSUM, expert.severity.WARN)
roce.experts = { e_bad, e_ip_id }

roce.prefs.udp_port = Pref.uint("RoCEv2 UDP port", 4791,
	"UDP destination port of RoCEv2 (IANA 4791; uroce's tests use others)")
roce.prefs.any_ip_id = Pref.bool("Accept any IPv4 ID", false,
	"Call an ICRC good when it verifies with some IPv4 ID, as the uroce daemon's "
	.. "receive check does (it cannot see the ID); by default the ID in the header is used")

local fx_ip = Field.new("ip.version")
local fx_ipv6 = Field.new("ipv6.version")
local fx_udp_dport = Field.new("udp.dstport")

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
		k = (k - k % 2) / 2
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
		return masked, total - 20, total, be16(h, 5)
	elseif ip6 then
		if ip6 + 40 ~= udp_off or tvb:len() < udp_off then return nil end
		local h = tvb:raw(ip6, 40)
		if sbyte(h, 7) ~= 17 then return nil end
		local masked = schar(bor(sbyte(h, 1), 0x0f), 255, 255, 255) .. h:sub(5, 7) .. "\255"
			.. h:sub(9, 40)
		return masked, be16(h, 5), nil, nil
	end
	return nil
end

local function wire_order(reg_crc)
	-- the CRC value's bytes least significant first, read big-endian
	local c = u32(reg_crc)
	local b0, b1, b2 = c % 256, (c - c % 256) / 256 % 256, (c - c % 65536) / 65536 % 256
	local b3 = (c - c % 16777216) / 16777216
	return ((b0 * 256 + b1) * 256 + b2) * 256 + b3
end

-- check(tvb, udp_off): verdict table for the RoCEv2 packet whose UDP header
-- starts at udp_off, or nil when it cannot be checked (not RoCEv2 as above,
-- or cut short by the capture's snapshot length)
local function check(tvb, udp_off)
	local masked_ip, udp_len, total, ip_id = ip_part(tvb, udp_off)
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
	}
	if not v.good and total then
		local d = ip_id_fit(bxor(crc, wire_le), total)
		if d then v.ip_id, v.header_ip_id = bxor(ip_id, d), ip_id end
	end
	return v
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
end

register_postdissector(roce)
