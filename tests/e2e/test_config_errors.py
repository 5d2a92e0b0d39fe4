"""Bad configurations, route files and captures: exit status 2 and one clear error line on
stderr that names the file (and line, where there is one). Also the command-line interface:
--help, run --help, and a bad --backend."""
from __future__ import annotations

import json
import random
import re
import shutil
import struct
from pathlib import Path

import pytest

from conftest import REPO, TRACES, check_accounting, run_gpunfv

DNS = TRACES / "dns.cap"  # small valid Ethernet capture
# `type: discard` is quoted throughout: unquoted, YAML reads null as a null value (see
# test_null_port_type_unquoted in test_generator.py).


def expect_config_error(gpunfv, config: Path, *needles: str) -> str:
    """Runs `config`; expects exit 2 and exactly one stderr line, "gpunfv: error: ...",
    containing every needle. Returns that line."""
    proc = run_gpunfv(gpunfv, "run", config, timeout=30)
    assert proc.returncode == 2, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one error line, got:\n{proc.stderr}"
    line = lines[0]
    assert line.startswith("gpunfv: error: "), line
    for needle in needles:
        assert needle in line, f"{needle!r} not in {line!r}"
    assert proc.stdout == "", proc.stdout  # no summary table for a run that never started
    return line


def config_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


def q(path) -> str:
    return '"' + str(path) + '"'


def test_yaml_syntax_error(gpunfv, tmp_path):
    config = config_file(tmp_path, f"""\
ports:
  - name: in
    type: pcap
   rx: {q(DNS)}
chains:
  - {{from: in}}
""")
    expect_config_error(gpunfv, config, f"{config}:4", "YAML")


def test_unknown_nf_type_lists_every_registered_type(gpunfv, tmp_path):
    """Each NF registers itself from its own source file; the binary must hold all five."""
    config = config_file(tmp_path, f"""\
ports:
  - {{name: in, type: pcap, rx: {q(DNS)}}}
nfs:
  - {{name: x, type: nat}}
chains:
  - {{from: in, path: [x]}}
""")
    expect_config_error(gpunfv, config, f"{config}:4", "unknown NF type 'nat'",
                        "known: firewall, ipsec, nids, router, ttl_filter")
    version = run_gpunfv(gpunfv, "version", timeout=30)
    assert "NF types: firewall, ipsec, nids, router, ttl_filter" in version.stdout, version.stdout


def test_yaml_unclosed_flow_map(gpunfv, tmp_path):
    config = config_file(tmp_path, f"""\
ports:
  - {{name: in, type: pcap, rx: {q(DNS)}
  - {{name: out, type: discard}}
chains:
  - {{from: in, to: out}}
""")
    line = expect_config_error(gpunfv, config, "YAML")
    assert re.search(re.escape(str(config)) + r":[23]\b", line), line


def test_unknown_top_level_key(gpunfv, tmp_path):
    config = config_file(tmp_path, f"""\
ports:
  - {{name: in, type: pcap, rx: {q(DNS)}}}
  - {{name: out, type: discard}}
chains:
  - {{from: in, to: out}}
setings: {{batch_size: 64}}
""")
    expect_config_error(gpunfv, config, f"{config}:6", "setings")


@pytest.mark.parametrize("key, value", [("latency_bound_us", "0"), ("latency_bound_us", "-5"),
                                        ("batch_deadline_us", "0")])
def test_bad_chain_latency_keys(gpunfv, tmp_path, key, value):
    config = config_file(tmp_path, f"""\
ports:
  - {{name: in, type: pcap, rx: {q(DNS)}}}
  - {{name: out, type: discard}}
chains:
  - from: in
    to: out
    {key}: {value}
""")
    expect_config_error(gpunfv, config, f"{config}:7", key)


