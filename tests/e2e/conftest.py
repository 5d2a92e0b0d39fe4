"""Shared helpers for the end-to-end tests: run the gpunfv binary, check its JSON report's
accounting, read pcap files, ask tshark.

The binary is $GPUNFV_BIN (the Makefile's `e2e` target sets it), else build/gpunfv.
Every test writes its configuration, route files and captures under pytest's tmp_path, with
absolute paths in the YAML.
"""
from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data"
TRACES = DATA / "traces"
ROUTER_DATA = DATA / "router"

# Every drop reason, "none" excluded: the framework's (src/core/drop_reason.h, in order), then
# each NF type's own (GPUNFV_NF_DROP_REASONS in its folder).
DROP_REASONS = (
    "truncated_l2", "truncated_l3", "bad_ip_version", "bad_ipv4_ihl", "bad_ip_length",
    "truncated_l4", "bad_tcp_offset", "oversize", "not_ipv4", "ipv4_bad_checksum", "no_route",
    "ttl_expired", "no_egress", "port_tx_error",
    "firewall_rule", "firewall_default", "nids_match",
    "esp_bad_icv", "esp_replay", "esp_unknown_spi", "esp_malformed", "ipsec_no_sa",
    "esp_seq_exhausted", "nf_queue_full", "nf_isolation_fault", "nf_process_lost","ingress_backpressure", "nic_rx_ring_full",
    "integrity_mismatch", "ttl_below_minimum",
)

RUN_TIMEOUT_S = 60


# --- clean-up: a test's tmp_path is removed when the test passes, kept when it fails ----------

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, "e2e_" + report.when, report)


@pytest.fixture(autouse=True)
def _remove_tmp_path_when_passed(request):
    path = request.getfixturevalue("tmp_path") if "tmp_path" in request.fixturenames else None
    yield
    call = getattr(request.node, "e2e_call", None)
    if path is not None and call is not None and call.passed:
        shutil.rmtree(path, ignore_errors=True)


def gpunfv_path() -> Path:
    return Path(os.environ.get("GPUNFV_BIN") or REPO / "build" / "gpunfv").resolve()


@pytest.fixture(scope="session")
def gpunfv() -> Path:
    path = gpunfv_path()
    if not path.is_file() or not os.access(path, os.X_OK):
        pytest.fail(f"gpunfv binary not found at {path} (build it, or set GPUNFV_BIN)")
    return path


