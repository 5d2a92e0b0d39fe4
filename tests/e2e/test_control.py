"""The control socket (settings.control, `gpunfv ctl`) and SIGHUP on live runs: table updates
are applied between batches with every packet accounted for and counted against exactly one
table version; bad updates and malformed requests are refused with their reason and leave the
run and its live tables as they were.

Each run is a live generator stopped through the socket (`ctl stop`), so the test waits for
conditions (traffic seen on a port), never for a time.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import check_accounting, read_pcap, run_gpunfv, write_config

WAIT_S = 120  # how long a condition may take on a loaded machine before the test gives up

ACCEPT_UDP = "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x11/0xFF 0x0000/0x0000 accept\n"
DROP_UDP_TO_10 = "@0.0.0.0/0 10.0.0.0/8 0 : 65535 0 : 65535 0x11/0xFF 0x0000/0x0000 drop\n"


@pytest.fixture
def sock_dir():
    # A Unix socket path holds 107 bytes: pytest's tmp_path may be longer.
    d = Path(tempfile.mkdtemp(prefix="gn-ctl-"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


RUNS: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def _end_runs_left_behind():
    """A failed test leaves its run going: end it (the live generator never ends by itself)."""
    yield
    while RUNS:
        proc = RUNS.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


class LiveRun:
    """gpunfv running a configuration in the background, spoken to through its socket."""

    def __init__(self, binary: Path, config: Path, report: Path, sock: Path, backend: str = "cpu"):
        self.binary, self.report_path, self.sock = binary, report, sock
        self.proc = subprocess.Popen([str(binary), "run", str(config), "-q", "--report", str(report),
                                      "--backend", backend],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        RUNS.append(self.proc)
        self.wait_for(lambda: self.sock.exists(), "the control socket")

    def ctl(self, *words, nf: str | None = None) -> tuple[int, dict, str]:
        args = ["ctl", self.sock, *words] + (["--nf", nf] if nf else [])
        r = run_gpunfv(self.binary, *args, timeout=WAIT_S)
        return r.returncode, json.loads(r.stdout) if r.stdout.strip() else {}, r.stderr

    def port_tx(self, name: str) -> int:
        rc, j, err = self.ctl("stats")
        assert rc == 0, err
        return {p["name"]: p["tx_packets"] for p in j["ports"]}[name]

    def wait_for(self, cond, what: str) -> None:
        deadline = time.monotonic() + WAIT_S
        while not cond():
            if self.proc.poll() is not None:
                pytest.fail(f"gpunfv ended while waiting for {what}: {self.proc.stderr.read()}")
            if time.monotonic() > deadline:
                self.proc.kill()
                pytest.fail(f"no {what} in {WAIT_S} s")
            time.sleep(0.05)

    def stop(self) -> dict:
        rc, j, err = self.ctl("stop")
        assert rc == 0 and j["stopping"] is True, err
        out, err = self.proc.communicate(timeout=WAIT_S)
        assert self.proc.returncode == 0, err
        report = json.loads(self.report_path.read_text())
        check_accounting(report)
        return report


def gpu_backend_usable(binary: Path) -> bool:
    """A GPU, a CUDA build, and not the sanitizer build (which has no CUDA backend)."""
    return (Path("/dev/nvidia0").exists() and not os.environ.get("GPUNFV_SANITIZED")
            and "CUDA backend: yes" in run_gpunfv(binary, "version").stdout)


# The GPU path differs (double-buffered device tables written by a scatter kernel, device rule
# sets freed after their streams): the same checks run there on a GPU machine.
BACKENDS = ["cpu", "gpu"]


def skip_unless_backend(binary: Path, backend: str) -> None:
    if backend == "gpu" and not gpu_backend_usable(binary):
        pytest.skip("no usable GPU backend here")


def router_config(tmp_path: Path, sock: Path, routes: str, fw_rules: str | None = None) -> Path:
    (tmp_path / "r.routes").write_text(routes)
    nfs = [{"name": "r1", "type": "router", "routes": str(tmp_path / "r.routes")}]
    path = ["r1"]
    if fw_rules is not None:
        (tmp_path / "fw.rules").write_text(fw_rules)
        nfs.insert(0, {"name": "fw", "type": "firewall", "rules": str(tmp_path / "fw.rules"),
                       "default": "accept"})
        path = ["fw", "r1"]
    return write_config(
        tmp_path / "c.yaml",
        ports=[{"name": "gen", "type": "generator", "rate": "100kpps", "size": 64, "flows": 64,
                "duration": 3600, "dst_from": "r1"},
               {"name": "p1", "type": "discard"}, {"name": "p2", "type": "discard"}],
        nfs=nfs, chains=[{"from": "gen", "path": path}],
        settings={"control": str(sock), "batch_size": 256})


def versions(report: dict, nf: str) -> list[dict]:
    return report["nfs"][nf]["table_versions"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_route_replace_moves_traffic_with_exact_accounting(gpunfv, tmp_path, sock_dir, backend):
    skip_unless_backend(gpunfv, backend)
    sock = sock_dir / "s"
    run = LiveRun(gpunfv, router_config(tmp_path, sock, "10.0.0.0/8 p1\n"), tmp_path / "r.json", sock,
                  backend)
    run.wait_for(lambda: run.port_tx("p1") > 0, "traffic on p1")
    rc, j, err = run.ctl("routes", "replace", "10.0.0.0/8", "p2")
    assert rc == 0, err
    assert j["table_version"] == 2 and j["routes"] == 1
    run.wait_for(lambda: run.port_tx("p2") > 0, "traffic on p2")
    report = run.stop()
    ports = report["ports"]
    assert ports["gen"]["dropped"] == 0
    assert ports["p1"]["tx_packets"] + ports["p2"]["tx_packets"] == ports["gen"]["rx_packets"]
    v = versions(report, "r1")
    assert [x["version"] for x in v] == [1, 2]
    assert v[1]["change"] == "routes replace 10.0.0.0/8 p2"
    # Version 1 sent everything to p1, version 2 everything to p2: each packet saw one table.
    assert v[0]["packets"] == ports["p1"]["tx_packets"] > 0
    assert v[1]["packets"] == ports["p2"]["tx_packets"] > 0
    assert report["nfs"]["r1"]["in"] == v[0]["packets"] + v[1]["packets"]


def test_route_add_and_delete_restore_the_covering_route(gpunfv, tmp_path, sock_dir):
    sock = sock_dir / "s"
    run = LiveRun(gpunfv, router_config(tmp_path, sock, "10.0.0.0/8 p1\n"), tmp_path / "r.json", sock)
    run.wait_for(lambda: run.port_tx("p1") > 0, "traffic on p1")
    assert run.ctl("routes", "add", "10.0.0.0/9", "p2", "10.128.0.0/9", "p2")[0] == 0
    tx1 = run.port_tx("p1")
    run.wait_for(lambda: run.port_tx("p2") > 0, "traffic on p2")
    rc, j, _ = run.ctl("routes", "del", "10.0.0.0/9", "10.128.0.0/9")
    assert rc == 0 and j["routes"] == 1
    run.wait_for(lambda: run.port_tx("p1") > tx1, "traffic on p1 again")
    report = run.stop()
    v = versions(report, "r1")
    assert [x["entries"] for x in v] == [1, 3, 1]
    assert v[1]["packets"] == report["ports"]["p2"]["tx_packets"]
    assert v[0]["packets"] + v[2]["packets"] == report["ports"]["p1"]["tx_packets"]
    assert v[2]["packets"] > 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_route_updates_reach_a_router_in_an_nf_process(gpunfv, tmp_path, sock_dir, backend):
    """A table command for an NF in an NF process is performed there, as it is in gpunfv run:
    routes added and deleted by command and reloaded on SIGHUP move traffic, refusals keep the
    table, and every version is counted in the process's report."""
    skip_unless_backend(gpunfv, backend)
    sock = sock_dir / "s"
    config = router_config(tmp_path, sock, "10.0.0.0/8 p1\n")
    config.write_text(config.read_text().replace('type: "router",', 'type: "router", process: vendor-r,'))
    assert "process: vendor-r" in config.read_text()
    run = LiveRun(gpunfv, config, tmp_path / "r.json", sock, backend)
    run.wait_for(lambda: run.port_tx("p1") > 0, "traffic on p1")
    rc, j, err = run.ctl("routes", "add", "10.0.0.0/9", "p2", "10.128.0.0/9", "p2", nf="r1")
    assert rc == 0 and j["nf"] == "r1" and j["table_version"] == 2 and j["routes"] == 3, (j, err)
    run.wait_for(lambda: run.port_tx("p2") > 0, "traffic on p2")
    # Refused in the process with gpunfv run's reasons; the table stays as it is.
    for words, why in [(("routes", "add", "10.9.0.0/16", "nope"), "unknown port 'nope'"),
                       (("routes", "add", "10.9.0.0/16", "gen"), "no tx side"),
                       (("routes", "del", "10.9.0.0/16"), "no such route"),
                       (("firewall", "replace", "x.rules"), "no firewall NF")]:
        rc, j, _ = run.ctl(*words)
        assert rc == 1 and why in j["error"], (words, j)
    rc, j, err = run.ctl("routes", "del", "10.0.0.0/9", "10.128.0.0/9")  # the one router: no name
    assert rc == 0 and j["routes"] == 1, (j, err)
    tx = run.port_tx("p1")
    run.wait_for(lambda: run.port_tx("p1") > tx, "traffic on p1 again")
    (tmp_path / "r.routes").write_text("10.0.0.0/8 p2\n")
    tx = run.port_tx("p2")
    os.kill(run.proc.pid, signal.SIGHUP)
    run.wait_for(lambda: run.port_tx("p2") > tx, "traffic on p2 after SIGHUP")
    report = run.stop()
    ports = report["ports"]
    assert ports["gen"]["dropped"] == 0
    assert ports["p1"]["tx_packets"] + ports["p2"]["tx_packets"] == ports["gen"]["rx_packets"]
    v = versions(report, "r1")
    assert [x["entries"] for x in v] == [1, 3, 1, 1], v
    assert v[3]["change"].startswith("reload ")
    assert report["nfs"]["r1"]["in"] == sum(x["packets"] for x in v)
    assert report["processes"]["vendor-r"]["restarts"] == 0