@pytest.mark.parametrize("settings, needle", [
    ("{gpu_pipeline: fused, scheduler: fair}", "needs scheduler: unco or gnet"),
    ("{gpu_pipeline: fused, scheduler: temporal}", "needs scheduler: unco or gnet"),
    ("{gpu_pipeline: persistent, scheduler: temporal}", "needs scheduler: unco or gnet"),
    ("{gpu_pipeline: pipelined}", "gpu_pipeline must be staged, fused or persistent"),
    ("{gpu_zero_copy_packets: 256}", "applies to gpu_pipeline: fused or persistent"),
    ("{gpu_pipeline: persistent, gpu_graphs: true}", "gpu_graphs applies to gpu_pipeline: fused"),
    ("{gpu_pipeline: fused, gpu_persistent_packets: 256}", "applies to gpu_pipeline: persistent"),
    ("{gpu_pipeline: persistent, gpu_persistent_packets: 0}", "out of range [1, 1048576]"),
    ("{gpu_graphs: true}", "gpu_graphs applies to gpu_pipeline: fused"),
    ("{gpu_pipeline: staged, gpu_graphs: true}", "gpu_graphs applies to gpu_pipeline: fused"),
    ("{nf_process_timeout_ms: 10}", "out of range [100, 3600000]"),
    ("{gpu_issue_threads: 2}", "gpu_issue_threads applies to gpu_pipeline: fused without gpu_graphs"),
    ("{gpu_pipeline: persistent, gpu_issue_threads: 2}", "gpu_issue_threads applies to gpu_pipeline: fused"),
    ("{gpu_pipeline: fused, gpu_graphs: true, gpu_issue_threads: 2}", "without gpu_graphs"),
    ("{gpu_pipeline: fused, gpu_issue_threads: 9}", "out of range [1, 8]"),
])
def test_bad_settings(gpunfv, tmp_path, settings, needle):
    config = config_file(tmp_path, f"""\
ports:
  - {{name: in, type: pcap, rx: {q(DNS)}}}
  - {{name: out, type: discard}}
chains:
  - {{from: in, to: out}}
settings: {settings}
""")
    expect_config_error(gpunfv, config, f"{config}:6", needle)


@pytest.mark.parametrize("settings, needles", [
    ("{scheduler: unco, gpu_pipeline: fused, gpu_graphs: true}", ("gpu_graphs",)),
    ("{scheduler: unco, gpu_pipeline: persistent}", ("gpu_pipeline: persistent",)),
])
def test_gpu_persistent_kernel_settings_beside_a_gpuring_port_refused(gpunfv, tmp_path, settings, needles):
    # Refused at load, before any CUDA call: holds on machines without a GPU too.
    config = config_file(tmp_path, f"""\
ports:
  - name: gr
    type: gpuring
    source: {{type: generator, count: 10}}
chains:
  - {{from: gr, path: []}}
settings: {settings}
""")
    expect_config_error(gpunfv, config, f"{config}:7", *needles, "gpuring port 'gr'")


def test_unknown_port_type(gpunfv, tmp_path):
    config = config_file(tmp_path, f"""\
ports:
  - {{name: in, type: pcap, rx: {q(DNS)}}}
  - name: out
    type: nul
chains:
  - {{from: in, to: out}}
""")
    expect_config_error(gpunfv, config, f"{config}:4", "nul")


def test_missing_rx_file(gpunfv, tmp_path):
    missing = tmp_path / "no-such-capture.pcap"
    config = config_file(tmp_path, f"""\
ports:
  - {{name: out, type: discard}}
  - {{name: in, type: pcap, rx: {q(missing)}}}
chains:
  - {{from: in, to: out}}
""")
    expect_config_error(gpunfv, config, f"{config}:3", str(missing))


def test_missing_rx_file_relative_to_config(gpunfv, tmp_path):
    config = config_file(tmp_path, """\
ports:
  - {name: in, type: pcap, rx: traces/absent.pcap}
  - {name: out, type: discard}
chains:
  - {from: in, to: out}
""")
    expect_config_error(gpunfv, config, f"{config}:2", "absent.pcap")


def test_unknown_nf_in_chain(gpunfv, tmp_path):
    routes = tmp_path / "r.routes"
    routes.write_text("10.0.0.0/8 out\n")
    config = config_file(tmp_path, f"""\
ports:
  - {{name: in, type: pcap, rx: {q(DNS)}}}
  - {{name: out, type: discard}}
nfs:
  - {{name: r1, type: router, routes: {q(routes)}}}
chains:
  - from: in
    path: [r1,
           r2]
""")
    expect_config_error(gpunfv, config, f"{config}:9", "r2")