def run_gpunfv(binary: Path, *args, timeout: float = RUN_TIMEOUT_S,
               cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Runs the binary with `args`; returns the finished process (text stdout/stderr)."""
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd)


# --- configuration files ---------------------------------------------------------------------

def _flow(value) -> str:
    """A value in YAML flow style (JSON quoting is valid YAML)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(str(value))


def write_config(path: Path, ports: list[dict], chains: list[dict], nfs: list[dict] | None = None,
                 settings: dict | None = None) -> Path:
    """Writes a configuration: one flow-style map per list item, so each item is one line."""
    lines = ["ports:"] + [f"  - {_flow(p)}" for p in ports]
    if nfs:
        lines += ["nfs:"] + [f"  - {_flow(n)}" for n in nfs]
    lines += ["chains:"] + [f"  - {_flow(c)}" for c in chains]
    if settings:
        lines += [f"settings: {_flow(settings)}"]
    path.write_text("\n".join(lines) + "\n")
    return path


# --- running a chain and checking its report ---------------------------------------------------

def check_accounting(report: dict, plugin_reasons: tuple[str, ...] = ()) -> None:
    """Every packet is transmitted or dropped with a reason (a built-in one, or one the run's
    plugins declare), and the counters add up."""
    reasons = set(DROP_REASONS) | set(plugin_reasons)
    assert report["accounting_ok"] is True, report
    ports, nfs = report["ports"], report["nfs"]
    sum_rx = sum_tx = sum_dropped = sum_forwarded = 0
    port_drops_by_reason: dict[str, int] = {}
    for name, p in ports.items():
        assert set(p["drops"]) <= reasons, (name, p["drops"])
        assert all(v > 0 for v in p["drops"].values()), (name, p["drops"])
        assert p["dropped"] == sum(p["drops"].values()), (name, p)
        assert p["rx_packets"] == p["forwarded"] + p["dropped"], (name, p)
        for r, v in p["drops"].items():
            port_drops_by_reason[r] = port_drops_by_reason.get(r, 0) + v
        sum_rx += p["rx_packets"]
        sum_tx += p["tx_packets"]
        sum_dropped += p["dropped"]
        sum_forwarded += p["forwarded"]
    assert sum_rx == sum_tx + sum_dropped, report
    assert sum_forwarded == sum_tx, report
    nf_drops_by_reason: dict[str, int] = {}
    for name, n in nfs.items():
        assert set(n["drops"]) <= reasons, (name, n["drops"])
        assert n["in"] == n["out"] + sum(n["drops"].values()), (name, n)
        for r, v in n["drops"].items():
            nf_drops_by_reason[r] = nf_drops_by_reason.get(r, 0) + v
    # An NF's drops are also counted against the packet's ingress port.
    for r, v in nf_drops_by_reason.items():
        assert port_drops_by_reason.get(r, 0) >= v, (r, port_drops_by_reason, nf_drops_by_reason)
    totals = report["totals"]
    assert totals == {"rx_packets": sum_rx, "tx_packets": sum_tx, "dropped": sum_dropped}, report
    # Every sent packet was timed, or sent untimed by a forward that samples latency (counted).
    assert report["latency_ns"]["count"] + report["latency_ns"]["untimed"] == sum_tx, report
    forwards = report.get("forwards", [])
    assert report["latency_ns"]["untimed"] == sum(f["latency_ns"].get("untimed", 0) for f in forwards), report


def run_chain(binary: Path, config: Path, *extra, timeout: float = RUN_TIMEOUT_S,
              plugin_reasons: tuple[str, ...] = ()) -> dict:
    """Runs `config` (CPU backend), expects exit 0, checks and returns the JSON report."""
    report_path = config.with_suffix(".report.json")
    proc = run_gpunfv(binary, "run", config, "--report", report_path, "-q", *extra,
                      timeout=timeout)
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert "Segmentation" not in proc.stderr and "Aborted" not in proc.stderr, proc.stderr
    report = json.loads(report_path.read_text())
    check_accounting(report, plugin_reasons)
    return report


def drops_outside_nfs(report: dict) -> dict[str, int]:
    """Drops counted against ports that no NF counted (classify and egress drops)."""
    out: dict[str, int] = {}
    for p in report["ports"].values():
        for r, v in p["drops"].items():
            out[r] = out.get(r, 0) + v
    for n in report["nfs"].values():
        for r, v in n["drops"].items():
            out[r] -= v
    return {r: v for r, v in out.items() if v}


# --- pcap files ---------------------------------------------------------------------------------

PCAP_MAGIC_US = 0xA1B2C3D4
PCAP_MAGIC_NS = 0xA1B23C4D


def read_pcap(path: Path) -> tuple[int, list[tuple[int, bytes]]]:
    """Reads a libpcap file (not pcapng): (link type, [(timestamp ns, frame bytes)])."""
    data = Path(path).read_bytes()
    assert len(data) >= 24, f"{path}: no pcap header"
    for endian in ("<", ">"):
        (magic,) = struct.unpack(endian + "I", data[:4])
        if magic in (PCAP_MAGIC_US, PCAP_MAGIC_NS):
            break
    else:
        raise AssertionError(f"{path}: not a libpcap file (magic {data[:4].hex()})")
    scale = 1000 if magic == PCAP_MAGIC_US else 1
    linktype = struct.unpack(endian + "I", data[20:24])[0] & 0x0FFFFFFF
    frames = []
    off = 24
    while off < len(data):
        assert off + 16 <= len(data), f"{path}: truncated record header at {off}"
        sec, frac, caplen, _wirelen = struct.unpack(endian + "IIII", data[off:off + 16])
        off += 16
        assert off + caplen <= len(data), f"{path}: truncated record at {off}"
        frames.append((sec * 1_000_000_000 + frac * scale, data[off:off + caplen]))
        off += caplen
    return linktype, frames


def pcap_is_nanosecond(path: Path) -> bool:
    head = Path(path).read_bytes()[:4]
    return head in (struct.pack("<I", PCAP_MAGIC_NS), struct.pack(">I", PCAP_MAGIC_NS))


# --- tshark -------------------------------------------------------------------------------------

def tshark_fields(path: Path, fields: list[str], display_filter: str | None = None,
                  prefs: tuple[str, ...] = ()) -> list[list[str]]:
    """One row per packet (matching `display_filter`), first occurrence of each field."""
    cmd = ["tshark", "-n", "-r", str(path)]
    for p in prefs:
        cmd += ["-o", p]
    if display_filter:
        cmd += ["-Y", display_filter]
    cmd += ["-T", "fields", "-E", "occurrence=f", "-E", "separator=\t"]
    for f in fields:
        cmd += ["-e", f]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stderr}"
    return [line.split("\t") for line in proc.stdout.splitlines()]


def tshark_count(path: Path, display_filter: str | None = None,
                 prefs: tuple[str, ...] = ()) -> int:
    return len(tshark_fields(path, ["frame.number"], display_filter, prefs))


# --- IPv4 helpers used by several tests ---------------------------------------------------------

def ones_sum(data: bytes) -> int:
    """Ones' complement sum of 16-bit big-endian words (0xFFFF over a correct IPv4 header)."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s > 0xFFFF:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def ipv4_header_checksum(header: bytes) -> int:
    """Checksum of an IPv4 header computed from scratch (its checksum field taken as 0)."""
    h = header[:10] + b"\0\0" + header[12:]
    return ~ones_sum(h) & 0xFFFF


def ip_to_int(text: str) -> int:
    a, b, c, d = (int(x) for x in text.split("."))
    return (a << 24) | (b << 16) | (c << 8) | d
