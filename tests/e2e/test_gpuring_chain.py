"""A gpuring port feeding a chain under `gpunfv run` (placement: host: CPU threads run the same
ring loops the GPU runs): the emulated NIC writes the capture into ring slots, the chain runs on
batches that name those slots, and the output equals that of the same chain fed by a plain pcap
port, with every packet accounted for. Packets sent back to the gpuring port leave through its
tx descriptors into its sink."""
from __future__ import annotations

import time

import pytest

from conftest import ROUTER_DATA, TRACES, read_pcap, run_chain, run_gpunfv, write_config
from test_config_errors import config_file, expect_config_error

SIP_TRACE = TRACES / "SIP_CALL_RTP_G711.pcap"
ROUTES = ROUTER_DATA / "example.routes"


def frames(path):
    return [f for _, f in read_pcap(path)[1]]


def router_run(gpunfv, tmp_path, name, ingress: dict, rings: int | None = None,
               egress_threads_per_chain: int = 1):
    out = tmp_path / name
    out.mkdir()
    config = write_config(
        out / "c.yaml",
        ports=[ingress,
               {"name": "p1", "type": "pcap", "tx": str(out / "p1.pcap")},
               {"name": "p2", "type": "pcap", "tx": str(out / "p2.pcap")}],
        nfs=[{"name": "r1", "type": "router", "routes": str(ROUTES)}],
        chains=[{"from": ingress["name"], "path": ["r1"]}],
        settings={"batch_size": 256, "egress_threads_per_chain": egress_threads_per_chain})
    return run_chain(gpunfv, config), out


def gpuring_port(rings: int, **extra) -> dict:
    return {"name": "gr", "type": "gpuring", "rings": rings, "ring_size": 256, "placement": "host",
            "flow_control": True, "source": {"type": "pcap", "rx": str(SIP_TRACE)}, **extra}


@pytest.mark.parametrize("rings", [1, 3])
def test_gpuring_router_equals_pcap_path(gpunfv, tmp_path, rings):
    plain, plain_out = router_run(gpunfv, tmp_path, "plain", {"name": "in", "type": "pcap", "rx": str(SIP_TRACE)})
    ring, ring_out = router_run(gpunfv, tmp_path, "ring", gpuring_port(rings))
    assert ring["ports"]["gr"]["rx_packets"] == plain["ports"]["in"]["rx_packets"] > 4000
    assert ring["ports"]["gr"]["drops"] == plain["ports"]["in"]["drops"]
    assert ring["nfs"]["r1"] == plain["nfs"]["r1"]
    for p in ("p1", "p2"):
        assert ring["ports"][p]["tx_packets"] == plain["ports"][p]["tx_packets"] > 0
        a, b = frames(plain_out / f"{p}.pcap"), frames(ring_out / f"{p}.pcap")
        if rings == 1:
            assert a == b  # one ring keeps the arrival order
        else:
            assert sorted(a) == sorted(b)  # RSS spreads flows over rings; each ring keeps order
    assert "slots audited ok" in ring["backend_detail"]


def test_gpuring_router_with_several_egress_threads_keeps_order(gpunfv, tmp_path):
    # Ring batches go out frame by frame at their turn: with 3 egress threads per chain the
    # output is still the plain path's, frame for frame, and every slot goes back to the ring.
    plain, plain_out = router_run(gpunfv, tmp_path, "plain", {"name": "in", "type": "pcap", "rx": str(SIP_TRACE)})
    ring, ring_out = router_run(gpunfv, tmp_path, "ring", gpuring_port(1), egress_threads_per_chain=3)
    assert ring["nfs"]["r1"] == plain["nfs"]["r1"]
    assert ring["ports"]["gr"]["drops"] == plain["ports"]["in"]["drops"]
    for p in ("p1", "p2"):
        assert frames(ring_out / f"{p}.pcap") == frames(plain_out / f"{p}.pcap")
    assert "slots audited ok" in ring["backend_detail"]


def test_gpuring_passthrough_leaves_through_the_ring(gpunfv, tmp_path):
    sink = tmp_path / "sink.pcap"
    config = write_config(
        tmp_path / "c.yaml",
        ports=[gpuring_port(1, sink={"type": "pcap", "tx": str(sink)})],
        chains=[{"from": "gr", "path": [], "to": "gr"}])
    report = run_chain(gpunfv, config)
    sent = frames(sink)
    assert report["ports"]["gr"]["tx_packets"] == len(sent)
    # Classify drops what is not a well-formed frame; everything else comes out unchanged, in order.
    assert len(sent) == report["ports"]["gr"]["forwarded"] > 4000
    sent_set = set(sent)
    assert sent == [f for f in frames(SIP_TRACE) if f in sent_set]


def test_gpuring_packets_egress_drops_are_not_sent(gpunfv, tmp_path):
    # No NF and no `to:`: egress drops every packet (no_egress); the ring must free their slots
    # instead of sending them out through its tx descriptors.
    sink = tmp_path / "sink.pcap"
    config = write_config(
        tmp_path / "c.yaml",
        ports=[gpuring_port(1, sink={"type": "pcap", "tx": str(sink)})],
        chains=[{"from": "gr", "path": []}])
    report = run_chain(gpunfv, config)
    gr = report["ports"]["gr"]
    assert gr["drops"].get("no_egress", 0) > 4000
    assert gr["tx_packets"] == 0
    assert frames(sink) == []
    assert "slots audited ok" in report["backend_detail"]