def test_unknown_port_in_chain(gpunfv, tmp_path):
    config = config_file(tmp_path, f"""\
ports:
  - {{name: in, type: pcap, rx: {q(DNS)}}}
  - {{name: out, type: discard}}
chains:
  - from: in
    to: outt
""")
    expect_config_error(gpunfv, config, f"{config}:6", "outt")


def test_unknown_ingress_port_in_chain(gpunfv, tmp_path):
    config = config_file(tmp_path, f"""\
ports:
  - {{name: in, type: pcap, rx: {q(DNS)}}}
  - {{name: out, type: discard}}
chains:
  - {{to: out,
     from: inn}}
""")
    expect_config_error(gpunfv, config, f"{config}:6", "inn")


def test_duplicate_port_name(gpunfv, tmp_path):
    config = config_file(tmp_path, f"""\
ports:
  - {{name: in, type: pcap, rx: {q(DNS)}}}
  - {{name: out, type: discard}}
  - {{name: out, type: discard}}
chains:
  - {{from: in, to: out}}
""")
    expect_config_error(gpunfv, config, f"{config}:4", "duplicate", "out")


def test_duplicate_settings_key(gpunfv, tmp_path):
    config = config_file(tmp_path, f"""\
ports:
  - {{name: in, type: pcap, rx: {q(DNS)}}}
  - {{name: out, type: discard}}
chains:
  - {{from: in, to: out}}
settings:
  batch_size: 64
  batches: 8
  batch_size: 128
""")
    expect_config_error(gpunfv, config, f"{config}:9", "duplicate key 'batch_size'", "line 7")


def test_duplicate_key_in_a_port(gpunfv, tmp_path):
    config = config_file(tmp_path, f"""\
ports:
  - {{name: in, type: pcap, rx: {q(DNS)}}}
  - {{name: out, type: discard,
     name: other}}
chains:
  - {{from: in, to: out}}
""")
    expect_config_error(gpunfv, config, f"{config}:4", "duplicate key 'name'", "line 3")


def two_port_config(tmp_path: Path, extra_port: str, nf: str = "") -> Path:
    """`in` reads a copy of DNS (a test may name it as an output) and, through `nfs:` when
    given, feeds `out`; `extra_port` is line 4."""
    shutil.copy(DNS, tmp_path / "in.cap")
    chain = "{from: in, path: [nf], to: out}" if nf else "{from: in, to: out}"
    nfs = f"nfs:\n  - {nf}\n" if nf else ""
    return config_file(tmp_path, f"""\
ports:
  - {{name: in, type: pcap, rx: {q(tmp_path / "in.cap")}}}
  - {{name: out, type: pcap, tx: {q(tmp_path / "out.pcap")}}}
  - {extra_port}
{nfs}chains:
  - {chain}
""")


def test_tx_over_the_config_file(gpunfv, tmp_path):
    config = two_port_config(tmp_path, "{name: o2, type: pcap, tx: config.yaml}")
    before = config.read_text()
    expect_config_error(gpunfv, config, f"{config}:4", "port 'o2'", "is also the configuration file")
    assert config.read_text() == before  # checked before the capture is opened (truncated)


def test_tx_over_an_rx_capture(gpunfv, tmp_path):
    capture = tmp_path / "in.cap"
    config = two_port_config(tmp_path, "{name: o2, type: pcap, tx: in.cap}")
    expect_config_error(gpunfv, config, f"{config}:4", str(capture), "is also the rx capture of port 'in'",
                        f"{config}:2")
    assert capture.read_bytes() == DNS.read_bytes()


def test_two_ports_writing_one_file(gpunfv, tmp_path):
    # The same file spelled relative to the config and absolute.
    config = two_port_config(tmp_path, "{name: o2, type: pcap, tx: ./out.pcap}")
    expect_config_error(gpunfv, config, f"{config}:4", "out.pcap", "is also written as the tx capture of port 'out'")


