"""Malformed and truncated frames (data/tests/malformed.pcap, made by
scripts/make_malformed_pcap.py) through a router: each frame gets the drop reason the script
lists for it, valid frames come out on their port (TTL decremented, checksum recomputed from
scratch here), the accounting adds up, and the program exits 0."""
from __future__ import annotations

import importlib.util
import sys
from collections import Counter

import pytest

from conftest import (DATA, REPO, drops_outside_nfs, ipv4_header_checksum, read_pcap, run_chain,
                      tshark_count, write_config)

MALFORMED = DATA / "tests" / "malformed.pcap"
ROUTER_REASONS = {"not_ipv4", "ipv4_bad_checksum", "no_route", "ttl_expired"}


@pytest.fixture(scope="module")
def maker():
    spec = importlib.util.spec_from_file_location("make_malformed_pcap",
                                                  REPO / "scripts" / "make_malformed_pcap.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_committed_capture_is_what_the_script_writes(maker, tmp_path):
    out = tmp_path / "malformed.pcap"
    assert maker.main(["make_malformed_pcap.py", str(out)]) == 0
    assert out.read_bytes() == MALFORMED.read_bytes(), \
        "data/tests/malformed.pcap is stale: run scripts/make_malformed_pcap.py"


def forwarded_frame(frame: bytes) -> bytes:
    """What the router makes of a valid IPv4 frame: TTL - 1, header checksum recomputed."""
    off = 12
    while frame[off:off + 2] in (b"\x81\x00", b"\x88\xa8"):
        off += 4
    ip = off + 2
    ihl = (frame[ip] & 0x0F) * 4
    out = bytearray(frame)
    out[ip + 8] -= 1
    out[ip + 10:ip + 12] = ipv4_header_checksum(bytes(out[ip:ip + ihl])).to_bytes(2, "big")
    return bytes(out)


def test_malformed_frames(gpunfv, maker, tmp_path):
    cases = maker.cases()
    linktype, frames = read_pcap(MALFORMED)
    assert linktype == 1 and [f for _, f in frames] == [c.frame for c in cases]

    routes = tmp_path / "test.routes"
    routes.write_text(maker.ROUTES)
    out = {p: tmp_path / f"{p}.pcap" for p in ("p1", "p2")}
    config = write_config(
        tmp_path / "malformed.yaml",
        ports=[{"name": "in", "type": "pcap", "rx": MALFORMED},
               {"name": "p1", "type": "pcap", "tx": out["p1"]},
               {"name": "p2", "type": "pcap", "tx": out["p2"]}],
        nfs=[{"name": "r1", "type": "router", "routes": routes}],
        chains=[{"from": "in", "path": ["r1"]}],
        settings={"slot_bytes": maker.SLOT_BYTES, "batch_size": 8, "batches": 4})
    report = run_chain(gpunfv, config)

    want_drops = Counter(c.verdict for c in cases if not c.verdict.startswith("->"))
    want_out = {p: [(ts, forwarded_frame(c.frame)) for (ts, _), c in zip(frames, cases)
                    if c.verdict == "->" + p] for p in out}
    port_in = report["ports"]["in"]
    assert port_in["rx_packets"] == len(cases)
    assert port_in["rx_bytes"] == sum(len(c.frame) for c in cases)
    assert port_in["drops"] == dict(want_drops)
    assert port_in["forwarded"] == len(want_out["p1"]) + len(want_out["p2"])
    # Parse and size drops happen before the router; the router's own reasons are its drops.
    assert drops_outside_nfs(report) == {r: n for r, n in want_drops.items()
                                         if r not in ROUTER_REASONS}
    r1 = report["nfs"]["r1"]
    assert r1["drops"] == {r: n for r, n in want_drops.items() if r in ROUTER_REASONS}
    assert r1["in"] == len(cases) - sum(n for r, n in want_drops.items() if r not in ROUTER_REASONS)

    for p, path in out.items():
        _, got = read_pcap(path)
        assert got == want_out[p], f"{p}: frames or timestamps differ"
        assert report["ports"][p]["tx_packets"] == len(want_out[p])
        prefs = ("ip.check_checksum:TRUE",)
        assert tshark_count(path, 'ip.checksum.status == "Bad"', prefs) == 0
        assert tshark_count(path, 'ip.checksum.status == "Good"', prefs) == len(want_out[p])


def test_every_parse_reason_is_exercised(maker):
    reasons = {c.verdict for c in maker.cases()}
    assert {"truncated_l2", "truncated_l3", "bad_ip_version", "bad_ipv4_ihl", "bad_ip_length",
            "truncated_l4", "bad_tcp_offset", "oversize", "not_ipv4", "ipv4_bad_checksum",
            "no_route", "ttl_expired", "->p1", "->p2"} <= reasons
