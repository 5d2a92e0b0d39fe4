"""Live ports on real interfaces, with the real tools: a network namespace with veth pairs,
tcpreplay sending a bundled trace into gpunfv's rx port, tcpdump capturing its tx ports, and
the captures compared with what the chain should produce (router: TTL - 1 on the port the
route chooses, per the reference router of test_router_pcap.py; forward: identical frames).
The namespace is deleted when a test ends, pass or fail (live_net.netns). Tests that need
privileges the machine lacks are skipped with the reason.

DPDK's virtual devices (net_pcap) need no privileges and run everywhere DPDK is built.
"""
from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from conftest import (ROUTER_DATA, TRACES, check_accounting, read_pcap, run_chain, run_gpunfv,
                      write_config)
from live_net import Capture, Gpunfv, netns  # noqa: F401 (fixture)
from test_router_pcap import load_routes, reference_route

SIP_TRACE = TRACES / "SIP_CALL_RTP_G711.pcap"
EXAMPLE_ROUTES = ROUTER_DATA / "example.routes"
RUN_S = 5  # gpunfv's --duration; tcpreplay finishes within the first second
REPLAY_PPS = 20000


def replay(ns, dev: str, trace: Path) -> None:
    # Paced: 4269 frames in about 0.2 s. At top speed a descheduled rx thread on a loaded
    # machine lets the kernel drop frames before gpunfv sees them (live-port loss, not a bug).
    r = ns.exec("tcpreplay", "-q", f"--pps={REPLAY_PPS}", "-i", dev, str(trace), check=False)
    assert r.returncode == 0, r.stderr


def run_live(ns, gpunfv, tmp: Path, config: Path, send_dev: str,
             captures: dict[str, str]) -> tuple[dict, dict[str, list[bytes]], str]:
    """Starts tcpdump on `captures` (name -> dev), gpunfv, replays the SIP trace into
    `send_dev`; returns the checked report, the captured frames per name and gpunfv's stderr."""
    caps = {name: Capture(ns, dev, tmp / f"{name}.cap.pcap") for name, dev in captures.items()}
    report_path = tmp / "report.json"
    try:
        g = Gpunfv(ns, gpunfv, config, RUN_S, report_path)
        g.wait_ready()
        replay(ns, send_dev, SIP_TRACE)
        rc, out, err = g.finish()
    finally:
        for c in caps.values():
            c.stop()
    assert rc == 0, f"exit {rc}\n{out}\n{err}"
    report = json.loads(report_path.read_text())
    check_accounting(report)
    frames = {name: [f for _, f in read_pcap(c.path)[1]] for name, c in caps.items()}
    return report, frames, err


def test_afpacket_router_chain_on_veth(netns, gpunfv, tmp_path):
    ns = netns
    ns.veth("vsrc", "in0")    # tcpreplay -> vsrc ... in0: gpunfv rx
    ns.veth("p1", "p1cap")   # gpunfv tx p1 ... p1cap: tcpdump
    ns.veth("p2", "p2cap")
    config = write_config(
        tmp_path / "router.yaml",
        ports=[{"name": "in", "type": "afpacket", "interface": "in0", "tx": False},
               {"name": "p1", "type": "afpacket", "interface": "p1", "rx": False},
               {"name": "p2", "type": "afpacket", "interface": "p2", "rx": False}],
        nfs=[{"name": "r1", "type": "router", "routes": EXAMPLE_ROUTES}],
        chains=[{"from": "in", "path": ["r1"]}],
        settings={"batch_size": 256, "batches": 8})
    report, got, _ = run_live(ns, gpunfv, tmp_path, config, "vsrc", {"p1": "p1cap", "p2": "p2cap"})

    routes = load_routes(EXAMPLE_ROUTES)
    _, frames = read_pcap(SIP_TRACE)
    expected = {"p1": [], "p2": []}
    drops = Counter()
    for _, frame in frames:
        verdict = reference_route(frame, routes)
        if verdict[0] == "drop":
            drops[verdict[1]] += 1
        else:
            expected[verdict[1]].append(verdict[2])
    assert report["ports"]["in"]["rx_packets"] == len(frames) == 4269
    assert report["ports"]["in"]["drops"] == dict(drops)
    for port in ("p1", "p2"):
        assert report["ports"][port]["tx_packets"] == len(expected[port])
        assert len(got[port]) == len(expected[port]), port
        assert got[port] == expected[port], f"{port}: captured frames differ from the reference"