def test_tx_over_a_route_file(gpunfv, tmp_path):
    routes = tmp_path / "r.routes"
    routes.write_text("10.0.0.0/8 out\n")
    config = two_port_config(tmp_path, f"{{name: o2, type: pcap, tx: {q(routes)}}}",
                             nf=f"{{name: nf, type: router, routes: {{file: {q(routes)}}}}}")
    expect_config_error(gpunfv, config, f"{config}:4", "is also the route file of NF 'nf'", f"{config}:6")
    assert routes.read_text() == "10.0.0.0/8 out\n"


def test_alert_log_over_a_rule_file(gpunfv, tmp_path):
    rules = tmp_path / "a.rules"
    rules.write_text('alert tcp any any -> any any (msg:"x"; content:"GET"; sid:1;)\n')
    config = two_port_config(tmp_path, "{name: o2, type: discard}",
                             nf=f"{{name: nf, type: nids, rules: [{q(rules)}], alerts: {q(rules)}}}")
    expect_config_error(gpunfv, config, f"{config}:6", "the alert log of NF 'nf'", "is also a rule file")


def test_missing_route_file_names_the_config_line(gpunfv, tmp_path):
    routes = tmp_path / "absent.routes"
    config = two_port_config(tmp_path, "{name: o2, type: discard}",
                             nf=f"{{name: nf, type: router, routes: {q(routes)}}}")
    expect_config_error(gpunfv, config, f"{config}:6", f"{routes}: cannot open route file")


def test_missing_rule_file_names_the_config_line(gpunfv, tmp_path):
    rules = tmp_path / "absent.rules"
    config = two_port_config(tmp_path, "{name: o2, type: discard}",
                             nf=f"{{name: nf, type: firewall, rules: {q(rules)}}}")
    expect_config_error(gpunfv, config, f"{config}:6", f"{rules}: cannot open rule file")


def router_config(tmp_path: Path, routes_yaml: str) -> Path:
    return config_file(tmp_path, f"""\
ports:
  - {{name: in, type: pcap, rx: {q(DNS)}}}
  - {{name: p1, type: discard}}
  - {{name: p2, type: discard}}
nfs:
  - {{name: r1, type: router, routes: {routes_yaml}}}
chains:
  - {{from: in, path: [r1]}}
""")


@pytest.mark.parametrize("bad_line, needle", [
    ("10.0.0.0/33 p1", "10.0.0.0/33"),           # bad length
    ("10.0.0.1/8 p1", "host bits"),              # host bits set
    ("10.0.0 p1", "10.0.0"),                     # not a prefix
    ("10.1.0.0/16", "next hop"),                 # missing next hop
    ("10.1.0.0/16 p1 p2", "p2"),                 # extra field
    ("10.0.0.0/8 p2", "duplicate"),              # repeats line 2
])
def test_route_file_bad_line(gpunfv, tmp_path, bad_line, needle):
    routes = tmp_path / "routes-file"
    routes.write_text(f"# test table\n10.0.0.0/8 p1\n\n{bad_line}\n192.168.0.0/16 p2\n")
    expect_config_error(gpunfv, router_config(tmp_path, q(routes)), f"{routes}:4", needle)


def test_route_file_missing(gpunfv, tmp_path):
    routes = tmp_path / "absent.routes"
    expect_config_error(gpunfv, router_config(tmp_path, q(routes)), str(routes))


def test_route_next_hop_unknown_port(gpunfv, tmp_path):
    routes = tmp_path / "routes-file"
    routes.write_text("10.0.0.0/8 p1\n192.168.0.0/16 p3\n")
    expect_config_error(gpunfv, router_config(tmp_path, q(routes)), f"{routes}:2", "p3")


def test_route_next_hop_without_tx(gpunfv, tmp_path):
    routes = tmp_path / "routes-file"
    routes.write_text("10.0.0.0/8 in\n")
    expect_config_error(gpunfv, router_config(tmp_path, q(routes)), str(tmp_path / "config.yaml"),
                        "'in'")


def test_spread_unknown_port(gpunfv, tmp_path):
    prefixes = tmp_path / "prefixes.txt"
    prefixes.write_text("10.0.0.0/8\n")
    config = router_config(tmp_path, f"{{file: {q(prefixes)}, spread: [p1, p9]}}")
    expect_config_error(gpunfv, config, f"{config}:6", "p9")