def test_gpuring_unused_port_refused(gpunfv, tmp_path):
    config = config_file(tmp_path, f"""\
ports:
  - {{name: in, type: pcap, rx: "{SIP_TRACE}"}}
  - name: gr
    type: gpuring
    source: {{type: generator, count: 10}}
chains:
  - {{from: in, path: [], to: gr}}
""")
    expect_config_error(gpunfv, config, "config.yaml:4", "gpuring", "only as a chain's from")


def test_gpuring_chain_with_an_nf_in_an_nf_process_refused(gpunfv, tmp_path):
    """A ring's batches name packets in its slots, which an NF process does not map."""
    config = config_file(tmp_path, f"""\
ports:
  - name: gr
    type: gpuring
    placement: host
    source: {{type: generator, count: 10}}
  - {{name: p1, type: discard}}
  - {{name: p2, type: discard}}
nfs:
  - {{name: r1, type: router, routes: "{ROUTES}", process: vendor-r}}
chains:
  - {{from: gr, path: [r1]}}
""")
    expect_config_error(gpunfv, config, "config.yaml:11", "NF process vendor-r", "ring's slots")


def ring_placement_config(tmp_path, placement: str):
    return config_file(tmp_path, f"""\
ports:
  - name: gr
    type: gpuring
    placement: {placement}
    source: {{type: generator, count: 10}}
chains:
  - {{from: gr, path: []}}
""")


@pytest.mark.parametrize("placement, backend, needle", [
    ("device", "cpu", "placement: device needs --backend gpu"),
    ("host", "gpu", "placement: host runs on the CPU backend only"),
])
def test_gpuring_placement_of_the_other_backend_refused(gpunfv, tmp_path, placement, backend, needle):
    # Refused before any CUDA call, so this holds on machines without a GPU too.
    proc = run_gpunfv(gpunfv, "run", ring_placement_config(tmp_path, placement), "--backend", backend,
                      timeout=30)
    assert proc.returncode == 2, proc.stderr
    assert "config.yaml:4" in proc.stderr and needle in proc.stderr, proc.stderr


def test_gpuring_auto_placement_runs_on_the_cpu_backend(gpunfv, tmp_path):
    # placement: auto is host on the CPU backend (device on the GPU backend): one example, both.
    ring, _ = router_run(gpunfv, tmp_path, "auto", gpuring_port(1, placement="auto"))
    assert ring["ports"]["gr"]["rx_packets"] > 4000
    assert "placement host" in ring["backend_detail"]


def test_gpuring_frames_get_their_rx_time_as_capture_time(gpunfv, tmp_path):
    # Descriptors carry no capture time: a ring packet's wire time is when the rx loop took it,
    # in UNIX time, so pcap sinks write the receive time (never 0).
    before = time.time_ns()
    _, out = router_run(gpunfv, tmp_path, "stamps", gpuring_port(1))
    after = time.time_ns()
    stamps = [ts for p in ("p1", "p2") for ts, _ in read_pcap(out / f"{p}.pcap")[1]]
    assert len(stamps) > 1000
    assert all(before - 10**9 <= ts <= after + 10**9 for ts in stamps), (before, min(stamps), max(stamps), after)


def test_gpuring_without_flow_control_counts_nic_drops(gpunfv, tmp_path):
    # A small ring and an unpaced NIC: what finds the ring full is dropped by the NIC and
    # counted on the port (nic_rx_ring_full); every generated frame is received or dropped.
    count = 200000
    config = write_config(
        tmp_path / "c.yaml",
        ports=[{"name": "gr", "type": "gpuring", "rings": 1, "ring_size": 64, "placement": "host",
                "source": {"type": "generator", "count": count, "size": 64, "flows": 256}},
               {"name": "out", "type": "discard"}],
        chains=[{"from": "gr", "path": [], "to": "out"}],
        settings={"batch_size": 32, "batches": 4})
    report = run_chain(gpunfv, config)
    gr = report["ports"]["gr"]
    assert gr["rx_packets"] == count
    assert set(gr["drops"]) <= {"nic_rx_ring_full"}
    assert report["ports"]["out"]["tx_packets"] == count - gr["drops"].get("nic_rx_ring_full", 0)


def test_gpuring_run_ends_at_its_duration(gpunfv, tmp_path):
    # An endless source: the run's deadline aborts the rings as they stand, the slot audit
    # still holds (the run would fail otherwise) and the accounting adds up.
    config = write_config(
        tmp_path / "c.yaml",
        ports=[{"name": "gr", "type": "gpuring", "rings": 2, "placement": "host", "rate": "200kpps",
                "source": {"type": "generator", "size": 64, "flows": 256, "duration": 30}},
               {"name": "out", "type": "discard"}],
        chains=[{"from": "gr", "path": [], "to": "out"}])
    report = run_chain(gpunfv, config, "--duration", "1")
    assert report["ports"]["gr"]["rx_packets"] > 1000
    assert "slots audited ok" in report["backend_detail"]