def test_malformed_route_file_is_refused_and_the_live_table_kept(gpunfv, tmp_path, sock_dir):
    sock = sock_dir / "s"
    run = LiveRun(gpunfv, router_config(tmp_path, sock, "10.0.0.0/8 p1\n"), tmp_path / "r.json", sock)
    run.wait_for(lambda: run.port_tx("p1") > 0, "traffic on p1")
    bad = tmp_path / "bad.routes"
    bad.write_text("10.0.0.0/8 p2\n10.1.0.0/33 p2\n")
    rc, j, err = run.ctl("routes", "replace", str(bad))
    assert rc == 1
    assert j["ok"] is False and f"{bad}:2" in j["error"], j
    assert "error" in err
    # Other refusals: an unknown port, a delete of a missing route, a bad prefix, no such NF.
    for words, why in [(("routes", "add", "10.9.0.0/16", "nope"), "unknown port 'nope'"),
                       (("routes", "del", "10.9.0.0/16"), "no such route"),
                       (("routes", "add", "10.9.0.1/16", "p2"), "not a prefix"),
                       (("firewall", "replace", str(bad)), "no firewall NF"),
                       (("routes", "add"), "usage"),
                       (("frobnicate",), "unknown command")]:
        rc, j, _ = run.ctl(*words)
        assert rc == 1 and why in j["error"], (words, j)
    tx = run.port_tx("p1")
    run.wait_for(lambda: run.port_tx("p1") > tx, "more traffic on p1")
    report = run.stop()
    assert report["ports"]["p2"]["tx_packets"] == 0
    assert [x["version"] for x in versions(report, "r1")] == [1]


