"""`forward:` between two gpuring ports under `gpunfv run` (P2PNIC over host bypassing): port a's
emulated NIC writes the source's frames into a's rx ring slots, the forwarding loops (CPU threads
with placement: host) hand each slot to b's tx ring, b's emulated NIC sends it into b's sink.
The output capture must be the source frames, routed as the router routes them (TTL - 1, a valid
checksum) when the forward has `route:`; the report must account for every frame on a (rx =
forwarded + drops by reason) and b (tx), and carry the forward's entry (variant, posts, latency).
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from conftest import REPO, TRACES, read_pcap, run_chain, run_gpunfv
from test_config_errors import config_file, expect_config_error
from test_router_pcap import load_routes, reference_route

SIP_TRACE = TRACES / "SIP_CALL_RTP_G711.pcap"
EXAMPLE = REPO / "examples" / "gpuring-forward.yaml"
EXAMPLE_ROUTES = REPO / "examples" / "gpuring-forward.routes"


def frames(path) -> list[bytes]:
    return [f for _, f in read_pcap(path)[1]]


def example_config(tmp_path: Path, **replace: str) -> Path:
    """examples/gpuring-forward.yaml with its paths made absolute and its capture under tmp_path;
    `replace` substitutes further text (e.g. placement)."""
    text = EXAMPLE.read_text()
    text = text.replace("../data/", f"{REPO}/data/").replace("../out/", f"{tmp_path}/")
    text = text.replace("route: gpuring-forward.routes", f"route: {EXAMPLE_ROUTES}")
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "gpuring-forward.yaml"
    path.write_text(text)
    return path


def test_example_routes_every_frame_as_the_router_does(gpunfv, tmp_path):
    report = run_chain(gpunfv, example_config(tmp_path))
    source = frames(SIP_TRACE)
    routes = load_routes(EXAMPLE_ROUTES)
    expected, drops = [], Counter()
    for f in source:
        verdict = reference_route(f, routes)
        if verdict[0] == "drop":
            drops[verdict[1]] += 1
        else:
            assert verdict[1] == "b"
            expected.append(verdict[2])
    out = frames(tmp_path / "gpuring-forward.pcap")
    assert out == expected  # one ring: the arrival order; TTL - 1 and a recomputed checksum
    assert len(out) > 4000 and drops["not_ipv4"] > 0 and drops["no_route"] > 0

    a, b = report["ports"]["a"], report["ports"]["b"]
    assert a["rx_packets"] == len(source)
    assert a["forwarded"] == b["tx_packets"] == len(out)
    assert a["drops"] == dict(drops)
    assert a["rx_bytes"] == sum(map(len, source))
    assert b["tx_bytes"] == sum(map(len, out))
    assert b["rx_packets"] == 0 and a["tx_packets"] == 0

    [fwd] = report["forwards"]
    assert fwd["name"] == "a=>b" and fwd["mode"] == "zerocopy"
    assert fwd["variant"] == "rd" and fwd["loops"] == "cpu"
    assert fwd["slot_audit"] == "ok" and fwd["accounting"] == "ok"
    assert fwd["copied_bytes"] == 0
    assert 0 < fwd["posts"] < len(out)  # tail updates batched (tail_batch 8)
    assert fwd["latency_ns"]["count"] == len(out) and fwd["latency_ns"]["p50"] > 0
    assert fwd["nic"]["offered"] == len(source) and fwd["nic"]["sent"] == len(out)
    assert "slots audited ok" in report["backend_detail"]


def test_unrouted_forward_delivers_the_source_unchanged(gpunfv, tmp_path):
    # Two rings, variant wr, no route: every frame leaves unchanged; RSS spreads flows over the
    # rings, each ring keeps its order, so the capture is the source's frames in some order.
    config = example_config(tmp_path, **{
        "rings: 1": "rings: 2",
        "variant: rd, route: " + str(EXAMPLE_ROUTES) + ", integrity: on": "variant: wr, integrity: on"})
    report = run_chain(gpunfv, config)
    source, out = frames(SIP_TRACE), frames(tmp_path / "gpuring-forward.pcap")
    assert Counter(out) == Counter(source)
    assert report["ports"]["a"]["rx_packets"] == report["ports"]["b"]["tx_packets"] == len(source)
    assert report["ports"]["a"]["drops"] == {}
    [fwd] = report["forwards"]
    assert fwd["variant"] == "wr" and fwd["nic"]["reordered_in_ring"] == 0


def test_duration_cuts_the_source_off_and_drains(gpunfv, tmp_path):
    # An endless generator: --duration stops the NIC taking frames, everything taken drains,
    # and the accounting is exact (run_chain checks it; the slot audit would fail the run).
    config = config_file(tmp_path, """\
