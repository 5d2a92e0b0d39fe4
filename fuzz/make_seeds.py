#!/usr/bin/env python3
"""Writes the seed corpora fuzz/corpus/NAME/ from the bundled data (data/, examples/) and frames
built here. Run from anywhere; rewrites only the seeds it names (files other tools or people
added, such as regression inputs, stay). Standard library only."""
import gzip
import json
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")


def put(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def head_lines(path, n):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(os.path.join(ROOT, path), "rt", errors="replace") as f:
        return "".join(line for _, line in zip(range(n), f))


# --- frames ---------------------------------------------------------------------------------

def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ip4(a):
    return bytes(int(x) for x in a.split("."))


def ipv4_frame(src, dst, proto=17, payload=b"", ttl=64, sport=1234, dport=53, frag=0x4000,
               vlan=None, options=b"", bad_checksum=False, trailer=b""):
    if proto == 6:
        l4 = struct.pack("!HHIIBBHHH", sport, dport, 1, 0, 0x50, 0x18, 1024, 0, 0) + payload
    elif proto in (17, 1):
        l4 = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    else:
        l4 = payload
    ihl = 5 + len(options) // 4
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, 4 * ihl + len(l4), 7, frag, ttl, proto, 0,
                      ip4(src), ip4(dst)) + options
    c = csum(hdr) ^ (0x1111 if bad_checksum else 0)
    hdr = hdr[:10] + struct.pack("!H", c) + hdr[12:]
    eth = b"\x02\0\0\0\0\x01\x02\0\0\0\0\x02"
    if vlan is not None:
        eth += struct.pack("!HH", 0x8100, vlan)
    return eth + b"\x08\x00" + hdr + l4 + trailer


def ipv6_frame():
    payload = struct.pack("!HHHH", 1, 2, 12, 0) + b"abcd"
    return (b"\x02\0\0\0\0\x01\x02\0\0\0\0\x02\x86\xdd" +
            struct.pack("!IHBB", 0x60000000, len(payload), 17, 64) + bytes(15) + b"\x01" +
            bytes(15) + b"\x02" + payload)


def arp_frame():
    return b"\xff" * 6 + b"\x02\0\0\0\0\x01\x08\x06" + bytes(46)


def frames_blob(frames):
    return b"".join(struct.pack("<H", len(f)) + f for f in frames)


def pcap_frames(path, limit):
    """Frames of a classic pcap file (either byte order)."""
    data = open(os.path.join(ROOT, path), "rb").read()
    endian = "<" if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    off, out = 24, []
    while off + 16 <= len(data) and len(out) < limit:
        _, _, incl, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        out.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    return data[:24], out, endian


def pcap_file(header, frames, endian):
    out = header
    for k, f in enumerate(frames):
        out += struct.pack(endian + "IIII", 1000 + k, 500 * k, len(f), len(f)) + f
    return out


def mixed_frames():
    return [
        ipv4_frame("10.0.0.1", "192.168.1.7", payload=b"hello"),
        ipv4_frame("10.1.2.3", "200.57.7.196", proto=6, dport=22, payload=b"GET / HTTP/1.1\r\n"),
        ipv4_frame("172.16.0.9", "10.9.8.7", ttl=1, payload=b"ttl"),
        ipv4_frame("172.16.0.9", "10.9.8.7", bad_checksum=True),
        ipv4_frame("192.168.2.2", "8.8.8.8", proto=1, payload=b"ping"),
        ipv4_frame("10.0.0.1", "192.168.1.8", frag=0x0010, payload=b"later fragment"),
        ipv4_frame("10.0.0.1", "192.168.1.9", options=b"\x01\x01\x01\x00", vlan=5),
        ipv4_frame("10.0.0.1", "192.168.1.10", proto=47, payload=b"gre", trailer=bytes(6)),
        ipv6_frame(),
        arp_frame(),
        ipv4_frame("1.2.3.4", "5.6.7.8")[:30],  # truncated
    ]


# --- per-packet targets ---------------------------------------------------------------------

def route(addr, length, hop):
    return ip4(addr)[::-1] + bytes([length, hop])  # Reader::u32 is little-endian