def test_malformed_requests_get_errors_and_the_run_goes_on(gpunfv, tmp_path, sock_dir):
    sock = sock_dir / "s"
    run = LiveRun(gpunfv, router_config(tmp_path, sock, "10.0.0.0/8 p1\n"), tmp_path / "r.json", sock)
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(sock))
        s.sendall(b"not json\n" + b'{"cmd": 5}\n' + b'{"cmd": "routes", "args": [1]}\n' + b"[]\n")
        replies = b""
        while replies.count(b"\n") < 4:
            chunk = s.recv(4096)
            assert chunk, replies
            replies += chunk
    answers = [json.loads(line) for line in replies.decode().splitlines()]
    assert [a["ok"] for a in answers] == [False] * 4
    assert "not a JSON request" in answers[0]["error"]
    # A line longer than the server takes: an error, then the connection closes.
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(sock))
        try:
            s.sendall(b"x" * (2 << 20))
        except (BrokenPipeError, ConnectionResetError):
            pass
        data = s.recv(4096)
        assert b"longer than" in data
    # A client that connects and goes away.
    socket.socket(socket.AF_UNIX).connect(str(sock))
    run.wait_for(lambda: run.port_tx("p1") > 0, "traffic on p1")
    report = run.stop()
    assert report["ports"]["gen"]["dropped"] == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_firewall_rule_replace_takes_effect(gpunfv, tmp_path, sock_dir, backend):
    skip_unless_backend(gpunfv, backend)
    sock = sock_dir / "s"
    config = router_config(tmp_path, sock, "10.0.0.0/8 p1\n", fw_rules=ACCEPT_UDP)
    run = LiveRun(gpunfv, config, tmp_path / "r.json", sock, backend)
    run.wait_for(lambda: run.port_tx("p1") > 0, "traffic on p1")
    (tmp_path / "drop.rules").write_text(DROP_UDP_TO_10)
    rc, j, err = run.ctl("firewall", "replace", str(tmp_path / "drop.rules"))
    assert rc == 0 and j["table_version"] == 2 and j["rules"] == 1, err

    def dropping() -> bool:
        rc, j, _ = run.ctl("stats")
        return {p["name"]: p["dropped"] for p in j["ports"]}["gen"] > 0
    run.wait_for(dropping, "firewall drops")
    report = run.stop()
    fw = report["nfs"]["fw"]
    v = versions(report, "fw")
    assert [x["version"] for x in v] == [1, 2]
    # Version 1 passed everything to the router and p1; version 2 dropped everything.
    assert v[0]["packets"] == report["ports"]["p1"]["tx_packets"] > 0
    assert v[1]["packets"] == fw["drops"]["firewall_rule"] > 0
    assert fw["in"] == v[0]["packets"] + v[1]["packets"]
    assert fw["rule_hits"] == {"0": fw["in"]}  # rule 0 of each set matched every packet