def test_afpacket_forward_on_veth_is_identical(netns, gpunfv, tmp_path):
    ns = netns
    ns.veth("vsrc", "fwa")
    ns.veth("fwb", "bcap")
    config = tmp_path / "fwd.yaml"
    config.write_text(
        "ports:\n"
        "  - {name: a, type: afpacket, interface: fwa, queues: 2, tx: false}\n"
        "  - {name: b, type: afpacket, interface: fwb, rx: false, tx_kick: 8}\n"
        "forward:\n"
        "  - {from: a, to: b, mode: zerocopy, integrity: on, descriptor_batch: 8}\n")
    report, got, err = run_live(ns, gpunfv, tmp_path, config, "vsrc", {"b": "bcap"})
    # AF_PACKET cannot hand buffers over: the forward copies and says so.
    assert "zero-copy not possible (afpacket port 'a' cannot hand buffers over)" in err, err
    assert report["forwards"][0]["mode"] == "copy"
    _, frames = read_pcap(SIP_TRACE)
    sent = [f for _, f in frames]
    assert report["ports"]["a"]["rx_packets"] == len(sent)
    assert report["ports"]["b"]["tx_packets"] == len(sent)
    # Two fanout queues may reorder frames of different flows, never lose or change them.
    assert Counter(got["b"]) == Counter(sent)


def test_afpacket_errors_name_the_problem(gpunfv, tmp_path):
    config = write_config(tmp_path / "bad.yaml",
                          ports=[{"name": "x", "type": "afpacket", "interface": "gpunfv-none0"}],
                          chains=[{"from": "x", "to": "x"}])
    proc = run_gpunfv(gpunfv, "run", config, "-q")
    assert proc.returncode != 0
    assert "bad.yaml:2" in proc.stderr and "no network interface 'gpunfv-none0'" in proc.stderr


def test_afpacket_without_cap_net_raw_says_so(gpunfv, tmp_path):
    import shutil
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) not installed")
    config = write_config(tmp_path / "lo.yaml",
                          ports=[{"name": "x", "type": "afpacket", "interface": "lo"}],
                          chains=[{"from": "x", "to": "x"}])
    # Drop every capability, as an unprivileged user would run it.
    proc = subprocess.run(["setpriv", "--inh-caps=-all", "--bounding-set=-all", str(gpunfv),
                           "run", str(config), "-q"], capture_output=True, text=True, timeout=30)
    if proc.returncode == 0:
        pytest.skip("packet sockets open without CAP_NET_RAW here")
    assert "CAP_NET_RAW" in proc.stderr, proc.stderr


# --- AF_XDP ----------------------------------------------------------------------------------

def afxdp_or_skip(gpunfv, ns, tmp_path) -> None:
    """Skips when this build or this kernel cannot bind AF_XDP sockets, with the reason."""
    ns.veth("probe0", "probe1")
    config = write_config(tmp_path / "probe.yaml",
                          ports=[{"name": "x", "type": "afxdp", "interface": "probe0"}],
                          chains=[{"from": "x", "to": "x"}])
    proc = ns.exec(str(gpunfv), "run", str(config), "-q", "--duration", "0.01", check=False)
    if "this build has no afxdp port" in proc.stderr:
        pytest.skip("gpunfv was built without libxdp/libbpf")
    if "cannot bind an AF_XDP socket" in proc.stderr or "cannot register the UMEM" in proc.stderr:
        pytest.skip("AF_XDP not available here: " + proc.stderr.strip().splitlines()[-1])
    assert proc.returncode == 0, proc.stderr


def test_afxdp_router_chain_on_veth(netns, gpunfv, tmp_path):
    ns = netns
    afxdp_or_skip(gpunfv, ns, tmp_path)
    ns.veth("vsrc", "in0")
    ns.veth("p1", "p1cap")
    ns.veth("p2", "p2cap")
    config = write_config(
        tmp_path / "router.yaml",
        ports=[{"name": "in", "type": "afxdp", "interface": "in0", "tx": False},
               {"name": "p1", "type": "afxdp", "interface": "p1", "rx": False},
               {"name": "p2", "type": "afxdp", "interface": "p2", "rx": False}],
        nfs=[{"name": "r1", "type": "router", "routes": EXAMPLE_ROUTES}],
        chains=[{"from": "in", "path": ["r1"]}],
        settings={"batch_size": 256, "batches": 8})
    report, got, err = run_live(ns, gpunfv, tmp_path, config, "vsrc", {"p1": "p1cap", "p2": "p2cap"})
    assert "port in: afxdp in0" in err and "bind=" in err, err
    routes = load_routes(EXAMPLE_ROUTES)
    expected = {"p1": [], "p2": []}
    for _, frame in read_pcap(SIP_TRACE)[1]:
        verdict = reference_route(frame, routes)
        if verdict[0] == "fwd":
            expected[verdict[1]].append(verdict[2])
    assert report["ports"]["in"]["rx_packets"] == 4269
    for port in ("p1", "p2"):
        assert got[port] == expected[port], f"{port}: captured frames differ from the reference"


