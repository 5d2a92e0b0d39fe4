"""Firewall chains over a real capture, checked against a reference firewall written here, and
bad rule files.

The reference is deliberately naive and independent of src/: it parses the ClassBench rule file
with its own code, reads the 5-tuple of every frame itself, and scans the rules in order for the
first match (src/nf/firewall/firewall_logic.h documents what the firewall classifies on: ports
only for TCP/UDP first fragments, non-IPv4 frames pass unclassified).
"""
from __future__ import annotations

import gzip
import re
import struct
from pathlib import Path

from conftest import DATA, TRACES, read_pcap, run_chain, run_gpunfv, write_config

SIP_TRACE = TRACES / "SIP_CALL_RTP_G711.pcap"
EXAMPLE_RULES = DATA / "firewall" / "example.rules"
CLASSBENCH_10K = DATA / "firewall" / "classbench_neurocuts" / "fw1_10k.gz"


# --- reference firewall ------------------------------------------------------------------------

def parse_rules(text: str) -> list[dict]:
    """ClassBench lines (optionally ending in accept/drop), '#' comments, blank lines."""
    rules = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].replace(":", " : ")
        f = line.split()
        if not f:
            continue
        def prefix(s):
            addr, length = s.lstrip("@").split("/")
            a = struct.unpack("!I", bytes(int(x) for x in addr.split(".")))[0]
            n = int(length)
            return a, a | ((1 << (32 - n)) - 1)
        proto, mask = (int(x, 16) for x in f[8].split("/"))
        action = f[10] if len(f) > 10 else None
        rules.append({"src": prefix(f[0]), "dst": prefix(f[1]),
                      "sport": (int(f[2]), int(f[4])), "dport": (int(f[5]), int(f[7])),
                      "proto": None if mask == 0 else proto, "action": action})
    return rules


def five_tuple(frame: bytes):
    """(src, dst, sport, dport, proto) of an IPv4 frame, None for anything else."""
    off = 12
    ethertype = int.from_bytes(frame[off:off + 2], "big")
    for _ in range(2):
        if ethertype not in (0x8100, 0x88A8):
            break
        off += 4
        ethertype = int.from_bytes(frame[off:off + 2], "big")
    if ethertype != 0x0800:
        return None
    ip = off + 2
    ihl = (frame[ip] & 0x0F) * 4
    proto = frame[ip + 9]
    src, dst = struct.unpack("!II", frame[ip + 12:ip + 20])
    first_fragment = (int.from_bytes(frame[ip + 6:ip + 8], "big") & 0x1FFF) == 0
    sport = dport = 0
    if proto in (6, 17) and first_fragment:
        sport, dport = struct.unpack("!HH", frame[ip + ihl:ip + ihl + 4])
    return src, dst, sport, dport, proto


def first_match(rules: list[dict], t) -> int | None:
    src, dst, sport, dport, proto = t
    for i, r in enumerate(rules):
        if (r["src"][0] <= src <= r["src"][1] and r["dst"][0] <= dst <= r["dst"][1]
                and r["sport"][0] <= sport <= r["sport"][1]
                and r["dport"][0] <= dport <= r["dport"][1]
                and (r["proto"] is None or r["proto"] == proto)):
            return i
    return None


# --- tests ---------------------------------------------------------------------------------------

def test_example_rules_over_the_sip_capture(gpunfv, tmp_path):
    """Exactly the frames the reference accepts come out, in order and unchanged; rule_hits,
    no_match, not_ipv4 and the drop counts equal the reference's."""
    out = tmp_path / "out.pcap"
    config = write_config(
        tmp_path / "fw.yaml",
        ports=[{"name": "in", "type": "pcap", "rx": SIP_TRACE}, {"name": "out", "type": "pcap", "tx": out}],
        nfs=[{"name": "fw", "type": "firewall", "rules": EXAMPLE_RULES, "action": "drop",
              "default": "drop"}],
        chains=[{"from": "in", "path": ["fw"], "to": "out"}])
    report = run_chain(gpunfv, config)

    rules = parse_rules(EXAMPLE_RULES.read_text())
    _, frames = read_pcap(SIP_TRACE)
    hits: dict[str, int] = {}
    kept, no_match, not_ipv4, rule_drops = [], 0, 0, 0
    for _, frame in frames:
        t = five_tuple(frame)
        if t is None:
            not_ipv4 += 1
            kept.append(frame)
            continue
        i = first_match(rules, t)
        if i is None:
            no_match += 1
            continue
        hits[str(i)] = hits.get(str(i), 0) + 1
        if (rules[i]["action"] or "drop") == "drop":
            rule_drops += 1
        else:
            kept.append(frame)

    fw = report["nfs"]["fw"]
    assert fw["rule_hits"] == hits
    assert fw["no_match"] == no_match and fw["not_ipv4"] == not_ipv4
    assert fw["rules"] == len(rules)
    assert fw["drops"] == {"firewall_rule": rule_drops, "firewall_default": no_match}
    assert [f for _, f in read_pcap(out)[1]] == kept
    assert rule_drops > 0 and no_match > 0 and not_ipv4 > 0


