"""The GPU ring port is parsed and checked like any port: bad keys get a clear error naming file
and line, never a crash. Chains fed by it: test_gpuring_chain.py."""
from __future__ import annotations

from test_config_errors import config_file, expect_config_error


def test_gpuring_bad_ring_size_names_line(gpunfv, tmp_path):
    config = config_file(tmp_path, """\
ports:
  - name: gr
    type: gpuring
    ring_size: 100
    source: {type: generator, count: 10}
chains:
  - {from: gr, path: []}
""")
    expect_config_error(gpunfv, config, "config.yaml:4", "power of two")
