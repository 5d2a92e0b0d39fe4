"""NIDS chains over a real HTTP capture, checked against a naive reference written here.

The reference reads each frame's payload itself (src/nf/nids/nids_logic.h says which bytes: after
the TCP/UDP header, up to the IP total length; a later IPv4 fragment's bytes after the IP
header) and looks for every content of a hand-written rule file with Python's bytes.find. A rule
fires when all of its contents occur; the NF logs the 7 lowest-numbered rules of a packet.
"""
from __future__ import annotations

import json
from pathlib import Path

from conftest import TRACES, read_pcap, run_chain, run_gpunfv, write_config

HTTP_TRACE = TRACES / "http_with_jpegs.cap"

RULES = r"""# hand-written rules for http_with_jpegs.cap
alert http any any -> any any (msg:"jpeg request"; content:"GET "; content:".JPG"; nocase; sid:1001; rev:1;)
alert http any any -> any any (msg:"jpeg response"; content:"image/jpeg"; sid:1002;)
alert tcp any any -> any any (msg:"JFIF \"marker\""; content:"|FF D8 FF E0|"; content:"JFIF"; sid:1003;)
alert http any any -> any any (msg:"wrong case"; content:"CONTENT-TYPE|3a| IMAGE"; sid:1004;)
alert http any any -> any any (msg:"browser"; content:"User-Agent|3a|"; content:"Mozilla"; content:!"curl"; sid:1005;)
# alert tcp any any -> any any (msg:"disabled"; content:"GET"; sid:1006;)
alert tcp any any -> any any (msg:"no content"; dsize:0; sid:1007;)
"""

# (sid, msg, [(bytes, nocase)]) of the loaded rules, in file order.
REFERENCE_RULES = [
    (1001, "jpeg request", [(b"GET ", False), (b".jpg", True)]),
    (1002, "jpeg response", [(b"image/jpeg", False)]),
    (1003, 'JFIF "marker"', [(b"\xff\xd8\xff\xe0", False), (b"JFIF", False)]),
    (1004, "wrong case", [(b"CONTENT-TYPE: IMAGE", False)]),
    (1005, "browser", [(b"User-Agent:", False), (b"Mozilla", False)]),
]


def payload(frame: bytes) -> bytes:
    if int.from_bytes(frame[12:14], "big") != 0x0800:
        return b""
    ip = 14
    ihl = (frame[ip] & 0x0F) * 4
    end = ip + int.from_bytes(frame[ip + 2:ip + 4], "big")
    frag_offset = int.from_bytes(frame[ip + 6:ip + 8], "big") & 0x1FFF
    proto = frame[ip + 9]
    start = ip + ihl
    if frag_offset == 0 and proto == 6:
        start += (frame[start + 12] >> 4) * 4
    elif frag_offset == 0 and proto == 17:
        start += 8
    return frame[start:end]


def fired(data: bytes) -> list[int]:
    """Sids of the reference rules that fire on `data`, in rule order."""
    out = []
    for sid, _msg, contents in REFERENCE_RULES:
        if all((data.lower().find(c.lower()) if nocase else data.find(c)) >= 0
               for c, nocase in contents):
            out.append(sid)
    return out


def nids_config(tmp_path: Path, action: str, settings: dict | None = None) -> Path:
    rules = tmp_path / "http.rules"
    rules.write_text(RULES)
    return write_config(
        tmp_path / "nids.yaml",
        ports=[{"name": "in", "type": "pcap", "rx": str(HTTP_TRACE)},
               {"name": "out", "type": "pcap", "tx": str(tmp_path / "out.pcap")}],
        nfs=[{"name": "ids", "type": "nids", "rules": [str(rules)], "action": action,
              "alerts": str(tmp_path / "alerts.json")}],
        chains=[{"from": "in", "path": ["ids"], "to": "out"}], settings=settings)


def expected_alerts() -> list[tuple[int, int]]:
    _, frames = read_pcap(HTTP_TRACE)
    return [(i + 1, sid) for i, (_ts, f) in enumerate(frames) for sid in fired(payload(f))[:7]]