def router_seeds():
    routes = [("10.0.0.0", 8, 0), ("192.168.0.0", 16, 1), ("192.168.1.0", 24, 2),
              ("192.168.1.7", 32, 3), ("200.57.7.192", 27, 1), ("0.0.0.0", 0, 0)]
    table = bytes([len(routes)]) + b"".join(route(*r) for r in routes)
    put("fuzz_router_path", "mixed", table + frames_blob(mixed_frames()))
    _, sip, _ = pcap_frames("data/traces/SIP_CALL_RTP_G711.pcap", 12)
    put("fuzz_router_path", "sip", table + frames_blob(sip))
    put("fuzz_router_path", "no-routes", b"\x00" + frames_blob(mixed_frames()[:3]))


def fw_rule(src, slen, dst, dlen, sp, dp, proto, any_proto, action):
    return (ip4(src)[::-1] + ip4(dst)[::-1] + bytes([slen, dlen]) +
            struct.pack("<HHBB", sp[0], sp[1], dp[0], dp[1]) + bytes([proto, any_proto, action]))


def firewall_seeds():
    rules = [fw_rule("10.0.0.0", 8, "0.0.0.0", 0, (0, 65535), (22, 22), 6, 0, 2),
             fw_rule("0.0.0.0", 0, "192.168.1.0", 24, (1000, 2000), (53, 53), 17, 0, 0),
             fw_rule("172.16.0.0", 12, "10.0.0.0", 8, (0, 65535), (0, 255), 0, 1, 1),
             fw_rule("0.0.0.0", 0, "0.0.0.0", 0, (0, 0), (0, 0), 1, 0, 2)]
    put("fuzz_firewall_path", "mixed", bytes([1, len(rules)]) + b"".join(rules) +
        frames_blob(mixed_frames()))
    put("fuzz_firewall_path", "default-drop", bytes([2, 1]) + rules[0] +
        frames_blob(mixed_frames()[:4]))


def nids_seeds():
    contents = [(b"GET ", 0), (b"http", 8), (b"hello", 0), (b"\x00\x01", 0), (b"ping", 8),
                (b"fragment", 0)]
    spec = bytes([len(contents) - 1])
    for c, flags in contents:
        spec += bytes([(len(c) - 1) | flags]) + c.ljust(8, b"\0")
    put("fuzz_nids_path", "mixed", spec + frames_blob(mixed_frames()))
    _, dns, _ = pcap_frames("data/traces/dns.cap", 6)
    dns_spec = bytes([1]) + bytes([5 | 8]) + b"google\0\0" + bytes([2]) + b"www\0\0\0\0\0"
    put("fuzz_nids_path", "dns", dns_spec + frames_blob(dns))


def sa(spi, key_seed, match, mlen):
    key = bytes((key_seed + i) & 0xFF for i in range(40))
    return struct.pack("<I", spi) + key + ip4(match)[::-1] + bytes([mlen])


def ipsec_seeds():
    sas = [sa(0x1001, 1, "200.57.7.192", 27), sa(0x1002, 9, "0.0.0.0", 0)]
    put("fuzz_ipsec_roundtrip", "two-sas", bytes([1]) + b"".join(sas) + frames_blob(mixed_frames()))
    _, sip, _ = pcap_frames("data/traces/SIP_CALL_RTP_G711.pcap", 8)
    put("fuzz_ipsec_roundtrip", "sip", bytes([1]) + b"".join(sas) + frames_blob(sip))
    put("fuzz_ipsec_roundtrip", "one-sa", bytes([0]) + sa(0x2000, 3, "192.168.0.0", 16) +
        frames_blob([ipv4_frame("10.0.0.1", "192.168.1.7", payload=bytes(range(200))),
                     ipv4_frame("10.0.0.1", "192.168.9.9", payload=b"x" * 1400)]))


# --- parsers ---------------------------------------------------------------------------------