def test_afxdp_zero_copy_forward_through_shared_umem(netns, gpunfv, tmp_path):
    ns = netns
    afxdp_or_skip(gpunfv, ns, tmp_path)
    ns.veth("vsrc", "fwa")
    ns.veth("fwb", "bcap")
    config = tmp_path / "fwd.yaml"
    config.write_text(
        "ports:\n"
        "  - {name: a, type: afxdp, interface: fwa, tx: false}\n"
        "  - {name: b, type: afxdp, interface: fwb, rx: false, umem_from: a}\n"
        "forward:\n"
        "  - {from: a, to: b, mode: zerocopy, integrity: on, descriptor_batch: 8}\n")
    report, got, err = run_live(ns, gpunfv, tmp_path, config, "vsrc", {"b": "bcap"})
    fwd = report["forwards"][0]
    # The rx descriptor's UMEM address is posted on the other socket's tx ring: nothing copied.
    assert fwd["mode"] == "zerocopy" and fwd["copied_bytes"] == 0, fwd
    sent = [f for _, f in read_pcap(SIP_TRACE)[1]]
    assert report["ports"]["b"]["tx_packets"] == len(sent)
    assert got["b"] == sent


# --- DPDK virtual devices: no privileges, no namespace ----------------------------------------

EAL = ["--no-huge", "--no-pci", "-m", "256", "--no-shconf", "--no-telemetry", "--log-level=error"]


def dpdk_built(gpunfv, tmp_path) -> bool:
    config = write_config(tmp_path / "probe.yaml",
                          ports=[{"name": "x", "type": "dpdk", "device": "net_ring9", "eal": EAL}],
                          chains=[{"from": "x", "to": "x"}])
    proc = run_gpunfv(gpunfv, "run", config, "-q", "--duration", "0.01")
    return "this build has no DPDK port" not in proc.stderr


def pcap_vdev_forward(tmp_path, out, forward: str):
    """A configuration forwarding SIP_TRACE from net_pcap port a to net_pcap port b (written to
    `out`) by the given forward: entry, a YAML flow map."""
    config = tmp_path / "fwd.yaml"
    config.write_text(
        "ports:\n"
        f"  - {{name: a, type: dpdk, device: net_pcap0, args: 'rx_pcap={SIP_TRACE}', eal: {json.dumps(EAL)}}}\n"
        f"  - {{name: b, type: dpdk, device: net_pcap1, args: 'tx_pcap={out}'}}\n"
        "forward:\n"
        f"  - {forward}\n")
    return config


def test_dpdk_pcap_vdev_zero_copy_forward(gpunfv, tmp_path):
    if not dpdk_built(gpunfv, tmp_path):
        pytest.skip("gpunfv was built without libdpdk")
    out = tmp_path / "out.pcap"
    config = pcap_vdev_forward(tmp_path, out, "{from: a, to: b, integrity: on}")
    report = run_chain(gpunfv, config, "--duration", "2")
    assert report["forwards"][0]["mode"] == "zerocopy"
    assert report["forwards"][0]["copied_bytes"] == 0
    _, frames = read_pcap(SIP_TRACE)
    _, got = read_pcap(out)
    assert [f for _, f in got] == [f for _, f in frames]


