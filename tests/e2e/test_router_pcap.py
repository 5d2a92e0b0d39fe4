"""Router chain over a real capture, checked against a reference router written here, and
a chain without NFs (passthrough), checked byte for byte and timestamp for timestamp.

The reference router is deliberately naive and independent of src/: a linear scan of the route
file for the longest matching prefix, a checksum recomputed from scratch. Its order of checks is
the documented one (src/nf/router/router.h): not_ipv4, ipv4_bad_checksum, no_route, ttl_expired.
"""
from __future__ import annotations

import shutil
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest

from conftest import (ROUTER_DATA, TRACES, drops_outside_nfs, ip_to_int, ipv4_header_checksum,
                      ones_sum, pcap_is_nanosecond, read_pcap, run_chain, tshark_count,
                      tshark_fields, write_config)

SIP_TRACE = TRACES / "SIP_CALL_RTP_G711.pcap"
EXAMPLE_ROUTES = ROUTER_DATA / "example.routes"
HTTP_TRACE = TRACES / "http_with_jpegs.cap"


# --- reference router ---------------------------------------------------------------------------

def load_routes(path: Path) -> list[tuple[int, int, str]]:
    """(network, length, port) per route line of a "a.b.c.d/len PORT" file."""
    routes = []
    for line in path.read_text().splitlines():
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        prefix, port = fields
        addr, length = prefix.split("/")
        routes.append((ip_to_int(addr), int(length), port))
    return routes


def longest_match(routes: list[tuple[int, int, str]], addr: int) -> str | None:
    best_len, best_port = -1, None
    for net, length, port in routes:
        mask = (0xFFFFFFFF << (32 - length)) & 0xFFFFFFFF if length else 0
        if addr & mask == net and length > best_len:
            best_len, best_port = length, port
    return best_port


def reference_route(frame: bytes, routes) -> tuple[str, str | bytes]:
    """("drop", reason) or ("fwd", port, new frame bytes) for one well-formed Ethernet frame."""
    off = 12
    ethertype = int.from_bytes(frame[off:off + 2], "big")
    for _ in range(2):  # 802.1Q / 802.1ad tags
        if ethertype not in (0x8100, 0x88A8):
            break
        off += 4
        ethertype = int.from_bytes(frame[off:off + 2], "big")
    ip = off + 2
    if ethertype != 0x0800:
        return ("drop", "not_ipv4")
    ihl = (frame[ip] & 0x0F) * 4
    header = frame[ip:ip + ihl]
    assert frame[ip] >> 4 == 4 and ihl >= 20 and len(header) == ihl, "trace has a malformed IPv4 header"
    if ones_sum(header) != 0xFFFF:
        return ("drop", "ipv4_bad_checksum")
    port = longest_match(routes, int.from_bytes(frame[ip + 16:ip + 20], "big"))
    if port is None:
        return ("drop", "no_route")
    ttl = frame[ip + 8]
    if ttl <= 1:
        return ("drop", "ttl_expired")
    out = bytearray(frame)
    out[ip + 8] = ttl - 1
    out[ip + 10:ip + 12] = ipv4_header_checksum(bytes(out[ip:ip + ihl])).to_bytes(2, "big")
    return ("fwd", port, bytes(out))


# --- the router chain on the SIP trace ----------------------------------------------------------