ports:
  - {name: a, type: gpuring, placement: host, rings: 2, rate: 200kpps,
     source: {type: generator, size: 64-1500, flows: 64, duration: 60}}
  - {name: b, type: gpuring, placement: host, rings: 2, sink: {type: "discard"}}
forward:
  - {from: a, to: b, integrity: on}
""")
    report = run_chain(gpunfv, config, "--duration", "1", timeout=30)
    a, b = report["ports"]["a"], report["ports"]["b"]
    assert a["rx_packets"] > 20000
    assert a["rx_packets"] == b["tx_packets"] + a["dropped"]
    assert set(a["drops"]) <= {"nic_rx_ring_full"}
    assert report["forwards"][0]["slot_audit"] == "ok"
    assert report["elapsed_s"] < 10


def test_device_placement_runs_or_says_why(gpunfv, tmp_path):
    # placement: device runs the persistent kernel: where there is no GPU (or no CUDA in the
    # build) the run stops with a clear error; where there is one, it forwards as on the host.
    config = example_config(tmp_path, **{"placement: host": "placement: device"})
    proc = run_gpunfv(gpunfv, "run", config, "-q", "--report", tmp_path / "r.json", timeout=60)
    if proc.returncode == 0:
        report = json.loads((tmp_path / "r.json").read_text())
        assert report["forwards"][0]["loops"] == "gpu" and report["accounting_ok"]
    else:
        assert proc.returncode in (1, 2), proc.stderr
        assert "placement: device" in proc.stderr and ("GPU" in proc.stderr or "CUDA" in proc.stderr), proc.stderr


def gpuring_pair(a_extra: str = "", b_extra: str = "", forward: str = "{from: a, to: b}") -> str:
    return f"""\
ports:
  - {{name: a, type: gpuring, placement: host, source: {{type: generator, count: 10}}{a_extra}}}
  - {{name: b, type: gpuring, placement: host{b_extra}}}
  - {{name: p, type: pcap, tx: out.pcap}}
forward:
  - {forward}
"""


def test_bad_gpuring_forwards_are_config_errors(gpunfv, tmp_path):
    cases = [
        (gpuring_pair(forward="{from: a, to: p}"), "config.yaml:6", "forwards only to or from another gpuring"),
        (gpuring_pair(b_extra=", ring_size: 256"), "config.yaml:6", "differ in ring_size (512 vs 256)"),
        (gpuring_pair(forward="{from: a, to: b, descriptor_batch: 4}"), "config.yaml:6",
         "descriptor_batch: does not apply"),
        (gpuring_pair(forward="{from: a, to: b, count_bytes: off}"), "config.yaml:6",
         "count_bytes: does not apply"),
        (gpuring_pair(b_extra=", source: {type: generator, count: 5}"), "config.yaml:3",
         "receives nothing"),
        (gpuring_pair(forward="{from: a, to: b, variant: bn}", a_extra=", placement: device",
                      b_extra=", placement: device").replace("placement: host, ", ""),
         "config.yaml:6", "variant: bn"),
        (gpuring_pair(a_extra=", placement: device").replace("placement: host, source", "source"),
         "config.yaml:6", "differ in placement"),
    ]
    for text, where, needle in cases:
        expect_config_error(gpunfv, config_file(tmp_path, text), where, needle)


def test_gpuring_port_that_receives_needs_a_source(gpunfv, tmp_path):
    config = config_file(tmp_path, """\
ports:
  - {name: a, type: gpuring, placement: host}
  - {name: b, type: gpuring, placement: host}
forward:
  - {from: a, to: b}
""")
    expect_config_error(gpunfv, config, "config.yaml:2", "needs source")