def parser_seeds():
    put("fuzz_route_file", "example.routes", head_lines("data/router/example.routes", 100))
    put("fuzz_route_file", "prefixes.txt", head_lines("data/router/bart_ipv4_random5000.txt", 20))
    put("fuzz_route_file", "routes.gz", gzip.compress(b"10.0.0.0/8 p1\n10.1.0.0/16 p2\n", mtime=0))
    put("fuzz_route_file", "errors.routes", "10.0.0.1/8 p1\n10.0.0.0/33 p2\n# c\n\n1.2.3.0/24 p9\n")

    put("fuzz_classbench", "example.rules", head_lines("data/firewall/example.rules", 100))
    put("fuzz_classbench", "acl1", head_lines("data/firewall/classbench_neurocuts/acl1_1k", 12))
    put("fuzz_classbench", "fw1", head_lines("data/firewall/classbench_neurocuts/fw1_1k", 12))

    et = "data/nids/et_open_2024-04-21/emerging-"
    put("fuzz_nids_rules", "voip.rules", head_lines(et + "voip.rules.gz", 30))
    put("fuzz_nids_rules", "web_server.rules", head_lines(et + "web_server.rules.gz", 30))
    put("fuzz_nids_rules", "syntax.rules",
        'alert tcp any any -> any any (msg:"esc \\"q\\" \\; semi"; content:"a\\;b|0d 0a|"; '
        'nocase; content:!"no"; sid:1; rev:2;)\n'
        '# alert tcp any any -> any any (msg:"off"; content:"x"; sid:2;)\n'
        'alert http any any -> any any (msg:"cont"; \\\n content:"GET"; http.uri; '
        'pcre:"/x/"; depth:4; sid:3;)\n'
        'drop tcp any any -> any any (msg:"d"; content:"d"; sid:4;)\n'
        'alert tcp any any -> any any (msg:"nb"; flowbits:noalert; content:"n"; sid:5;)\n'
        'alert tcp any any -> any any (msg:"dup"; content:"z"; sid:1;)\n'
        'alert tcp any any -> any any (msg:"bad"; content:"|0g|"; sid:6;)\n')

    outbound = ("name: esp-out\ntype: ipsec\ndirection: outbound\nbypass: false\niv_epoch: 7\n"
                "sas:\n"
                "  - spi: 0x00001001\n"
                "    enc_key: 4a0e7ef1c6b2d9a0135f7e8c2b91d4a6c0ffee01\n"
                "    auth_key: 7f3c9a2e5b8d1f4a6c0e2b9d8f7a1c3e5b2d4f60\n"
                "    local: 198.51.100.1\n    remote: 203.0.113.1\n    match: 200.57.7.192/27\n"
                "  - {spi: 4098, enc_key: 91b3d5f7092b4d6f8193a5c7e9fb1d3fc0ffee02, "
                "auth_key: 0d1c2b3a49586776859a4b3c2d1e0f1a2b3c4d5e, local: 198.51.100.1, "
                "remote: 203.0.113.1, match: 0.0.0.0/0}\n")
    put("fuzz_ipsec_config", "outbound.yaml", outbound)
    put("fuzz_ipsec_config", "inbound.yaml",
        outbound.replace("outbound", "inbound").replace("bypass: false", "bypass: true"))

    header, frames, endian = pcap_frames("data/traces/telnet-raw.pcap", 4)
    put("fuzz_pcap", "telnet4.pcap", pcap_file(header, frames, endian))
    put("fuzz_pcap", "malformed.pcap", open(os.path.join(ROOT, "data/tests/malformed.pcap"), "rb").read())
    put("fuzz_pcap", "dns.cap", open(os.path.join(ROOT, "data/traces/dns.cap"), "rb").read())
    # pcapng: the section and interface blocks and the first three packets.
    ng = open(os.path.join(ROOT, "data/traces/iperf3-udp.pcapng"), "rb").read()
    off, packets = 0, 0
    while off + 12 <= len(ng) and packets < 3:
        btype, blen = struct.unpack("<II", ng[off:off + 8])
        packets += btype == 6
        off += blen
    put("fuzz_pcap", "iperf3.pcapng", ng[:off])


# --- configurations ---------------------------------------------------------------------------