@pytest.fixture(scope="module")
def sip_run(gpunfv, tmp_path_factory, request):
    """Runs the router chain once; the tests below check different aspects of its output."""
    tmp = tmp_path_factory.mktemp("router_sip")
    out = {p: tmp / f"{p}.pcap" for p in ("p1", "p2")}
    config = write_config(
        tmp / "router.yaml",
        ports=[{"name": "in", "type": "pcap", "rx": SIP_TRACE},
               {"name": "p1", "type": "pcap", "tx": out["p1"]},
               {"name": "p2", "type": "pcap", "tx": out["p2"]}],
        nfs=[{"name": "r1", "type": "router", "routes": EXAMPLE_ROUTES}],
        chains=[{"from": "in", "path": ["r1"]}],
        # Small batches so the trace spans many batches (ordering across batches matters).
        settings={"batch_size": 256, "batches": 8})
    report = run_chain(gpunfv, config)

    routes = load_routes(EXAMPLE_ROUTES)
    linktype, frames = read_pcap(SIP_TRACE)
    assert linktype == 1
    expected = {"p1": [], "p2": []}  # (input index, timestamp ns, bytes)
    drops = Counter()
    for index, (ts, frame) in enumerate(frames):
        verdict = reference_route(frame, routes)
        if verdict[0] == "drop":
            drops[verdict[1]] += 1
        else:
            expected[verdict[1]].append((index, ts, verdict[2]))
    yield {"report": report, "out": out, "expected": expected, "drops": drops,
           "routes": routes, "input_frames": frames}
    if not request.session.testsfailed:
        shutil.rmtree(tmp, ignore_errors=True)


def test_router_report_matches_reference(sip_run):
    report, expected, drops = sip_run["report"], sip_run["expected"], sip_run["drops"]
    n_in = len(sip_run["input_frames"])
    assert n_in == 4269
    # The trace exercises both ports and at least two drop reasons.
    assert expected["p1"] and expected["p2"] and drops["not_ipv4"] and drops["no_route"]
    port_in = report["ports"]["in"]
    assert port_in["rx_packets"] == n_in
    assert port_in["forwarded"] == len(expected["p1"]) + len(expected["p2"])
    assert port_in["drops"] == dict(drops)
    assert report["nfs"]["r1"]["drops"] == dict(drops)
    assert report["nfs"]["r1"]["in"] == n_in
    assert drops_outside_nfs(report) == {}
    for p in ("p1", "p2"):
        assert report["ports"][p]["tx_packets"] == len(expected[p])
        assert report["ports"][p]["tx_bytes"] == sum(len(f) for _, _, f in expected[p])
        assert report["ports"][p]["rx_packets"] == 0


@pytest.mark.parametrize("port", ["p1", "p2"])
def test_router_output_frames_and_timestamps(sip_run, port):
    path = sip_run["out"][port]
    assert pcap_is_nanosecond(path)
    linktype, got = read_pcap(path)
    assert linktype == 1
    want = sip_run["expected"][port]
    assert len(got) == len(want)
    for k, ((ts, frame), (index, want_ts, want_frame)) in enumerate(zip(got, want)):
        assert frame == want_frame, f"{port} frame {k} (input frame {index + 1}) differs"
        assert ts == want_ts, f"{port} frame {k} (input frame {index + 1}): timestamp {ts} != {want_ts}"


@pytest.mark.parametrize("port", ["p1", "p2"])
def test_router_output_with_tshark(sip_run, port):
    path = sip_run["out"][port]
    want = sip_run["expected"][port]
    prefs = ("ip.check_checksum:TRUE",)
    # "Bad" is value 0 of ip.checksum.status (checked in test_tshark_flags_bad_checksum).
    assert tshark_count(path, 'ip.checksum.status == "Bad"', prefs) == 0
    assert tshark_count(path, 'ip.checksum.status == "Good"', prefs) == len(want)

    rows = tshark_fields(path, ["frame.time_epoch", "ip.ttl", "ip.dst"])
    assert len(rows) == len(want)
    in_rows = tshark_fields(SIP_TRACE, ["frame.time_epoch", "ip.ttl"])
    for (epoch, ttl, dst), (index, want_ts, _) in zip(rows, want):
        # Timestamps as tshark reads them, exact to the nanosecond.
        assert Decimal(epoch) == Decimal(want_ts) / Decimal(10**9)
        assert Decimal(epoch) == Decimal(in_rows[index][0])
        # Matched by order: the k-th output frame is the index-th input frame.
        assert int(ttl) == int(in_rows[index][1]) - 1
        assert longest_match(sip_run["routes"], ip_to_int(dst)) == port, dst


