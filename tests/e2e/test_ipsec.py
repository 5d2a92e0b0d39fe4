"""IPsec gateway NF (ESP tunnel mode, AES-128-CTR + HMAC-SHA1-96) against independent
implementations:

* outbound: tshark (Wireshark's own ESP code) decrypts every packet we wrote with the SAs
  given to it, finds no ICV failure, and the inner packets equal the original IPv4 packets;
  sequence numbers run 1, 2, 3, ... per SA in capture order although several CPU workers process
  small batches concurrently;
* inbound: scapy's SecurityAssociation encrypts the trace; we decrypt all of it back;
* outbound then inbound in one chain restores every packet;
* drops: a duplicate is esp_replay, a tampered packet esp_bad_icv, an unknown SPI
  esp_unknown_spi, a truncated one esp_malformed;
* keys never appear on stdout, stderr or in the report;
* where a GPU is usable, the GPU backend writes the same bytes as the CPU backend.

The original frames are compared without their Ethernet padding: padding is not part of the
IPv4 packet a tunnel carries (frames shorter than 60 bytes come back shorter).
"""
from __future__ import annotations

import json
import os
import struct
import subprocess

import pytest

from conftest import (TRACES, check_accounting, read_pcap, run_chain, run_gpunfv,
                      write_config)

SIP_TRACE = TRACES / "SIP_CALL_RTP_G711.pcap"
LOCAL, REMOTE = "198.51.100.1", "203.0.113.1"


def make_sa(spi: int, match: str | None = None) -> dict:
    """A fresh SA with random keys (so a leak check cannot pass by accident)."""
    sa = {"spi": spi, "enc_key": os.urandom(20).hex(), "auth_key": os.urandom(20).hex(),
          "local": LOCAL, "remote": REMOTE}
    if match:
        sa["match"] = match
    return sa


def inbound_sa(sa: dict) -> dict:
    return {k: v for k, v in sa.items() if k != "match"} | {"local": REMOTE, "remote": LOCAL}


def ip_packet(frame: bytes) -> bytes | None:
    """The IPv4 packet of an untagged Ethernet frame (Ethernet padding cut), else None."""
    if len(frame) < 34 or frame[12:14] != b"\x08\x00":
        return None
    total = struct.unpack("!H", frame[16:18])[0]
    return frame[14:14 + total]


def assert_no_keys(sas: list[dict], *texts: str) -> None:
    for sa in sas:
        for key in (sa["enc_key"], sa["auth_key"]):
            for text in texts:
                assert key.lower() not in text.lower(), "a key appeared in the output"
                assert key[:16].lower() not in text.lower(), "part of a key appeared in the output"


def run_and_check(binary, config, sas, *extra) -> dict:
    """run_chain plus the key-leak check on stdout, stderr and the report."""
    report_path = config.with_suffix(".report.json")
    proc = run_gpunfv(binary, "run", config, "--report", report_path, *extra)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    report_text = report_path.read_text()
    assert_no_keys(sas, proc.stdout, proc.stderr, report_text)
    report = json.loads(report_text)
    check_accounting(report)
    return report


def tshark_esp_prefs(sas: list[dict]) -> list[str]:
    """tshark 4.0 options: ESP decryption + ICV check, one esp_sa UAT record per SA (protocol,
    source, destination, SPI, encryption, key with nonce, authentication, key)."""
    prefs = ["esp.enable_encryption_decode:TRUE", "esp.enable_authentication_check:TRUE"]
    for sa in sas:
        prefs.append("uat:esp_sa:" + ",".join(f'"{v}"' for v in (
            "IPv4", LOCAL, REMOTE, f"0x{sa['spi']:08x}", "AES-CTR [RFC3686]",
            "0x" + sa["enc_key"], "HMAC-SHA-1-96 [RFC2404]", "0x" + sa["auth_key"])))
    return prefs