def test_non_ethernet_capture(gpunfv, tmp_path):
    from scapy.all import IP, UDP, raw

    capture = tmp_path / "raw-ip.pcap"
    packet = raw(IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1, dport=2) / b"raw")
    # libpcap header with link type 101 (LINKTYPE_RAW: bare IP packets, no Ethernet header).
    capture.write_bytes(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 101) +
                        struct.pack("<IIII", 1, 0, len(packet), len(packet)) + packet)
    config = config_file(tmp_path, f"""\
ports:
  - {{name: out, type: discard}}
  - {{name: in, type: pcap, rx: {q(capture)}}}
chains:
  - {{from: in, to: out}}
""")
    expect_config_error(gpunfv, config, f"{config}:3", str(capture), "link type")


@pytest.mark.parametrize("preload", [True, False])
def test_corrupt_capture(gpunfv, tmp_path, preload):
    capture = tmp_path / "corrupt.pcap"
    capture.write_bytes(random.Random(7).randbytes(4096))
    config = config_file(tmp_path, f"""\
ports:
  - {{name: in, type: pcap, rx: {q(capture)}, preload: {str(preload).lower()}}}
  - {{name: out, type: discard}}
chains:
  - {{from: in, to: out}}
""")
    expect_config_error(gpunfv, config, f"{config}:2", str(capture))


def test_garbage_after_valid_capture_header(gpunfv, tmp_path):
    """A valid libpcap header followed by random bytes: the first record claims an absurd
    length. Preloaded (the default), that is a configuration error naming the file."""
    capture = tmp_path / "garbage.pcap"
    capture.write_bytes(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1) +
                        random.Random(3).randbytes(3000))
    config = config_file(tmp_path, f"""\
ports:
  - {{name: in, type: pcap, rx: {q(capture)}}}
  - {{name: out, type: discard}}
chains:
  - {{from: in, to: out}}
""")
    expect_config_error(gpunfv, config, f"{config}:2", str(capture))