def test_classbench_set_with_default_accept(gpunfv, tmp_path):
    """A 10k ClassBench set (gzipped, no action words: every rule takes `action: accept`), the
    default drop: counts equal the reference's over the capture."""
    config = write_config(
        tmp_path / "fw.yaml",
        ports=[{"name": "in", "type": "pcap", "rx": SIP_TRACE}, {"name": "out", "type": "discard"}],
        nfs=[{"name": "fw", "type": "firewall", "rules": CLASSBENCH_10K, "action": "accept",
              "default": "drop"}],
        chains=[{"from": "in", "path": ["fw"], "to": "out"}])
    report = run_chain(gpunfv, config)
    rules = parse_rules(gzip.decompress(CLASSBENCH_10K.read_bytes()).decode())
    assert report["nfs"]["fw"]["rules"] == len(rules) == 9379
    hits: dict[str, int] = {}
    no_match = 0
    answer: dict[tuple, int | None] = {}  # the capture has few distinct 5-tuples
    for _, frame in read_pcap(SIP_TRACE)[1]:
        t = five_tuple(frame)
        if t is None:
            continue
        if t not in answer:
            answer[t] = first_match(rules, t)
        i = answer[t]
        if i is None:
            no_match += 1
        else:
            hits[str(i)] = hits.get(str(i), 0) + 1
    assert report["nfs"]["fw"]["rule_hits"] == hits
    assert report["nfs"]["fw"]["drops"] == ({"firewall_default": no_match} if no_match else {})


def bad_rules_error(gpunfv, tmp_path, rules_text: str, extra: str = "") -> str:
    rules = tmp_path / "bad.rules"
    rules.write_text(rules_text)
    config = tmp_path / "c.yaml"
    config.write_text(f"""\
ports:
  - {{name: in, type: pcap, rx: "{SIP_TRACE}"}}
  - {{name: out, type: "discard"}}
nfs:
  - {{name: fw, type: firewall, rules: "{rules}"{extra}}}
chains:
  - {{from: in, path: [fw], to: out}}
""")
    proc = run_gpunfv(gpunfv, "run", config, timeout=30)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpunfv: error: "), proc.stderr
    return lines[0]


def test_bad_rule_files_name_file_and_line(gpunfv, tmp_path):
    ok = "@10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF 0x0000/0x0000\n"
    cases = {
        "@10.0.0.0/33 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF\n": "above 32",
        "@10.0.0.1/8 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF\n": "host bits set",
        "@10.0.0.0/8 0.0.0.0/0 9 : 8 0 : 65535 0x06/0xFF\n": "low end above its high end",
        "@10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xF0\n": "not supported",
        "@10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF 0x0000/0x0000 reject\n":
            "unknown action 'reject'",
        "@10.0.0.0/8 0.0.0.0/0 0 : 65535\n": "fields",
    }
    for line, needle in cases.items():
        msg = bad_rules_error(gpunfv, tmp_path, ok + line)
        assert re.search(r"bad\.rules:2: ", msg), msg
        assert needle in msg, msg
    msg = bad_rules_error(gpunfv, tmp_path, ok, ", default: maybe")
    assert "unknown action 'maybe'" in msg, msg


def test_empty_rule_file_takes_the_default(gpunfv, tmp_path):
    rules = tmp_path / "empty.rules"
    rules.write_text("# no rules\n")
    config = write_config(
        tmp_path / "fw.yaml",
        ports=[{"name": "in", "type": "pcap", "rx": SIP_TRACE}, {"name": "out", "type": "discard"}],
        nfs=[{"name": "fw", "type": "firewall", "rules": rules, "default": "drop"}],
        chains=[{"from": "in", "path": ["fw"], "to": "out"}])
    report = run_chain(gpunfv, config)
    fw = report["nfs"]["fw"]
    assert fw["rules"] == 0 and fw["rule_hits"] == {}
    assert fw["drops"] == {"firewall_default": fw["no_match"]}
    assert fw["out"] == fw["not_ipv4"] > 0
