"""Input limits: an input file larger than settings.max_input_file_mb (decompressed), a NIDS
rule set past the NF's max_rules or max_automaton_mb, a firewall rule file past max_rules, a
batch pool larger than settings.max_pool_memory_percent of the machine's memory, and a
configuration file past the input limit. Each ends the run with exit 2 and one error line naming
the file and line."""
from __future__ import annotations

import gzip
import random
import re
from pathlib import Path

from conftest import TRACES
from test_config_errors import config_file, expect_config_error, q

DNS = TRACES / "dns.cap"
CLASSBENCH_ANY = "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00\n"


def chain_config(tmp_path: Path, nf_lines: str, settings: str = "") -> Path:
    """Ports on lines 2-3, the NF from line 5 on (named nf), then the chain and `settings`."""
    return config_file(tmp_path, f"""\
ports:
  - {{name: in, type: pcap, rx: {q(DNS)}}}
  - {{name: out, type: discard}}
nfs:
{nf_lines}
chains:
  - {{from: in, path: [nf], to: out}}
{settings}""")


def distinct_routes(count: int) -> str:
    return "".join(f"{10 + (i >> 16)}.{(i >> 8) & 255}.{i & 255}.0/24 out\n" for i in range(count))


def nids_rules(count: int, content_bytes: int = 4, seed: int = 1) -> str:
    rng = random.Random(seed)
    lines = []
    for sid in range(1, count + 1):
        content = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(content_bytes))
        lines.append(f'alert tcp any any -> any any (msg:"r{sid}"; content:"{content}"; sid:{sid};)\n')
    return "".join(lines)


def test_route_file_from_dev_zero(gpunfv, tmp_path):
    config = chain_config(tmp_path, "  - {name: nf, type: router, routes: /dev/zero}",
                          "settings:\n  max_input_file_mb: 1\n")
    expect_config_error(gpunfv, config, f"{config}:5", "/dev/zero: route file holds more than 1 MiB",
                        "max_input_file_mb")


def test_gzipped_route_file_past_the_limit_once_decompressed(gpunfv, tmp_path):
    routes = tmp_path / "big.routes.gz"
    routes.write_bytes(gzip.compress(distinct_routes(70000).encode()))  # 1.3 MB of text
    assert routes.stat().st_size < 1 << 20
    config = chain_config(tmp_path, f"  - {{name: nf, type: router, routes: {{file: {q(routes)}}}}}",
                          "settings:\n  max_input_file_mb: 1\n")
    expect_config_error(gpunfv, config, f"{config}:5", f"{routes}: route file holds more than 1 MiB")


def test_firewall_rule_file_past_the_limit(gpunfv, tmp_path):
    rules = tmp_path / "big.rules"
    rules.write_text(CLASSBENCH_ANY * 25000)  # 1.3 MB, below the rule count limit
    config = chain_config(tmp_path, f"  - {{name: nf, type: firewall, rules: {q(rules)}}}",
                          "settings:\n  max_input_file_mb: 1\n")
    expect_config_error(gpunfv, config, f"{config}:5", f"{rules}: rule file holds more than 1 MiB")


def test_gzipped_nids_rule_file_past_the_limit_names_its_list_line(gpunfv, tmp_path):
    small = tmp_path / "small.rules"
    small.write_text(nids_rules(3))
    big = tmp_path / "big.rules.gz"
    big.write_bytes(gzip.compress(nids_rules(1, seed=2).encode() * 20000))  # ~1.6 MB of text
    config = chain_config(tmp_path, f"""\
  - name: nf
    type: nids
    rules:
      - {q(small)}
      - {q(big)}""", "settings:\n  max_input_file_mb: 1\n")
    expect_config_error(gpunfv, config, f"{config}:9", f"{big}: rule file holds more than 1 MiB")


def test_nids_automaton_past_max_automaton_mb(gpunfv, tmp_path):
    rules = tmp_path / "many.rules"
    rules.write_text(nids_rules(400, content_bytes=16))  # ~6400 content bytes: ~7 MiB of automaton
    config = chain_config(tmp_path, f"""\
  - name: nf
    type: nids
    rules: {q(rules)}
    max_automaton_mb: 1""")
    line = expect_config_error(gpunfv, config, f"{config}:7", "nids nf", "max_automaton_mb (1 MiB)",
                               "400 distinct contents")
    assert "states, about" in line


def test_nids_rule_count_past_max_rules(gpunfv, tmp_path):
    rules = tmp_path / "five.rules"
    rules.write_text("# five rules\n" + nids_rules(5))
    config = chain_config(tmp_path, f"  - {{name: nf, type: nids, rules: {q(rules)}, max_rules: 3}}")
    # The fourth rule is on line 5 of the file.
    expect_config_error(gpunfv, config, f"{rules}:5", "nids nf: more than 3 rules", "max_rules")


def test_firewall_rule_count_past_max_rules(gpunfv, tmp_path):
    rules = tmp_path / "three.rules"
    rules.write_text(CLASSBENCH_ANY * 3)
    config = chain_config(tmp_path, f"  - {{name: nf, type: firewall, rules: {q(rules)}, max_rules: 2}}")
    expect_config_error(gpunfv, config, f"{rules}:3", "more than 2 rules", "max_rules")


def test_firewall_max_rules_above_the_rule_index_range(gpunfv, tmp_path):
    rules = tmp_path / "one.rules"
    rules.write_text(CLASSBENCH_ANY)
    config = chain_config(tmp_path, f"  - {{name: nf, type: firewall, rules: {q(rules)}, max_rules: 65537}}")
    expect_config_error(gpunfv, config, f"{config}:5", "65537", "[1, 65536]")


def test_batch_pool_larger_than_memory(gpunfv, tmp_path):
    routes = tmp_path / "r.routes"
    routes.write_text("10.0.0.0/8 out\n")
    config = chain_config(tmp_path, f"  - {{name: nf, type: router, routes: {q(routes)}}}", """\
settings:
  batch_size: 1048576
  batches: 65536
""")
    line = expect_config_error(gpunfv, config, f"{config}:10", "batch pool", "65536 batches of 1048576 packets",
                               "max_pool_memory_percent (50%)")
    assert re.search(r"takes \d+ GiB, .* of this machine's \d+ [MG]iB: \d+ [MG]iB", line), line


def test_batch_pool_share_is_configurable(gpunfv, tmp_path):
    # 64 batches of 1Mi packets: tens of GiB, far above 1% of any machine this runs on.
    routes = tmp_path / "r.routes"
    routes.write_text("10.0.0.0/8 out\n")
    config = chain_config(tmp_path, f"  - {{name: nf, type: router, routes: {q(routes)}}}", """\
settings:
  max_pool_memory_percent: 1
  batch_size: 1048576
""")
    expect_config_error(gpunfv, config, f"{config}:10", "max_pool_memory_percent (1%)")


def test_config_file_past_the_default_limit(gpunfv, tmp_path):
    config = chain_config(tmp_path, "  - {name: nf, type: router, routes: /dev/null}")
    with open(config, "r+b") as f:  # sparse: no disk used
        f.truncate((256 << 20) + 1)
    expect_config_error(gpunfv, config, str(config), "more than 256 MiB")