def tshark_rows(path, prefs, fields) -> list[list[str]]:
    cmd = ["tshark", "-n", "-r", str(path)]
    for p in prefs:
        cmd += ["-o", p]
    cmd += ["-T", "fields", "-E", "separator=\t", "-E", "occurrence=a", "-E", "aggregator=|"]
    for f in fields:
        cmd += ["-e", f]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return [line.split("\t") for line in proc.stdout.splitlines()]


# --- outbound, checked by tshark ------------------------------------------------------------------

@pytest.fixture(scope="module")
def outbound_run(gpunfv, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ipsec_out")
    sas = [make_sa(0x1001, "200.57.7.192/27"), make_sa(0x1002, "0.0.0.0/0")]
    out = tmp / "esp.pcap"
    config = write_config(
        tmp / "out.yaml",
        ports=[{"name": "in", "type": "pcap", "rx": SIP_TRACE},
               {"name": "tunnel", "type": "pcap", "tx": out}],
        nfs=[{"name": "esp", "type": "ipsec", "direction": "outbound", "sas": sas}],
        chains=[{"from": "in", "path": ["esp"], "to": "tunnel"}],
        # Small batches and several workers: batches reach the NF out of order.
        settings={"batch_size": 64, "batches": 16, "workers": 4})
    report = run_and_check(gpunfv, config, sas, "-q")
    return {"sas": sas, "out": out, "report": report, "config": config}


def test_outbound_report(outbound_run):
    _, frames = read_pcap(SIP_TRACE)
    non_ipv4 = sum(1 for _, f in frames if ip_packet(f) is None)
    nf = outbound_run["report"]["nfs"]["esp"]
    assert nf["in"] == len(frames)
    assert nf["drops"] == {"not_ipv4": non_ipv4}
    assert nf["out"] == len(frames) - non_ipv4
    per_sa = {s["spi"]: s["packets"] for s in nf["sas"]}
    assert set(per_sa) == {"0x00001001", "0x00001002"}
    assert sum(per_sa.values()) == nf["out"]
    assert nf["direction"] == "outbound"


def test_outbound_tshark_decrypts_everything(outbound_run):
    _, frames = read_pcap(SIP_TRACE)
    originals = [p for p in (ip_packet(f) for _, f in frames) if p is not None]
    rows = tshark_rows(outbound_run["out"], tshark_esp_prefs(outbound_run["sas"]),
                       ["ip.src", "ip.dst", "ip.proto", "esp.spi", "esp.sequence", "esp.icv_good",
                        "esp.icv_bad", "esp.contained_data"])
    assert len(rows) == len(originals)
    next_seq: dict[str, int] = {}
    for i, (src, dst, proto, spi, seq, good, bad, inner) in enumerate(rows):
        assert src.split("|")[0] == LOCAL and dst.split("|")[0] == REMOTE, i
        assert proto.split("|")[0] == "50", i
        assert good == "1" and bad in ("", "0"), f"packet {i}: ICV not good ({good!r}, {bad!r})"
        assert bytes.fromhex(inner) == originals[i], f"packet {i}: inner packet differs"
        # Sequence numbers 1, 2, 3, ... per SA in capture order.
        assert int(seq) == next_seq.get(spi, 1), (i, spi, seq)
        next_seq[spi] = int(seq) + 1
    assert set(next_seq) == {"0x00001001", "0x00001002"}


def test_outbound_then_inbound_runs(gpunfv, outbound_run, tmp_path):
    """The outbound capture, decrypted by our inbound side in a second run."""
    sas = outbound_run["sas"]
    out = tmp_path / "plain.pcap"
    config = write_config(
        tmp_path / "in.yaml",
        ports=[{"name": "tunnel", "type": "pcap", "rx": outbound_run["out"]},
               {"name": "inside", "type": "pcap", "tx": out}],
        nfs=[{"name": "esp", "type": "ipsec", "direction": "inbound",
              "sas": [inbound_sa(s) for s in sas]}],
        chains=[{"from": "tunnel", "path": ["esp"], "to": "inside"}],
        settings={"batch_size": 64, "batches": 16, "workers": 4})
    report = run_and_check(gpunfv, config, sas, "-q")
    assert report["nfs"]["esp"]["drops"] == {}
    _, frames = read_pcap(SIP_TRACE)
    want = [f[:14] + p for f, p in ((f, ip_packet(f)) for _, f in frames) if p is not None]
    _, got = read_pcap(out)
    assert [f for _, f in got] == want


# --- outbound then inbound in one chain ---------------------------------------------------------

def test_round_trip_in_one_chain(gpunfv, tmp_path):
    sas = [make_sa(0x2001, "200.57.7.196/32"), make_sa(0x2002, "0.0.0.0/0")]
    out = tmp_path / "back.pcap"
    config = write_config(
        tmp_path / "rt.yaml",
        ports=[{"name": "in", "type": "pcap", "rx": SIP_TRACE},
               {"name": "out", "type": "pcap", "tx": out}],
        nfs=[{"name": "enc", "type": "ipsec", "direction": "outbound", "bypass": True, "sas": sas},
             {"name": "dec", "type": "ipsec", "direction": "inbound", "bypass": True,
              "sas": [inbound_sa(s) for s in sas]}],
        chains=[{"from": "in", "path": ["enc", "dec"], "to": "out"}],
        settings={"batch_size": 100, "workers": 3})
    report = run_and_check(gpunfv, config, sas, "-q")
    _, frames = read_pcap(SIP_TRACE)
    assert report["ports"]["out"]["tx_packets"] == len(frames)
    _, got = read_pcap(out)
    for i, ((_, orig), (_, back)) in enumerate(zip(frames, got)):
        ip = ip_packet(orig)
        # IPv4 comes back exactly (without Ethernet padding); the rest bypassed both NFs.
        assert back == (orig[:14] + ip if ip is not None else orig), i


# --- inbound: scapy's ESP ------------------------------------------------------------------------

def scapy_sa(sa: dict):
    from scapy.layers.inet import IP
    from scapy.layers.ipsec import ESP, SecurityAssociation
    return SecurityAssociation(ESP, spi=sa["spi"], crypt_algo="AES-CTR",
                               crypt_key=bytes.fromhex(sa["enc_key"]),
                               auth_algo="HMAC-SHA1-96", auth_key=bytes.fromhex(sa["auth_key"]),
                               tunnel_header=IP(src=LOCAL, dst=REMOTE))


def scapy_encrypt(frames, sa_of, path):
    """Encrypts each IPv4 frame with scapy (SA chosen by sa_of(index)); writes an ESP pcap.
    Returns [(input index, scapy frame bytes)].

    Scapy's tunnel mode re-dissects the packet it encapsulates; with every layer loaded (as
    once any test imports scapy.all) it would re-encode payloads such as SNMP's ASN.1 and
    change the inner packet. Dissection is limited to IP meanwhile, so payloads stay bytes."""
    from scapy.config import conf
    from scapy.layers.inet import IP
    from scapy.layers.l2 import Ether
    from scapy.packet import Raw
    from scapy.utils import wrpcap
    out = []
    seq: dict[int, int] = {}
    conf.layers.filter([IP])
    try:
        for i, (_, f) in enumerate(frames):
            ip = ip_packet(f)
            if ip is None:
                continue
            sa, assoc = sa_of(i)
            seq[sa["spi"]] = seq.get(sa["spi"], 0) + 1
            inner = IP(ip)
            assert bytes(inner) == ip
            enc = assoc.encrypt(inner, seq_num=seq[sa["spi"]])
            out.append((i, bytes(Ether(f[:14]) / enc)))
    finally:
        conf.layers.unfilter()
    wrpcap(str(path), [Raw(b) for _, b in out], linktype=1)
    return out


def test_inbound_accepts_scapy_esp(gpunfv, tmp_path):
    sas = [make_sa(0x3001), make_sa(0x3002)]
    assocs = [scapy_sa(s) for s in sas]
    _, frames = read_pcap(SIP_TRACE)
    esp_pcap = tmp_path / "scapy-esp.pcap"
    encrypted = scapy_encrypt(frames, lambda i: (sas[i % 2], assocs[i % 2]), esp_pcap)
    out = tmp_path / "plain.pcap"
    config = write_config(
        tmp_path / "in.yaml",
        ports=[{"name": "tunnel", "type": "pcap", "rx": esp_pcap},
               {"name": "inside", "type": "pcap", "tx": out}],
        nfs=[{"name": "esp", "type": "ipsec", "direction": "inbound",
              "sas": [inbound_sa(s) for s in sas]}],
        chains=[{"from": "tunnel", "path": ["esp"], "to": "inside"}],
        settings={"batch_size": 128, "workers": 2})
    report = run_and_check(gpunfv, config, sas, "-q")
    assert report["nfs"]["esp"]["drops"] == {}
    _, got = read_pcap(out)
    assert len(got) == len(encrypted)
    for (i, _), (_, back) in zip(encrypted, got):
        assert back[14:] == ip_packet(frames[i][1]), i


# --- inbound drops --------------------------------------------------------------------------------

def test_inbound_drop_reasons(gpunfv, tmp_path):
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    from scapy.utils import wrpcap
    sa = make_sa(0x4001)
    stranger = make_sa(0x4999)
    assoc, other = scapy_sa(sa), scapy_sa(stranger)
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")

    def esp(seq, via=assoc):
        inner = IP(src="10.1.0.1", dst="10.2.0.2") / UDP(sport=1000 + seq, dport=2000) / (b"x" * seq)
        return bytes(eth / via.encrypt(inner, seq_num=seq))

    def fix_ip(frame: bytearray):
        ip = IP(bytes(frame[14:]))
        del ip.len, ip.chksum
        return bytes(frame[:14]) + bytes(IP(bytes(ip)))

    good1, good2, good3 = esp(1), esp(2), esp(3)
    tampered = bytearray(esp(4))
    tampered[60] ^= 0x01
    truncated = fix_ip(bytearray(esp(5)[:-1]))  # ciphertext no longer 4-byte aligned
    frames = [good1, good2, good2, bytes(tampered), esp(6, other), truncated, good3]
    esp_pcap = tmp_path / "drops.pcap"
    wrpcap(str(esp_pcap), [Ether(f) for f in frames])
    out = tmp_path / "plain.pcap"
    config = write_config(
        tmp_path / "in.yaml",
        ports=[{"name": "tunnel", "type": "pcap", "rx": esp_pcap},
               {"name": "inside", "type": "pcap", "tx": out}],
        nfs=[{"name": "esp", "type": "ipsec", "direction": "inbound", "sas": [inbound_sa(sa)]}],
        chains=[{"from": "tunnel", "path": ["esp"], "to": "inside"}])
    report = run_and_check(gpunfv, config, [sa, stranger], "-q")
    assert report["nfs"]["esp"]["drops"] == {
        "esp_replay": 1, "esp_bad_icv": 1, "esp_unknown_spi": 1, "esp_malformed": 1}
    _, got = read_pcap(out)
    assert len(got) == 3


# --- GPU backend: same bytes as the CPU backend ---------------------------------------------------

def test_gpu_backend_equals_cpu(gpunfv, tmp_path):
    sas = [make_sa(0x5001, "200.57.7.192/27"), make_sa(0x5002, "0.0.0.0/0")]
    outs = {}
    for backend in ("cpu", "gpu"):
        outs[backend] = tmp_path / f"{backend}.pcap"
        config = write_config(
            tmp_path / f"{backend}.yaml",
            ports=[{"name": "in", "type": "pcap", "rx": SIP_TRACE, "repeat": 4},
                   {"name": "tunnel", "type": "pcap", "tx": outs[backend]}],
            nfs=[{"name": "esp", "type": "ipsec", "direction": "outbound", "sas": sas}],
            chains=[{"from": "in", "path": ["esp"], "to": "tunnel"}],
            settings={"batch_size": 256, "batches": 16})
        report_path = tmp_path / f"{backend}.json"
        proc = run_gpunfv(gpunfv, "run", config, "--backend", backend, "-q", "--report", report_path)
        if backend == "gpu" and proc.returncode != 0:
            assert proc.returncode == 1, proc.stderr
            pytest.skip("no usable GPU backend here: " + proc.stderr.strip())
        assert proc.returncode == 0, proc.stderr
        assert_no_keys(sas, proc.stdout, proc.stderr, report_path.read_text())
    _, cpu = read_pcap(outs["cpu"])
    _, gpu = read_pcap(outs["gpu"])
    assert len(cpu) == len(gpu)
    for i, (a, b) in enumerate(zip(cpu, gpu)):
        assert a == b, i


# --- batches none of whose packets reach the gateway ------------------------------------------
# Every batch takes its turn in the gateway's ingress order, also one whose packets were all
# dropped before it (by the firewall, as malformed) or sent another way. Were such a batch
# never to take its turn, each later batch would wait for it; a generous timeout is the only
# clock here.

UPSTREAM_DROP_TIMEOUT_S = 120


def run_backend(gpunfv, config, backend: str, *extra) -> dict | None:
    """Runs `config` on `backend`; the checked report, or None where no GPU backend is usable."""
    report_path = config.with_suffix(f".{backend}.json")
    proc = run_gpunfv(gpunfv, "run", config, "--backend", backend, "-q", "--report", report_path,
                      *extra, timeout=UPSTREAM_DROP_TIMEOUT_S)
    if backend == "gpu" and proc.returncode != 0:
        assert proc.returncode == 1, proc.stderr
        return None
    assert proc.returncode == 0, proc.stderr
    assert "out of ingress order" not in proc.stderr, proc.stderr
    report = json.loads(report_path.read_text())
    check_accounting(report)
    return report


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_trickle_through_a_firewall_that_drops_whole_batches(gpunfv, tmp_path, backend):
    """A paced generator sends a few packets per batch; the firewall drops about half the flows,
    so many batches reach the gateway empty. Every packet the firewall passed is encrypted."""
    rules = tmp_path / "drop-udp.rules"
    rules.write_text("@0.0.0.0/0 0.0.0.0/0 0 : 65535 1024 : 33000 0x11/0xFF 0x0000/0x0000 drop\n")
    out = tmp_path / f"tunnel-{backend}.pcap"
    sa = make_sa(0x6001, "0.0.0.0/0")
    config = write_config(
        tmp_path / f"trickle-{backend}.yaml",
        ports=[{"name": "gen", "type": "generator", "rate": "2kpps", "size": 128, "flows": 16,
                "count": 4000, "seed": 3},
               {"name": "tunnel", "type": "pcap", "tx": out}],
        nfs=[{"name": "fw", "type": "firewall", "rules": rules, "default": "accept"},
             {"name": "esp", "type": "ipsec", "direction": "outbound", "sas": [sa]}],
        chains=[{"from": "gen", "path": ["fw", "esp"], "to": "tunnel"}])
    report = run_backend(gpunfv, config, backend)
    if report is None:
        pytest.skip("no usable GPU backend here")
    fw, esp = report["nfs"]["fw"], report["nfs"]["esp"]
    assert report["ports"]["gen"]["rx_packets"] == 4000
    assert 0 < fw["out"] < 4000, fw  # some flows pass, some are dropped
    assert esp["in"] == esp["out"] == fw["out"]
    assert report["ports"]["tunnel"]["tx_packets"] == fw["out"]
    _, frames = read_pcap(out)
    assert len(frames) == fw["out"]
    spis_and_seqs = [struct.unpack("!II", f[34:42]) for _, f in frames]
    assert [s for s, _ in spis_and_seqs] == [0x6001] * len(frames)
    assert [q for _, q in spis_and_seqs] == list(range(1, len(frames) + 1))


def alternating_truncated_capture(path, batches: int) -> list[bytes]:
    """Batches of 4 frames: whole UDP frames, then 4 frames cut inside their IPv4 header
    (dropped as malformed before any NF), and so on. Returns the whole frames."""
    from scapy.all import Ether, IP, UDP, Raw, wrpcap
    frames, whole = [], []
    for b in range(batches):
        for i in range(4):
            f = bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") /
                      IP(src="10.0.0.1", dst=f"10.1.{b % 250}.{i + 1}") /
                      UDP(sport=4000 + i, dport=5000) / Raw(bytes(32)))
            if b % 2:
                frames.append(f[:20])
            else:
                frames.append(f)
                whole.append(f)
    wrpcap(str(path), [Ether(f) for f in frames])
    return whole


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_batches_of_malformed_frames_do_not_stall_the_gateway(gpunfv, tmp_path, backend):
    capture = tmp_path / "alternating.pcap"
    whole = alternating_truncated_capture(capture, batches=40)
    out = tmp_path / f"tunnel-{backend}.pcap"
    config = write_config(
        tmp_path / f"alternating-{backend}.yaml",
        ports=[{"name": "in", "type": "pcap", "rx": capture},
               {"name": "tunnel", "type": "pcap", "tx": out}],
        nfs=[{"name": "esp", "type": "ipsec", "direction": "outbound",
              "sas": [make_sa(0x6002, "10.0.0.0/8")]}],
        chains=[{"from": "in", "path": ["esp"], "to": "tunnel"}],
        settings={"batch_size": 4, "batches": 16})
    report = run_backend(gpunfv, config, backend)
    if report is None:
        pytest.skip("no usable GPU backend here")
    assert report["ports"]["in"]["rx_packets"] == 160
    assert report["ports"]["tunnel"]["tx_packets"] == len(whole) == 80
    assert report["ports"]["in"]["dropped"] == 80
    _, frames = read_pcap(out)
    assert [struct.unpack("!I", f[38:42])[0] for _, f in frames] == list(range(1, 81))