def test_sighup_rereads_the_table_files(gpunfv, tmp_path, sock_dir):
    sock = sock_dir / "s"
    run = LiveRun(gpunfv, router_config(tmp_path, sock, "10.0.0.0/8 p1\n", fw_rules=ACCEPT_UDP),
                  tmp_path / "r.json", sock)
    run.wait_for(lambda: run.port_tx("p1") > 0, "traffic on p1")
    (tmp_path / "r.routes").write_text("10.0.0.0/8 p2\n")
    run.proc.send_signal(signal.SIGHUP)
    run.wait_for(lambda: run.port_tx("p2") > 0, "traffic on p2")
    report = run.stop()
    v = versions(report, "r1")
    assert len(v) == 2 and v[1]["change"].startswith("reload ")
    assert v[1]["packets"] == report["ports"]["p2"]["tx_packets"]
    assert [x["change"].split()[0] for x in versions(report, "fw")] == ["start", "reload"]


def test_stop_through_the_socket_ends_a_run_as_sigterm_does(gpunfv, tmp_path, sock_dir):
    sock = sock_dir / "s"
    run = LiveRun(gpunfv, router_config(tmp_path, sock, "10.0.0.0/8 p1\n"), tmp_path / "r.json", sock)
    run.wait_for(lambda: run.port_tx("p1") > 0, "traffic on p1")
    report = run.stop()
    assert report["ports"]["p1"]["tx_packets"] == report["ports"]["gen"]["rx_packets"] > 0
    assert not sock.exists()  # removed at the end of the run


def test_control_path_errors(gpunfv, tmp_path, sock_dir):
    for path, why in [(tmp_path / "no" / "dir" / "s", "cannot listen"),
                      (tmp_path / "c.yaml", "not a socket"),
                      ("x" * 120, "1 to 107 bytes")]:
        config = router_config(tmp_path, Path(path), "10.0.0.0/8 p1\n")
        r = run_gpunfv(gpunfv, "run", config, "-q")
        assert r.returncode == 2 and why in r.stderr, (path, r.stderr)
    r = run_gpunfv(gpunfv, "ctl", sock_dir / "none", "stats")
    assert r.returncode == 1 and "cannot connect" in r.stderr


# Every generated frame carries the same payload bytes: among 256 one-byte contents some fire on
# every frame; a 16-byte content fires on none.
NEVER_FIRES = 'alert udp any any -> any any (msg:"never"; content:"no-such-payload!"; sid:1;)\n'
EVERY_BYTE = "".join(f'alert udp any any -> any any (msg:"byte {b}"; content:"|{b:02x}|"; sid:{100 + b};)\n'
                     for b in range(256))