def test_garbage_after_valid_capture_header_streamed(gpunfv, tmp_path):
    """Streamed (preload: false), the bad record is met mid-run: the port stops with a warning
    naming the file, and the run ends normally with what was read (nothing)."""
    capture = tmp_path / "garbage.pcap"
    capture.write_bytes(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1) +
                        random.Random(3).randbytes(3000))
    config = config_file(tmp_path, f"""\
ports:
  - {{name: in, type: pcap, rx: {q(capture)}, preload: false}}
  - {{name: out, type: discard}}
chains:
  - {{from: in, to: out}}
settings: {{batch_size: 16, batches: 2}}  # streamed, slots are 64 KiB (snap length)
""")
    report_path = tmp_path / "report.json"
    proc = run_gpunfv(gpunfv, "run", config, "-q", "--report", report_path, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert str(capture) in proc.stderr and "stopped" in proc.stderr, proc.stderr
    report = json.loads(report_path.read_text())
    check_accounting(report)
    assert report["ports"]["in"]["rx_packets"] == 0


def test_truncated_capture_record(gpunfv, tmp_path):
    """A capture whose last record is cut mid-frame (a copy stopped early): a clear error."""
    capture = tmp_path / "cut.pcap"
    data = DNS.read_bytes()
    capture.write_bytes(data[:len(data) - 10])
    config = config_file(tmp_path, f"""\
ports:
  - {{name: in, type: pcap, rx: {q(capture)}}}
  - {{name: out, type: discard}}
chains:
  - {{from: in, to: out}}
""")
    expect_config_error(gpunfv, config, f"{config}:2", str(capture))


@pytest.mark.parametrize("rate", ["10 furlongs", "fast", "-5Mpps", "10Mppx"])
def test_generator_bad_rate(gpunfv, tmp_path, rate):
    config = config_file(tmp_path, f"""\
ports:
  - name: gen
    type: generator
    count: 10
    rate: "{rate}"
  - {{name: out, type: discard}}
chains:
  - {{from: gen, to: out}}
""")
    expect_config_error(gpunfv, config, f"{config}:5", rate)


def test_generator_bad_size(gpunfv, tmp_path):
    config = config_file(tmp_path, """\
ports:
  - {name: gen, type: generator, count: 10,
     size: 10-20}
  - {name: out, type: discard}
chains:
  - {from: gen, to: out}
""")
    expect_config_error(gpunfv, config, f"{config}:3", "frame size")


def test_scheduler_fold_not_a_boolean(gpunfv, tmp_path):
    config = config_file(tmp_path, """\
ports:
  - {name: gen, type: generator, count: 10}
  - {name: out, type: discard}
chains:
  - {from: gen, to: out}
settings:
  scheduler: gnet
  sched_fold_remainder: sometimes
""")
    expect_config_error(gpunfv, config, f"{config}:8", "'sometimes' is not a boolean")


def test_nonexistent_config_file(gpunfv, tmp_path):
    missing = tmp_path / "absent.yaml"
    expect_config_error(gpunfv, missing, str(missing))


def test_config_is_a_directory(gpunfv, tmp_path):
    expect_config_error(gpunfv, tmp_path, str(tmp_path))


def test_tx_folder_missing(gpunfv, tmp_path):
    out = tmp_path / "no-such-dir" / "out.pcap"
    config = config_file(tmp_path, f"""\
ports:
  - {{name: in, type: pcap, rx: {q(DNS)}}}
  - {{name: out, type: pcap, tx: {q(out)}}}
chains:
  - {{from: in, to: out}}
""")
    expect_config_error(gpunfv, config, f"{config}:3", "no-such-dir")


# --- command line -------------------------------------------------------------------------------

def test_help(gpunfv):
    proc = run_gpunfv(gpunfv, "--help", timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert "run" in proc.stdout


def test_help_examples_name_files_that_exist(gpunfv):
    """Every configuration or table file an --help example names is in the repository."""
    named = set()
    for words in ([], ["run"], ["profile"], ["report"], ["ctl"]):
        proc = run_gpunfv(gpunfv, *words, "--help", timeout=30)
        assert proc.returncode == 0, proc.stderr
        examples = proc.stdout.split("Examples:")[-1]
        named |= set(re.findall(r"\b((?:examples|data)/[\w./-]+)", examples))
    assert any(n.startswith("examples/") for n in named), named
    for path in named:
        assert (REPO / path).exists(), path


def test_run_help(gpunfv):
    proc = run_gpunfv(gpunfv, "run", "--help", timeout=30)
    assert proc.returncode == 0, proc.stderr
    for option in ("--backend", "--report", "--duration"):
        assert option in proc.stdout, option


def test_bad_backend(gpunfv, tmp_path):
    config = config_file(tmp_path, f"""\
ports:
  - {{name: in, type: pcap, rx: {q(DNS)}}}
  - {{name: out, type: discard}}
chains:
  - {{from: in, to: out}}
""")
    proc = run_gpunfv(gpunfv, "run", config, "--backend", "tpu", timeout=30)
    assert proc.returncode == 2, proc
    assert "tpu" in proc.stderr and "--backend" in proc.stderr, proc.stderr


def test_no_subcommand(gpunfv):
    proc = run_gpunfv(gpunfv, timeout=30)
    assert proc.returncode == 2, proc


def test_unknown_option(gpunfv, tmp_path):
    proc = run_gpunfv(gpunfv, "run", tmp_path / "x.yaml", "--no-such-option", timeout=30)
    assert proc.returncode == 2, proc


@pytest.mark.parametrize("name,value", [("GPUNFV_DEBUG_SKIP_COLLECT", "yes"),
                                        ("GPUNFV_DEBUG_REPLAN_MS", "10ms"),
                                        ("GPUNFV_NIDS_LANES", "12")])
def test_bad_debug_switch(gpunfv, tmp_path, monkeypatch, name, value):
    """A debug switch with a value it does not take stops the run before it starts
    (src/core/debug_switches.h), naming the variable and the value."""
    config = config_file(tmp_path, f"""\
ports:
  - {{name: in, type: pcap, rx: {q(DNS)}}}
  - {{name: out, type: "discard"}}
chains:
  - {{from: in, to: out}}
""")
    monkeypatch.setenv(name, value)
    expect_config_error(gpunfv, config, name, value)