# --- one gateway on two chains ---------------------------------------------------------------------

@pytest.mark.parametrize("backend,scheduler", [("cpu", "unco"), ("gpu", "unco"), ("gpu", "fair")])
def test_two_chains_share_one_sa_without_reusing_a_sequence_number(gpunfv, tmp_path, backend,
                                                                   scheduler):
    """Two ports' chains go through one outbound gateway and its one SA at once. Every packet
    gets its own sequence number (reuse would repeat a counter block of AES-CTR's keystream),
    numbers 1..N with none missing, increasing within each chain's output."""
    sa = make_sa(0x6003, "0.0.0.0/0")
    outs = [tmp_path / f"tunnel-a-{backend}.pcap", tmp_path / f"tunnel-b-{backend}.pcap"]
    count = 60000
    config = write_config(
        tmp_path / f"two-chains-{backend}-{scheduler}.yaml",
        ports=[{"name": "a", "type": "generator", "size": 128, "flows": 64, "count": count, "seed": 1},
               {"name": "b", "type": "generator", "size": 200, "flows": 64, "count": count, "seed": 2},
               {"name": "ta", "type": "pcap", "tx": outs[0]},
               {"name": "tb", "type": "pcap", "tx": outs[1]}],
        nfs=[{"name": "esp", "type": "ipsec", "direction": "outbound", "sas": [sa]}],
        chains=[{"from": "a", "path": ["esp"], "to": "ta"}, {"from": "b", "path": ["esp"], "to": "tb"}],
        settings={"batch_size": 256, "batches": 32, "scheduler": scheduler})
    report = run_backend(gpunfv, config, backend)
    if report is None:
        pytest.skip("no usable GPU backend here")
    assert report["nfs"]["esp"]["out"] == 2 * count
    every = []
    for out in outs:
        _, frames = read_pcap(out)
        assert len(frames) == count
        seqs = [struct.unpack("!II", f[34:42]) for _, f in frames]
        assert {s for s, _ in seqs} == {0x6003}
        mine = [q for _, q in seqs]
        assert all(x < y for x, y in zip(mine, mine[1:])), "sequence numbers out of order"
        every += mine
    assert sorted(every) == list(range(1, 2 * count + 1))
