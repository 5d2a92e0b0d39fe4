"""The traffic generator: a router fed with destinations drawn from its own table, a run cut
short by --duration, and generated frames checked by tshark (IPv4/UDP, good checksums) and by a
reference of the `spread:` next-hop rule of data/router/README.md."""
from __future__ import annotations

from collections import Counter


from conftest import ROUTER_DATA, ip_to_int, read_pcap, run_chain, run_gpunfv, tshark_count, \
    tshark_fields, write_config

RANDOM5000 = ROUTER_DATA / "bart_ipv4_random5000.txt"
IMIX_SIZES = {64: 7, 570: 4, 1518: 1}  # 7:4:1


def generator(**keys) -> dict:
    return {"name": "gen", "type": "generator", **keys}


def discard_port(name: str) -> dict:
    return {"name": name, "type": "discard"}


def test_generator_through_router_full_accounting(gpunfv, tmp_path):
    count = 200_000
    config = write_config(
        tmp_path / "gen.yaml",
        ports=[generator(count=count, size="imix", flows=100, dst_from="r1", seed=5),
               discard_port("p1"), discard_port("p2")],
        nfs=[{"name": "r1", "type": "router",
              "routes": {"file": RANDOM5000, "spread": ["p1", "p2"]}}],
        chains=[{"from": "gen", "path": ["r1"]}],
        settings={"batch_size": 1024, "batches": 16})
    report = run_chain(gpunfv, config)
    gen, p1, p2 = (report["ports"][p] for p in ("gen", "p1", "p2"))
    assert gen["rx_packets"] == count
    # Destinations come from the table and TTL is 64: every packet is routed.
    assert gen["drops"] == {} and gen["forwarded"] == count
    r1 = report["nfs"]["r1"]
    assert {k: r1[k] for k in ("type", "in", "out", "drops")} == \
        {"type": "router", "in": count, "out": count, "drops": {}}
    # One table version (no update came) processed every packet.
    assert r1["table_versions"] == [{"version": 1, "change": "start", "entries": 5000,
                                     "packets": count}]
    assert p1["tx_packets"] > 0 and p2["tx_packets"] > 0
    assert p1["tx_packets"] + p2["tx_packets"] == count
    assert p1["tx_bytes"] + p2["tx_bytes"] == gen["rx_bytes"]
    # IMIX 7:4:1 of 64/570/1518 bytes: the byte count is that mix's to within one cycle.
    cycle = sum(n for n in IMIX_SIZES.values())
    mean = sum(size * n for size, n in IMIX_SIZES.items()) / cycle
    assert abs(gen["rx_bytes"] - count * mean) <= cycle * 1518


def test_duration_stops_an_endless_generator(gpunfv, tmp_path):
    config = write_config(
        tmp_path / "endless.yaml",
        ports=[generator(duration=100, size=64, flows=16), discard_port("out")],
        chains=[{"from": "gen", "to": "out"}],
        settings={"batch_size": 256, "batches": 8})
    report = run_chain(gpunfv, config, "--duration", "1", timeout=30)
    gen = report["ports"]["gen"]
    assert gen["rx_packets"] > 0
    assert gen["forwarded"] == gen["rx_packets"] == report["ports"]["out"]["tx_packets"]
    assert 0.9 <= report["elapsed_s"] < 10, report["elapsed_s"]


def test_duration_stops_a_large_count(gpunfv, tmp_path):
    config = write_config(
        tmp_path / "large.yaml",
        ports=[generator(count=10**13, size="64-1518", flows=64), discard_port("out")],
        chains=[{"from": "gen", "to": "out"}])
    report = run_chain(gpunfv, config, "--duration", "0.5", timeout=30)
    gen = report["ports"]["gen"]
    assert 0 < gen["rx_packets"] < 10**13
    assert gen["forwarded"] == gen["rx_packets"]
    assert report["elapsed_s"] < 10, report["elapsed_s"]


def test_generated_frames_with_tshark(gpunfv, tmp_path):
    out = tmp_path / "gen.pcap"
    config = write_config(
        tmp_path / "genpcap.yaml",
        ports=[generator(count=1000, size="imix", flows=50),
               {"name": "out", "type": "pcap", "tx": out}],
        chains=[{"from": "gen", "to": "out"}])
    report = run_chain(gpunfv, config)
    assert report["ports"]["out"]["tx_packets"] == 1000
    prefs = ("ip.check_checksum:TRUE", "udp.check_checksum:TRUE")
    assert tshark_count(out) == 1000
    assert tshark_count(out, "eth.type == 0x0800 && ip.version == 4 && udp", prefs) == 1000
    assert tshark_count(out, 'ip.checksum.status == "Good"', prefs) == 1000
    assert tshark_count(out, 'udp.checksum.status == "Good"', prefs) == 1000
    assert tshark_count(out, 'ip.checksum.status == "Bad" || udp.checksum.status == "Bad"',
                        prefs) == 0
    rows = tshark_fields(out, ["frame.len", "ip.len", "udp.length", "ip.ttl", "ip.src",
                               "ip.flags.mf", "ip.frag_offset"])
    sizes = Counter()
    flows = set()
    for frame_len, ip_len, udp_len, ttl, src, mf, frag in rows:
        sizes[int(frame_len)] += 1
        assert int(ip_len) == int(frame_len) - 14 and int(udp_len) == int(frame_len) - 34
        assert ttl == "64" and mf in ("0", "False") and frag == "0"
        assert ip_to_int(src) >> 24 == 10  # sources in 10.0.0.0/8
        flows.add(src)
    assert set(sizes) == set(IMIX_SIZES)
    assert sizes[64] > sizes[570] > sizes[1518]
    assert 1 < len(flows) <= 50


