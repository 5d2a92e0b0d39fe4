#!/usr/bin/env python3
"""Writes data/tests/malformed.pcap: truncated and malformed frames interleaved with valid ones,
each with the verdict gpunfv must give it (tests/e2e/test_bad_input.py checks them).

    scripts/make_malformed_pcap.py [OUT.pcap]     # default: data/tests/malformed.pcap

The capture is run through one router whose table is ROUTES, with `settings: {slot_bytes:
SLOT_BYTES}`, so the one frame longer than the slot is dropped as `oversize`. A verdict is a drop
reason of src/core/drop_reason.h, or "->PORT" for a frame the router forwards to PORT (TTL
decremented, header checksum updated). Parse drops come first (src/core/parse.h), then the router's
checks in their order: not_ipv4, ipv4_bad_checksum, no_route, ttl_expired.

Output is deterministic (fixed addresses, MACs, IP IDs and timestamps): running this again gives
the same bytes. Needs scapy (Debian: python3-scapy).
"""
from __future__ import annotations

import struct
import sys
from dataclasses import dataclass
from pathlib import Path

from scapy.all import ARP, ICMP, IP, TCP, UDP, Dot1AD, Dot1Q, Ether, IPv6, raw

ROUTES = "10.0.0.0/8 p1\n192.168.0.0/16 p2\n"
SLOT_BYTES = 128
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "data" / "tests" / "malformed.pcap"
FIRST_TS_S = 1_700_000_000  # capture timestamps: this second, then +1 ms per frame

SRC_MAC, DST_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02"
P1_DST, P2_DST, NO_ROUTE_DST = "10.9.8.7", "192.168.1.20", "172.16.0.1"


@dataclass
class Case:
    name: str
    frame: bytes
    verdict: str  # drop reason, or "->p1" / "->p2"
    wirelen: int | None = None  # original length, when the record is cut short (caplen < len)


def eth(ethertype: int) -> bytes:
    return raw(Ether(src=SRC_MAC, dst=DST_MAC, type=ethertype))


def udp4(dst: str = P1_DST, payload: bytes = b"gpunfv-e2e-payload", **ip) -> bytes:
    return raw(Ether(src=SRC_MAC, dst=DST_MAC) / IP(src="10.1.1.1", dst=dst, id=7, **ip) /
               UDP(sport=1000, dport=2000) / payload)


def tcp4(dst: str = P2_DST, **ip) -> bytes:
    return raw(Ether(src=SRC_MAC, dst=DST_MAC) / IP(src="10.1.1.1", dst=dst, id=8, **ip) /
               TCP(sport=1000, dport=80, seq=1, flags="S", window=1024) / b"GET")


def ipv4(proto: int, l4: bytes, dst: str = P1_DST, ihl: int | None = None,
         total: int | None = None, version: int = 4) -> bytes:
    """An Ethernet/IPv4 frame built field by field (scapy would fix what we want broken);
    the header checksum is correct for the header as written."""
    header = bytearray(raw(IP(src="10.1.1.1", dst=dst, id=9, proto=proto, ttl=64)))
    header[0] = (version << 4) | (ihl if ihl is not None else 5)
    struct.pack_into("!H", header, 2, total if total is not None else 20 + len(l4))
    struct.pack_into("!H", header, 10, 0)
    s = sum(struct.unpack("!10H", bytes(header)))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    struct.pack_into("!H", header, 10, ~s & 0xFFFF)
    return eth(0x0800) + bytes(header) + l4


def with_bad_checksum(frame: bytes, ip_off: int = 14) -> bytes:
    f = bytearray(frame)
    f[ip_off + 10] ^= 0x5A  # any change breaks it
    return bytes(f)