def test_tshark_flags_bad_checksum(tmp_path):
    """Guards the display filter used above: it must match a packet with a bad checksum."""
    from scapy.all import IP, UDP, Ether, wrpcap

    good = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / \
        IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1, dport=2) / b"x"
    bad = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / \
        IP(src="10.0.0.1", dst="10.0.0.2", chksum=0x1234) / UDP(sport=1, dport=2) / b"x"
    path = tmp_path / "cksum.pcap"
    wrpcap(str(path), [good, bad, good])
    prefs = ("ip.check_checksum:TRUE",)
    assert tshark_fields(path, ["frame.number"], 'ip.checksum.status == "Bad"', prefs) == [["2"]]
    assert tshark_count(path, 'ip.checksum.status == "Good"', prefs) == 2


# --- a chain without NFs ------------------------------------------------------------------------

def test_passthrough_is_identity(gpunfv, tmp_path):
    out = tmp_path / "passthrough.pcap"
    config = write_config(
        tmp_path / "passthrough.yaml",
        ports=[{"name": "in", "type": "pcap", "rx": HTTP_TRACE},
               {"name": "out", "type": "pcap", "tx": out}],
        chains=[{"from": "in", "path": [], "to": "out"}],
        settings={"batch_size": 64, "batches": 4})
    report = run_chain(gpunfv, config)
    _, frames = read_pcap(HTTP_TRACE)
    assert len(frames) == 483
    assert report["ports"]["in"]["rx_packets"] == 483
    assert report["ports"]["in"]["forwarded"] == 483
    assert report["ports"]["out"]["tx_packets"] == 483
    assert report["ports"]["out"]["tx_bytes"] == sum(len(f) for _, f in frames)
    assert report["nfs"] == {}
    linktype, got = read_pcap(out)
    assert linktype == 1
    assert got == frames  # same bytes, same timestamps (ns), same order
    rows_in = tshark_fields(HTTP_TRACE, ["frame.time_epoch", "frame.len"])
    rows_out = tshark_fields(out, ["frame.time_epoch", "frame.len"])
    assert [(Decimal(t), n) for t, n in rows_out] == [(Decimal(t), n) for t, n in rows_in]


@pytest.mark.parametrize("preload, settings", [
    (True, {"batch_size": 1, "batches": 2, "workers": 1}),
    (False, {"batch_size": 7, "batches": 3, "workers": 3}),
    (True, {"batch_size": 4096, "batches": 2, "workers": 2}),
], ids=["batch1", "streamed-batch7-workers3", "one-batch"])
def test_router_output_independent_of_batching(gpunfv, sip_run, tmp_path, preload, settings):
    """Batch size, batch count, worker threads and streaming the capture from disk change
    nothing in the output or the counts."""
    out = {p: tmp_path / f"{p}.pcap" for p in ("p1", "p2")}
    config = write_config(
        tmp_path / "router.yaml",
        ports=[{"name": "in", "type": "pcap", "rx": SIP_TRACE, "preload": preload},
               {"name": "p1", "type": "pcap", "tx": out["p1"]},
               {"name": "p2", "type": "pcap", "tx": out["p2"]}],
        nfs=[{"name": "r1", "type": "router", "routes": EXAMPLE_ROUTES}],
        chains=[{"from": "in", "path": ["r1"]}],
        settings=settings)
    report = run_chain(gpunfv, config)
    for key in ("ports", "nfs"):
        assert report[key] == sip_run["report"][key]
    for p in out:
        assert out[p].read_bytes() == sip_run["out"][p].read_bytes(), p


def test_streamed_capture_memory(gpunfv, tmp_path):
    """Streaming a small capture with default settings stays within a sane amount of memory."""
    import os
    import subprocess

    config = write_config(
        tmp_path / "stream.yaml",
        ports=[{"name": "in", "type": "pcap", "rx": SIP_TRACE, "preload": False},
               {"name": "out", "type": "discard"}],
        chains=[{"from": "in", "to": "out"}])
    proc = subprocess.Popen([str(gpunfv), "run", str(config), "-q"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == 0
    assert usage.ru_maxrss < 1024 * 1024, f"max RSS {usage.ru_maxrss} KiB"