def fnv1a_32(data: bytes) -> int:
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def test_spread_next_hops_match_readme(gpunfv, tmp_path):
    """Each routed packet leaves on spread[fnv1a_32(a, b, c, d, len) % 2] of the longest
    prefix of the table that holds its destination (data/router/README.md)."""
    spread = ["p1", "p2"]
    out = {p: tmp_path / f"{p}.pcap" for p in spread}
    config = write_config(
        tmp_path / "spread.yaml",
        ports=[generator(count=3000, size=64, flows=1000, dst_from="r1", seed=9)] +
              [{"name": p, "type": "pcap", "tx": out[p]} for p in spread],
        nfs=[{"name": "r1", "type": "router",
              "routes": {"file": RANDOM5000, "spread": spread}}],
        chains=[{"from": "gen", "path": ["r1"]}])
    report = run_chain(gpunfv, config)
    assert report["ports"]["gen"]["forwarded"] == 3000

    by_len: dict[int, set[int]] = {}
    for line in RANDOM5000.read_text().split():
        addr, length = line.split("/")
        by_len.setdefault(int(length), set()).add(ip_to_int(addr))
    lengths = sorted(by_len, reverse=True)

    def next_hop(dst: int) -> str | None:
        for length in lengths:
            net = dst & ((0xFFFFFFFF << (32 - length)) & 0xFFFFFFFF if length else 0)
            if net in by_len[length]:
                key = net.to_bytes(4, "big") + bytes([length])
                return spread[fnv1a_32(key) % len(spread)]
        return None

    total = 0
    for port, path in out.items():
        _, frames = read_pcap(path)
        assert frames, port
        for _, frame in frames:
            assert frame[14 + 8] == 63  # TTL 64, decremented
            assert next_hop(int.from_bytes(frame[14 + 16:14 + 20], "big")) == port
        total += len(frames)
    assert total == 3000


def test_null_port_type_unquoted(gpunfv, tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text(
        "ports:\n"
        "  - {name: gen, type: generator, count: 100}\n"
        "  - name: out\n"
        "    type: null\n"
        "chains:\n"
        "  - {from: gen, to: out}\n")
    proc = run_gpunfv(gpunfv, "run", config, "-q", timeout=30)
    if proc.returncode == 0:
        assert run_chain(gpunfv, config)["ports"]["out"]["tx_packets"] == 100
    else:
        assert proc.returncode == 2, proc.stderr
        assert f"{config}:4" in proc.stderr and "discard" in proc.stderr, proc.stderr


def test_generator_is_deterministic(gpunfv, tmp_path):
    """Same seed, same frames (timestamps aside: they are the time of generation)."""
    frames = []
    for run in range(2):
        out = tmp_path / f"det{run}.pcap"
        config = write_config(
            tmp_path / f"det{run}.yaml",
            ports=[generator(count=500, size="64-1518", flows=20, seed=42),
                   {"name": "out", "type": "pcap", "tx": out}],
            chains=[{"from": "gen", "to": "out"}])
        run_chain(gpunfv, config)
        frames.append([f for _, f in read_pcap(out)[1]])
    assert len(frames[0]) == 500 and frames[0] == frames[1]
    assert len({len(f) for f in frames[0]}) > 10
    assert all(64 <= len(f) <= 1518 for f in frames[0])


def test_queues_deliver_one_queues_frames_with_flow_order(gpunfv, tmp_path):
    """queues: 4 (four ingress threads) delivers the frames of queues: 1, and each flow's
    frames in the same order."""
    def run(queues: int) -> dict[bytes, list[bytes]]:
        out = tmp_path / f"q{queues}.pcap"
        config = write_config(
            tmp_path / f"q{queues}.yaml",
            ports=[generator(count=20_011, size="64-700", flows=300, seed=11, queues=queues),
                   {"name": "out", "type": "pcap", "tx": out}],
            chains=[{"from": "gen", "to": "out"}],
            settings={"batch_size": 128, "batches": 16, "batch_deadline_us": 10})
        report = run_chain(gpunfv, config)
        assert report["ports"]["gen"]["rx_packets"] == 20_011
        assert report["ports"]["out"]["tx_packets"] == 20_011
        flows: dict[bytes, list[bytes]] = {}
        for _, frame in read_pcap(out)[1]:
            flows.setdefault(frame[26:38], []).append(frame)
        return flows

    assert run(4) == run(1)