def test_dpdk_pcap_vdev_burst_forward_counts_bytes_from_the_ports(gpunfv, tmp_path):
    """Without routing or integrity the forward hands whole mbuf bursts over; net_pcap counts
    bytes itself, so after checking those counts against the frames' lengths the forward reads no
    frame header for its byte counters: the ports' byte counts must still equal the trace's.
    Latency is sampled (one rx burst in latency_sample): timed + untimed = sent."""
    if not dpdk_built(gpunfv, tmp_path):
        pytest.skip("gpunfv was built without libdpdk")
    out = tmp_path / "out.pcap"
    config = pcap_vdev_forward(tmp_path, out, "{from: a, to: b, descriptor_batch: 32, latency_sample: 8}")
    report = run_chain(gpunfv, config, "--duration", "2")
    fwd = report["forwards"][0]
    assert fwd["mode"] == "zerocopy" and "handle bursts" in fwd["describe"], fwd
    assert fwd["byte_counts"] == "port counters", fwd
    _, frames = read_pcap(SIP_TRACE)
    total = sum(len(f) for _, f in frames)
    assert report["ports"]["a"]["rx_bytes"] == total and report["ports"]["b"]["tx_bytes"] == total, report["ports"]
    assert fwd["sent"] == len(frames) and fwd["latency_sample"] == 8, fwd
    timed, untimed = fwd["latency_ns"]["count"], fwd["latency_ns"]["untimed"]
    assert timed > 0 and untimed > 0 and timed + untimed == len(frames), fwd
    _, got = read_pcap(out)
    assert [f for _, f in got] == [f for _, f in frames]


def test_dpdk_pcap_vdev_burst_forward_without_byte_counts(gpunfv, tmp_path):
    """count_bytes: off: the forward reads no frame, packets are still counted exactly, and the
    report gives the bytes of that direction as not counted (null in the JSON, "-" and "bytes
    not counted" in the summary), never as a number."""
    if not dpdk_built(gpunfv, tmp_path):
        pytest.skip("gpunfv was built without libdpdk")
    out = tmp_path / "out.pcap"
    config = pcap_vdev_forward(tmp_path, out, "{from: a, to: b, count_bytes: off}")
    report_path = tmp_path / "fwd.report.json"
    proc = run_gpunfv(gpunfv, "run", config, "--report", report_path, "--duration", "2")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(report_path.read_text())
    check_accounting(report)
    fwd = report["forwards"][0]
    assert fwd["byte_counts"] == "off" and "bytes not counted" in fwd["describe"], fwd
    _, frames = read_pcap(SIP_TRACE)
    a, b = report["ports"]["a"], report["ports"]["b"]
    assert a["rx_packets"] == len(frames) and b["tx_packets"] == len(frames), report["ports"]
    assert a["rx_bytes"] is None and b["tx_bytes"] is None, report["ports"]
    assert "bytes not counted" in proc.stdout + proc.stderr, proc.stdout
    _, got = read_pcap(out)
    assert [f for _, f in got] == [f for _, f in frames]


def test_dpdk_pcap_vdev_router_chain_matches_pcap_ports(gpunfv, tmp_path):
    if not dpdk_built(gpunfv, tmp_path):
        pytest.skip("gpunfv was built without libdpdk")
    def config(kind: str) -> Path:
        out = {p: tmp_path / f"{kind}-{p}.pcap" for p in ("p1", "p2")}
        if kind == "pcap":
            ports = [{"name": "in", "type": "pcap", "rx": SIP_TRACE},
                     {"name": "p1", "type": "pcap", "tx": out["p1"]},
                     {"name": "p2", "type": "pcap", "tx": out["p2"]}]
        else:
            ports = [{"name": "in", "type": "dpdk", "device": "net_pcap0",
                      "args": f"rx_pcap={SIP_TRACE}", "eal": EAL},
                     {"name": "p1", "type": "dpdk", "device": "net_pcap1", "args": f"tx_pcap={out['p1']}"},
                     {"name": "p2", "type": "dpdk", "device": "net_pcap2", "args": f"tx_pcap={out['p2']}"}]
        return write_config(tmp_path / f"{kind}.yaml", ports=ports,
                            nfs=[{"name": "r1", "type": "router", "routes": EXAMPLE_ROUTES}],
                            chains=[{"from": "in", "path": ["r1"]}])
    ref = run_chain(gpunfv, config("pcap"))
    live = run_chain(gpunfv, config("dpdk"), "--duration", "2")
    assert live["ports"]["in"]["drops"] == ref["ports"]["in"]["drops"]
    for p in ("p1", "p2"):
        want = [f for _, f in read_pcap(tmp_path / f"pcap-{p}.pcap")[1]]
        got = [f for _, f in read_pcap(tmp_path / f"dpdk-{p}.pcap")[1]]
        assert want and got == want, p