def nids_config(tmp_path: Path, sock: Path) -> Path:
    (tmp_path / "ids.rules").write_text(NEVER_FIRES)
    return write_config(
        tmp_path / "c.yaml",
        ports=[{"name": "gen", "type": "generator", "rate": "100kpps", "size": 64, "flows": 64,
                "duration": 3600},
               {"name": "p1", "type": "discard"}],
        nfs=[{"name": "ids", "type": "nids", "rules": str(tmp_path / "ids.rules")}],
        chains=[{"from": "gen", "to": "p1", "path": ["ids"]}],
        settings={"control": str(sock), "batch_size": 256})


@pytest.mark.parametrize("backend", BACKENDS)
def test_nids_rule_replace_makes_alerts_appear_and_disappear(gpunfv, tmp_path, sock_dir, backend):
    skip_unless_backend(gpunfv, backend)
    sock = sock_dir / "s"
    run = LiveRun(gpunfv, nids_config(tmp_path, sock), tmp_path / "r.json", sock, backend)
    run.wait_for(lambda: run.port_tx("p1") > 0, "traffic on p1")
    (tmp_path / "every.rules").write_text(EVERY_BYTE)
    rc, j, err = run.ctl("nids", "replace", str(tmp_path / "every.rules"))
    assert rc == 0 and j["table_version"] == 2 and j["rules"] == 256, err
    at_v2 = run.port_tx("p1")
    run.wait_for(lambda: run.port_tx("p1") > at_v2 + 1000, "traffic under version 2")
    # A bad line: refused with its file and line, version 2 stays live.
    (tmp_path / "bad.rules").write_text(NEVER_FIRES + 'alert udp any any -> any any (msg:"x"; content:"y" sid:2;)\n')
    rc, j, err = run.ctl("nids", "replace", str(tmp_path / "bad.rules"))
    assert rc == 1 and j["ok"] is False and f'{tmp_path / "bad.rules"}:2:' in j["error"], j
    rc, j, _ = run.ctl("stats")
    assert [n["table_version"] for n in j["nfs"] if n["name"] == "ids"] == [2]
    # SIGHUP re-reads the configuration's file: the rule that never fires again.
    run.proc.send_signal(signal.SIGHUP)

    def version(n: int) -> bool:
        rc, j, _ = run.ctl("stats")
        return [x["table_version"] for x in j["nfs"] if x["name"] == "ids"] == [n]
    run.wait_for(lambda: version(3), "the reload")
    at_v3 = run.port_tx("p1")
    run.wait_for(lambda: run.port_tx("p1") > at_v3 + 1000, "traffic under version 3")
    report = run.stop()
    ids = report["nfs"]["ids"]
    v = versions(report, "ids")
    assert [x["version"] for x in v] == [1, 2, 3]
    assert v[1]["change"] == f'nids replace {tmp_path / "every.rules"}' and v[1]["entries"] == 256
    assert v[2]["change"].startswith("reload ") and v[2]["entries"] == 1
    assert all(x["packets"] > 0 for x in v)
    # Every packet version 2 scanned alerted, none of the others did; nothing was dropped.
    assert ids["in"] == ids["out"] == sum(x["packets"] for x in v)
    assert ids["packets_alerted"] == v[1]["packets"]
    assert report["ports"]["p1"]["tx_packets"] == report["ports"]["gen"]["rx_packets"]
    assert "1" not in ids["alerts_by_sid"] and ids["alerts"] >= ids["packets_alerted"]
    # Frame bytes: 64-byte frames in and out of the NF, as the ports count them.
    assert ids["in_bytes"] == report["ports"]["gen"]["rx_bytes"] == ids["out_bytes"]


# --- IPsec SAs ------------------------------------------------------------------------------

LOCAL, REMOTE = "198.51.100.1", "203.0.113.1"


def ipsec_sa(spi: int, match: str | None = None) -> dict:
    """An SA with random keys (so a leak check cannot pass by accident)."""
    sa = {"spi": spi, "enc_key": os.urandom(20).hex(), "auth_key": os.urandom(20).hex(),
          "local": LOCAL, "remote": REMOTE}
    if match:
        sa["match"] = match
    return sa