def config_seeds():
    ports = ("ports:\n  - {name: in, type: pcap, rx: in.pcap}\n"
             "  - {name: p1, type: pcap, tx: p1.pcap}\n  - {name: p2, type: discard}\n")
    put("fuzz_config", "router.yaml", ports +
        "nfs:\n  - {name: r1, type: router, routes: routes.txt}\n"
        "chains:\n  - {from: in, path: [r1]}\n")
    put("fuzz_config", "firewall.yaml", ports +
        "nfs:\n  - {name: fw, type: firewall, rules: fw.rules, action: drop, default: accept, "
        "max_rules: 10}\n  - {name: r1, type: router, routes: {file: prefixes.txt, spread: [p1, p2]}}\n"
        "chains:\n  - {from: in, path: [fw, r1]}\n")
    put("fuzz_config", "nids.yaml", ports +
        "nfs:\n  - {name: ids, type: nids, rules: [ids.rules], action: drop, alerts: alerts.json, "
        "max_rules: 5, max_automaton_mb: 1}\n"
        "chains:\n  - {from: in, path: [ids], to: p1}\n")
    ipsec = open(os.path.join(CORPUS, "fuzz_ipsec_config", "outbound.yaml")).read()
    put("fuzz_config", "ipsec.yaml", ports + "nfs:\n" +
        "".join(("  - " if k == 0 else "    ") + line + "\n"
                for k, line in enumerate(ipsec.splitlines())) +
        "chains:\n  - {from: in, path: [esp-out], to: p2}\n")
    put("fuzz_config", "branches.yaml", ports +
        "nfs:\n  - {name: fw, type: firewall, rules: fw.rules}\n"
        "  - {name: r1, type: router, routes: routes.txt}\n"
        "  - {name: ids, type: nids, rules: ids.rules}\n"
        "chains:\n  - name: branchy\n    from: in\n"
        "    path: [fw, {nf: r1, next: [ids, done]}, ids]\n"
        "    routes:\n      - {dst: 192.168.1.2/32, at: r1, next: ids}\n"
        "      - {dst: 10.0.0.0/8, at: ingress, next: r1}\n"
        "    backpressure: on\n    qt: 4\n    latency_bound_us: 500\n    batch_deadline_us: 100\n"
        "settings:\n  batch_size: 64\n  batches: 8\n  workers: 1\n  queue_batches: 4\n"
        "  scheduler: fair\n  max_input_file_mb: 1\n")
    put("fuzz_config", "generator.yaml",
        "ports:\n  - {name: gen, type: generator, rate: 1Mpps, size: imix, flows: 16, count: 100, "
        "seed: 3, dst_from: r1, queues: 2}\n  - {name: p1, type: discard}\n  - {name: p2, type: discard}\n"
        "nfs:\n  - {name: r1, type: router, routes: {file: prefixes.txt, spread: [p1, p2]}}\n"
        "chains:\n  - {from: gen, path: [r1]}\n"
        "settings: {batch_size: 32, batches: 4, slot_bytes: 1536, latency_bound_us: 2000}\n")
    put("fuzz_config", "forward.yaml",
        "ports:\n  - {name: a, type: pcap, rx: in.pcap, repeat: 2, preload: true}\n"
        "  - {name: b, type: discard}\n"
        "forward:\n  - {from: a, to: b, mode: copy, burst: 16, integrity: on}\n")


def control_seeds():
    def req(cmd, *args, nf=None):
        r = {"cmd": cmd, "args": list(args)}
        if nf:
            r["nf"] = nf
        return json.dumps(r) + "\n"
    put("fuzz_control", "routes.jsonl",
        req("routes", "add", "10.2.0.0/16", "p2") + req("routes", "add", "10.1.2.0/25", "p2", "0.0.0.0/0", "p1")
        + req("routes", "del", "10.1.0.0/16") + req("routes", "replace", "10.0.0.0/8", "p2")
        + req("routes", "del", "10.1.2.128/25", "0.0.0.0/0") + req("stats"))
    put("fuzz_control", "files.jsonl",
        req("routes", "replace", "new.routes") + req("routes", "replace", "bad.routes")
        + req("firewall", "replace", "fw.rules", nf="fw") + req("reload") + req("routes", "add", "r.routes"))
    put("fuzz_control", "bad.jsonl",
        "5\n[]\n{}\n" + '{"cmd": 1}\n{"cmd": "routes", "args": [1]}\n{"cmd": "routes", "nf": 3}\n'
        + req("routes", "add", "10.0.0.1/8", "p1") + req("routes", "add", "10.3.0.0/16", "gen")
        + req("routes", "del", "10.9.0.0/16") + req("routes") + req("frobnicate", nf="r9") + req("stop"))


def main():
    control_seeds()
    router_seeds()
    firewall_seeds()
    nids_seeds()
    ipsec_seeds()
    parser_seeds()
    config_seeds()
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(CORPUS) for f in fs)
    print("fuzz/corpus: %d bytes" % total)
    return 0


if __name__ == "__main__":
    sys.exit(main())