def logged_alerts(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_alert_log_equals_reference(gpunfv, tmp_path):
    report = run_chain(gpunfv, nids_config(tmp_path, "alert"))
    ids = report["nfs"]["ids"]
    assert ids["rules_loaded"] == 5
    assert ids["rules_skipped"] == {"no_content": 1, "total": 1}
    assert ids["rules_not_evaluated"]["negated_content"] == 1
    alerts = logged_alerts(tmp_path / "alerts.json")
    want = expected_alerts()
    assert sorted((a["pcap_cnt"], a["sid"]) for a in alerts) == sorted(want)
    assert {sid for _, sid in want} >= {1001, 1002, 1003, 1005}
    assert 1004 not in {sid for _, sid in want}  # case-sensitive: never in this trace
    assert ids["alerts"] == len(alerts) and ids["alerts_not_logged"] == 0
    msgs = {sid: msg for sid, msg, _ in REFERENCE_RULES}
    for a in alerts:
        assert a["event_type"] == "alert"
        assert a["msg"] == msgs[a["sid"]] == a["alert"]["signature"]
        assert a["alert"]["action"] == "allowed"
        assert a["timestamp"].startswith("2004-11-19T") and a["timestamp"].endswith("+0000")
        assert a["proto"] == "TCP" and a["src_ip"] and a["dest_ip"]
    # action alert passes everything on.
    _, out = read_pcap(tmp_path / "out.pcap")
    _, inp = read_pcap(HTTP_TRACE)
    assert [f for _, f in out] == [f for _, f in inp]


def test_alert_log_in_packet_order_with_several_egress_threads(gpunfv, tmp_path):
    # Small batches shared by 3 egress threads: the log's lines still come in packet order,
    # the same lines as one thread writes.
    lines = {}
    for threads in (1, 3):
        d = tmp_path / f"t{threads}"
        d.mkdir()
        run_chain(gpunfv, nids_config(d, "alert", {"batch_size": 4, "egress_threads_per_chain": threads}))
        lines[threads] = [(a["pcap_cnt"], a["sid"]) for a in logged_alerts(d / "alerts.json")]
    assert [cnt for cnt, _ in lines[3]] == sorted(cnt for cnt, _ in lines[3])
    assert lines[3] == lines[1]
    assert sorted(lines[1]) == sorted(expected_alerts())


def test_action_drop_drops_exactly_the_packets_that_fire(gpunfv, tmp_path):
    report = run_chain(gpunfv, nids_config(tmp_path, "drop"))
    _, inp = read_pcap(HTTP_TRACE)
    firing = [i for i, (_, f) in enumerate(inp) if fired(payload(f))]
    assert report["nfs"]["ids"]["drops"] == {"nids_match": len(firing)}
    assert report["nfs"]["ids"]["packets_alerted"] == len(firing)
    _, out = read_pcap(tmp_path / "out.pcap")
    assert [f for _, f in out] == [f for i, (_, f) in enumerate(inp) if i not in set(firing)]
    assert all(a["alert"]["action"] == "blocked" for a in logged_alerts(tmp_path / "alerts.json"))


def test_rule_file_without_loadable_rules_is_a_config_error(gpunfv, tmp_path):
    rules = tmp_path / "bad.rules"
    rules.write_text("alert tcp any any -> any any (msg:\"x\"; content:\"|4|\"; sid:1;)\n")
    config = write_config(
        tmp_path / "bad.yaml",
        ports=[{"name": "in", "type": "pcap", "rx": str(HTTP_TRACE)},
               {"name": "out", "type": "discard"}],
        nfs=[{"name": "ids", "type": "nids", "rules": str(rules)}],
        chains=[{"from": "in", "path": ["ids"], "to": "out"}])
    proc = run_gpunfv(gpunfv, "run", config, "-q")
    assert proc.returncode == 2, proc.stderr
    assert "no rule could be loaded" in proc.stderr and "bad.rules:1: bad_syntax" in proc.stderr