def sa_words(sa: dict) -> list[str]:
    return [f"{k}={v}" for k, v in sa.items()]


def assert_no_keys(sas: list[dict], *texts: str) -> None:
    for sa in sas:
        for key in (sa["enc_key"], sa["auth_key"]):
            for text in texts:
                assert key[:16].lower() not in text.lower(), "a key appeared in the output"


def esp_spi_seq(frames) -> list[tuple[int, int]]:
    """(SPI, sequence number) of every ESP frame (Ethernet, 20-byte outer IPv4 header)."""
    out = []
    for _, f in frames:
        assert f[12:14] == b"\x08\x00" and f[23] == 50, "not an ESP frame"
        out.append(struct.unpack("!II", f[34:42]))
    return out


@pytest.mark.parametrize("where", ["manager", "nf-process"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_ipsec_sa_add_and_del_move_outbound_traffic(gpunfv, tmp_path, sock_dir, backend, where):
    """SAs added and deleted while packets flow, the gateway in gpunfv run or in an NF process
    (where gpunfv run hands the commands on)."""
    skip_unless_backend(gpunfv, backend)
    sock = sock_dir / "s"
    (tmp_path / "empty.rules").write_text("")
    base = ipsec_sa(0x1000, "0.0.0.0/0")
    gateway = {"name": "esp-out", "type": "ipsec", "direction": "outbound", "sas": [base]}
    if where == "nf-process":
        gateway["process"] = "vendor-esp"
    config = write_config(
        tmp_path / "c.yaml",
        ports=[{"name": "gen", "type": "generator", "rate": "20kpps", "size": 64, "flows": 64,
                "duration": 3600},
               {"name": "p1", "type": "pcap", "tx": str(tmp_path / "out.pcap")}],
        nfs=[{"name": "fw", "type": "firewall", "rules": str(tmp_path / "empty.rules"),
              "default": "accept"}, gateway],
        chains=[{"from": "gen", "to": "p1", "path": ["fw", "esp-out"]}],
        settings={"control": str(sock), "batch_size": 256})
    run = LiveRun(gpunfv, config, tmp_path / "r.json", sock, backend)
    run.wait_for(lambda: run.port_tx("p1") > 500, "traffic on p1")
    # The generator's destinations are all in 198.18.0.0/15: the new SA takes every packet.
    added = ipsec_sa(0x2000, "198.18.0.0/15")
    replies = []
    rc, j, err = run.ctl("ipsec", "sa", "add", "esp-out", *sa_words(added))
    replies.append(json.dumps(j) + err)
    assert rc == 0 and j["table_version"] == 2 and j["sas"] == 2, err
    at_v2 = run.port_tx("p1")
    run.wait_for(lambda: run.port_tx("p1") > at_v2 + 1000, "traffic under version 2")
    # Refused: a duplicate SPI, a bad key, an unknown SPI, a firewall named as the gateway.
    bad = [("add", "esp-out", *sa_words(ipsec_sa(0x2000, "10.0.0.0/8"))),
           ("add", "esp-out", *sa_words(ipsec_sa(0x3000, "10.0.0.0/8") | {"enc_key": added["enc_key"][:38]})),
           ("del", "esp-out", "0x7777"),
           ("del", "fw", "0x2000")]
    expect = ["SPI 0x00002000 exists already", "enc_key: expected 40 hex digits",
              "no SA with SPI 0x00007777", "NF 'fw' is a firewall NF"]
    for words, why in zip(bad, expect):
        rc, j, err = run.ctl("ipsec", "sa", *words)
        replies.append(json.dumps(j) + err)
        assert rc == 1 and j["ok"] is False and why in j["error"], j
    rc, j, err = run.ctl("stats")
    replies.append(json.dumps(j))
    assert [(n["table_version"], n["sas"]) for n in j["nfs"] if n["name"] == "esp-out"] == [(2, 2)]
    if where == "nf-process":
        assert [n["process"] for n in j["nfs"] if n["name"] == "esp-out"] == ["vendor-esp"]
    rc, j, err = run.ctl("ipsec", "sa", "del", "esp-out", "0x2000")
    replies.append(json.dumps(j) + err)
    assert rc == 0 and j["table_version"] == 3 and j["sas"] == 1, err
    at_v3 = run.port_tx("p1")
    run.wait_for(lambda: run.port_tx("p1") > at_v3 + 1000, "traffic under version 3")
    report = run.stop()
    assert_no_keys([base, added], *replies, run.report_path.read_text())

    ports, gw = report["ports"], report["nfs"]["esp-out"]
    assert ports["gen"]["dropped"] == 0 and gw["drops"] == {}
    assert ports["p1"]["tx_packets"] == ports["gen"]["rx_packets"] == gw["out"]
    v = versions(report, "esp-out")
    assert [(x["version"], x["change"], x["entries"]) for x in v] == [
        (1, "start", 1), (2, "ipsec sa add 0x00002000", 2), (3, "ipsec sa del 0x00002000", 1)]
    assert all(x["packets"] > 0 for x in v) and sum(x["packets"] for x in v) == gw["in"]
    # Version 2 sent every packet it saw through the new SA; the others through the first.
    _, frames = read_pcap(tmp_path / "out.pcap")
    headers = esp_spi_seq(frames)
    assert len(headers) == gw["out"]
    by_spi = {}
    for spi, seq in headers:
        by_spi.setdefault(spi, []).append(seq)
    assert set(by_spi) == {0x1000, 0x2000}
    for spi, seqs in by_spi.items():  # 1..N in order: no gap, no repeat, none restarted
        assert seqs == list(range(1, len(seqs) + 1)), hex(spi)
    assert len(by_spi[0x2000]) == v[1]["packets"]
    assert len(by_spi[0x1000]) == v[0]["packets"] + v[2]["packets"]
    # The new SA's packets lie between the first's: traffic moved there and back.
    spis = [spi for spi, _ in headers]
    first, last = spis.index(0x2000), len(spis) - 1 - spis[::-1].index(0x2000)
    assert set(spis[first:last + 1]) == {0x2000} and first > 0 and last < len(spis) - 1
    assert {(s["spi"], s.get("deleted", False), s["packets"]) for s in gw["sas"]} == {
        ("0x00001000", False, len(by_spi[0x1000])), ("0x00002000", True, len(by_spi[0x2000]))}


@pytest.mark.parametrize("backend", BACKENDS)
def test_ipsec_sa_del_makes_inbound_esp_unknown(gpunfv, tmp_path, sock_dir, backend):
    skip_unless_backend(gpunfv, backend)
    sock = sock_dir / "s"
    sa = ipsec_sa(0x1000, "0.0.0.0/0")
    inbound = {k: v for k, v in sa.items() if k != "match"} | {"local": REMOTE, "remote": LOCAL}
    config = write_config(
        tmp_path / "c.yaml",
        ports=[{"name": "gen", "type": "generator", "rate": "20kpps", "size": 64, "flows": 64,
                "duration": 3600},
               {"name": "p1", "type": "discard"}],
        nfs=[{"name": "enc", "type": "ipsec", "direction": "outbound", "sas": [sa]},
             {"name": "dec", "type": "ipsec", "direction": "inbound", "sas": [inbound]}],
        chains=[{"from": "gen", "to": "p1", "path": ["enc", "dec"]}],
        settings={"control": str(sock), "batch_size": 256})
    run = LiveRun(gpunfv, config, tmp_path / "r.json", sock, backend)
    run.wait_for(lambda: run.port_tx("p1") > 500, "traffic on p1")
    rc, j, err = run.ctl("ipsec", "sa", "del", "dec", "0x1000")
    assert rc == 0 and j["table_version"] == 2 and j["sas"] == 0, err

    def dropped() -> int:
        rc, j, _ = run.ctl("stats")
        return {p["name"]: p["dropped"] for p in j["ports"]}["gen"]
    run.wait_for(lambda: dropped() > 1000, "drops under version 2")
    report = run.stop()
    assert_no_keys([sa], run.report_path.read_text())
    dec = report["nfs"]["dec"]
    v = versions(report, "dec")
    assert [(x["version"], x["entries"]) for x in v] == [(1, 1), (2, 0)]
    # Every packet version 1 saw passed, every one version 2 saw was an unknown SPI.
    assert dec["drops"] == {"esp_unknown_spi": v[1]["packets"]}
    assert dec["out"] == v[0]["packets"] == report["ports"]["p1"]["tx_packets"] > 0
    assert dec["in"] == v[0]["packets"] + v[1]["packets"]
    assert report["nfs"]["enc"]["in"] == report["nfs"]["enc"]["out"] == dec["in"]