def cases() -> list[Case]:
    udp_hdr = raw(UDP(sport=1000, dport=2000, len=8, chksum=0))
    tcp_hdr = raw(TCP(sport=1000, dport=80, seq=1, flags="A", window=1024, chksum=0))
    tcp_doff3 = bytearray(tcp_hdr)
    tcp_doff3[12] = 3 << 4
    tcp_doff15 = bytearray(tcp_hdr)
    tcp_doff15[12] = 15 << 4
    ipv6_udp = raw(Ether(src=SRC_MAC, dst=DST_MAC) / IPv6(src="2001:db8::1", dst="2001:db8::2") /
                   UDP(sport=1000, dport=2000) / b"v6")
    ipv6_long = bytearray(ipv6_udp)
    struct.pack_into("!H", ipv6_long, 14 + 4, 200)  # payload length beyond the frame
    options = raw(IP(src="10.1.1.1", dst=P1_DST, id=10, options=[b"\x01\x01\x01\x00"]) /
                  UDP(sport=1000, dport=2000) / b"opts")
    later_fragment = raw(Ether(src=SRC_MAC, dst=DST_MAC) /
                         IP(src="10.1.1.1", dst=P1_DST, id=11, proto=17, frag=100) / b"abcd")
    padded = raw(Ether(src=SRC_MAC, dst=DST_MAC) / IP(src="10.1.1.1", dst=P1_DST, id=12) /
                 UDP(sport=1000, dport=2000)) + b"\0" * 18  # 42 + 18 = 60 bytes
    cut = udp4(P2_DST)
    arp = raw(Ether(src=SRC_MAC, dst="ff:ff:ff:ff:ff:ff") /
              ARP(op=1, hwsrc=SRC_MAC, psrc="10.1.1.1", hwdst="00:00:00:00:00:00",
                  pdst="10.1.1.2"))
    vlan_udp = raw(Ether(src=SRC_MAC, dst=DST_MAC) / Dot1Q(vlan=100) /
                   IP(src="10.1.1.1", dst=P2_DST, id=13) / UDP(sport=1000, dport=2000) / b"vlan")
    qinq_udp = raw(Ether(src=SRC_MAC, dst=DST_MAC) / Dot1AD(vlan=10) / Dot1Q(vlan=20) /
                   IP(src="10.1.1.1", dst=P1_DST, id=14) / UDP(sport=1000, dport=2000) / b"qinq")
    oversize = udp4(P1_DST, payload=bytes(range(158)))  # 42 + 158 = 200 bytes

    return [
        Case("valid UDP to p1", udp4(P1_DST), "->p1"),
        Case("runt frame, 10 bytes", bytes(range(10)), "truncated_l2"),
        Case("Ethernet header only, IPv4 EtherType", eth(0x0800), "truncated_l3"),
        Case("IPv4 header cut at 12 bytes", udp4()[:14 + 12], "truncated_l3"),
        Case("valid TCP to p2", tcp4(P2_DST), "->p2"),
        Case("IPv4 IHL=4", ipv4(17, udp_hdr, ihl=4), "bad_ipv4_ihl"),
        Case("version 6 under the IPv4 EtherType", ipv4(17, udp_hdr, version=6),
             "bad_ip_version"),
        Case("IPv4 total length beyond the frame", ipv4(17, udp_hdr, total=20 + 8 + 10),
             "bad_ip_length"),
        Case("IPv4 total length below its header", ipv4(17, udp_hdr, total=19), "bad_ip_length"),
        Case("IPv4 IHL=15, options beyond the frame", ipv4(17, udp_hdr, ihl=15, total=60 + 8),
             "truncated_l3"),
        Case("valid IPv4 with options (IHL=6) to p1", eth(0x0800) + options, "->p1"),
        Case("TCP header cut at 10 bytes", ipv4(6, tcp_hdr[:10]), "truncated_l4"),
        Case("TCP data offset 3", ipv4(6, bytes(tcp_doff3)), "bad_tcp_offset"),
        Case("TCP data offset 15, beyond the IP payload", ipv4(6, bytes(tcp_doff15)),
             "bad_tcp_offset"),
        Case("UDP header cut at 4 bytes", ipv4(17, udp_hdr[:4]), "truncated_l4"),
        Case("ICMP header cut at 4 bytes", ipv4(1, raw(ICMP())[:4]), "truncated_l4"),
        Case("valid UDP to p2", udp4(P2_DST), "->p2"),
        Case("IPv6 header cut at 20 bytes", eth(0x86DD) + raw(IPv6())[:20], "truncated_l3"),
        Case("IPv6 payload length beyond the frame", bytes(ipv6_long), "bad_ip_length"),
        Case("valid IPv6 UDP", ipv6_udp, "not_ipv4"),
        Case("802.1Q tag cut short (16 bytes)", eth(0x8100) + b"\x00\x64", "truncated_l2"),
        Case("802.1ad + 802.1Q, second tag cut short",
             eth(0x88A8) + b"\x00\x0a\x81\x00" + b"\x00\x14", "truncated_l2"),
        Case("802.1Q-tagged valid UDP to p2", vlan_udp, "->p2"),
        Case("802.1ad+802.1Q-tagged valid UDP to p1", qinq_udp, "->p1"),
        Case(f"200-byte frame, longer than the {SLOT_BYTES}-byte slot", oversize, "oversize"),
        Case("bad IPv4 header checksum", with_bad_checksum(udp4(P1_DST)), "ipv4_bad_checksum"),
        Case("TTL 1", udp4(P1_DST, ttl=1), "ttl_expired"),
        Case("TTL 0", udp4(P2_DST, ttl=0), "ttl_expired"),
        Case("valid UDP with TTL 2 to p1 (leaves with TTL 1)", udp4(P1_DST, ttl=2), "->p1"),
        Case("no route", udp4(NO_ROUTE_DST), "no_route"),
        Case("TTL 1 and no route: no_route is checked first", udp4(NO_ROUTE_DST, ttl=1),
             "no_route"),
        Case("bad checksum and TTL 0: the checksum is checked first",
             with_bad_checksum(udp4(P1_DST, ttl=0)), "ipv4_bad_checksum"),
        Case("ARP request", arp, "not_ipv4"),
        Case("IPv4 later fragment, 4-byte payload (no L4 header to check)", later_fragment,
             "->p1"),
        Case("IPv4 in a frame with Ethernet padding (60 bytes)", padded, "->p1"),
        Case("record cut at 40 bytes by the snap length", cut[:40], "bad_ip_length",
             wirelen=len(cut)),
        Case("valid UDP to p2, last", udp4(P2_DST, payload=b"last"), "->p2"),
    ]


def pcap_bytes(all_cases: list[Case]) -> bytes:
    """A little-endian microsecond libpcap file, link type Ethernet, snap length 65535."""
    out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    for i, c in enumerate(all_cases):
        out += struct.pack("<IIII", FIRST_TS_S, i * 1000, len(c.frame), c.wirelen or len(c.frame))
        out += c.frame
    return bytes(out)


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else DEFAULT_OUT
    all_cases = cases()
    for c in all_cases:
        assert (len(c.frame) <= SLOT_BYTES) != (c.verdict == "oversize"), c.name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(pcap_bytes(all_cases))
    print(f"{out}: {len(all_cases)} frames")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
