"""The HTML report: `gpunfv run ... --report-html` and `gpunfv report r.json --html r.html`.

The page must be self-contained (no script, stylesheet, image or font from elsewhere), hold its
tables and one inline SVG plot per section (drops by reason, latency CDF, throughput, queue
occupancy, batch sizes), and render in a real headless browser (Debian's chromium) without a
console message; the screenshot's plots must put ink on the page (non-background pixels, against
the same page with its plots taken out). A malformed or missing report is refused with exit 2.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import ROUTER_DATA, TRACES, check_accounting, run_gpunfv, write_config

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PLOTS = ("plot-drops", "plot-latency-cdf", "plot-throughput", "plot-queues", "plot-batches")


class Page(HTMLParser):
    """The page's figures (id -> has an <svg> inside) and every outside reference."""

    def __init__(self):
        super().__init__()
        self.figures: dict[str, bool] = {}
        self.open_figure: str | None = None
        self.outside: list[str] = []
        self.tables = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "figure":
            self.open_figure = a.get("id")
            self.figures[self.open_figure] = False
        elif tag == "svg" and self.open_figure:
            self.figures[self.open_figure] = True
        elif tag == "table":
            self.tables += 1
        if tag in ("script", "link", "iframe", "object", "embed"):
            self.outside.append(tag)
        for k in ("src", "href", "xlink:href"):
            if a.get(k) and not a[k].startswith("#"):
                self.outside.append(f"{tag} {k}={a[k]}")

    def handle_endtag(self, tag):
        if tag == "figure":
            self.open_figure = None


def parse(html: str) -> Page:
    p = Page()
    p.feed(html)
    assert not re.search(r"url\((?!#)", html), "the page loads something through CSS"
    return p


def chromium(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--enable-logging=stderr", "--v=0", f"--user-data-dir={cwd / 'chromium-profile'}",
                           *args], capture_output=True, text=True, timeout=180, cwd=cwd)


def console_messages(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def ink(png: Path) -> int:
    """Pixels that are not the page's white background."""
    from PIL import Image
    img = Image.open(png).convert("L")
    return sum(n for level, n in enumerate(img.histogram()) if level < 240)


@pytest.fixture(scope="module")
def report(gpunfv, tmp_path_factory) -> tuple[Path, Path, dict]:
    d = tmp_path_factory.mktemp("html")
    rules = d / "fw.rules"
    rules.write_text("@0.0.0.0/0 0.0.0.0/0 0 : 65535 1024 : 20000 0x11/0xFF 0x0000/0x0000 drop\n")
    cfg = write_config(
        d / "h.yaml",
        ports=[{"name": "in", "type": "generator", "rate": "50kpps", "size": "64-512", "flows": 256,
                "count": 120000, "dst_from": "r1"},
               {"name": "p1", "type": "discard"}, {"name": "p2", "type": "discard"}],
        nfs=[{"name": "fw", "type": "firewall", "rules": rules, "action": "drop", "default": "accept"},
             {"name": "r1", "type": "router", "routes": ROUTER_DATA / "example.routes"}],
        chains=[{"from": "in", "path": ["fw", "r1"]}])
    r = run_gpunfv(gpunfv, "run", cfg, "--backend", "cpu", "-q", "--report", d / "r.json",
                   "--report-html", d / "run.html", timeout=300)
    assert r.returncode == 0, r.stderr
    rep = json.loads((d / "r.json").read_text())
    check_accounting(rep)
    return d, d / "run.html", rep


def test_report_has_a_time_series_and_latency_buckets_that_add_up(report):
    _, _, rep = report
    ts = rep["timeseries"]
    assert len(ts["t_s"]) == len(ts["dt_s"]) >= 1
    for name, p in rep["ports"].items():
        assert sum(ts["ports"][name]["rx_packets"]) == p["rx_packets"]
        assert sum(ts["ports"][name]["tx_packets"]) == p["tx_packets"]
        assert sum(ts["ports"][name]["tx_bytes"]) == p["tx_bytes"]
        assert sum(ts["ports"][name]["dropped"]) == p["dropped"]
    for name, n in rep["nfs"].items():
        assert sum(ts["nfs"][name]["in"]) == n["in"]
        assert sum(ts["nfs"][name]["drops"]) == sum(n["drops"].values())
    assert set(ts["stages"]) == {"in/fw", "in/r1"}
    assert all("sm_share" not in s for s in ts["stages"].values())  # the CPU backend: no GPU policy
    lat = rep["latency_ns"]
    assert sum(n for _, n in lat["buckets"]) == lat["count"] > 0
    uppers = [u for u, _ in lat["buckets"]]
    assert uppers == sorted(uppers) and uppers[-1] >= lat["max"]


def test_page_is_self_contained_with_every_plot(gpunfv, report):
    d, run_html, _ = report
    r = run_gpunfv(gpunfv, "report", d / "r.json", "--html", d / "cmd.html")
    assert r.returncode == 0, r.stderr
    for path in (run_html, d / "cmd.html"):
        html = path.read_text()
        page = parse(html)
        assert page.outside == [], page.outside
        assert page.tables >= 4  # ports, NFs, totals, drops by reason
        for plot in PLOTS:
            assert page.figures.get(plot) is True, (plot, page.figures)
        assert "firewall_rule" in html and "No GPU sharing policy ran" in html


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (scripts/install-deps.sh installs it)")
def test_page_renders_in_a_headless_browser(report):
    d, html, _ = report
    # The console check catches what it looks for: a page that logs an error fails it.
    bad = d / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><script>console.error('broken')</script></body></html>")
    assert console_messages(chromium("--dump-dom", bad.as_uri(), cwd=d).stderr)

    r = chromium("--dump-dom", html.as_uri(), cwd=d)
    assert r.returncode == 0, r.stderr[-2000:]
    assert console_messages(r.stderr) == []
    dom = parse(r.stdout)
    for plot in PLOTS:
        assert dom.figures.get(plot) is True, (plot, dom.figures)

    # Ink: the page against itself with every figure taken out.
    bare = d / "bare.html"
    bare.write_text(re.sub(r"<figure .*?</figure>", "", html.read_text(), flags=re.S))
    inked = {}
    for name, page in (("full", html), ("bare", bare)):
        png = d / f"{name}.png"
        r = chromium("--window-size=1200,6000", f"--screenshot={png}", page.as_uri(), cwd=d)
        assert r.returncode == 0 and png.exists(), r.stderr[-2000:]
        assert console_messages(r.stderr) == []
        inked[name] = ink(png)
    # Each plot (axes, ticks, labels, lines) inks well over 10,000 pixels at this size.
    assert inked["full"] - inked["bare"] > 10_000 * len(PLOTS), inked


@pytest.mark.parametrize("content, message", [
    (None, "cannot read"),
    ("{not json", "not JSON"),
    ('{"x": 1}', "not a gpunfv report"),
    ('{"ports": {"in": 5}}', "malformed report"),
])
def test_bad_reports_are_refused(gpunfv, tmp_path, content, message):
    src = tmp_path / "r.json"
    if content is not None:
        src.write_text(content)
    r = run_gpunfv(gpunfv, "report", src, "--html", tmp_path / "r.html")
    assert r.returncode == 2, r.stderr
    assert message in r.stderr and str(src) in r.stderr, r.stderr
    assert not (tmp_path / "r.html").exists()


def test_run_writes_the_page_without_a_json_report(gpunfv, tmp_path):
    cfg = write_config(tmp_path / "p.yaml",
                       ports=[{"name": "in", "type": "pcap", "rx": TRACES / "SIP_CALL_RTP_G711.pcap"},
                              {"name": "p1", "type": "discard"}, {"name": "p2", "type": "discard"}],
                       nfs=[{"name": "r1", "type": "router", "routes": ROUTER_DATA / "example.routes"}],
                       chains=[{"from": "in", "path": ["r1"]}])
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    r = subprocess.run([str(gpunfv), "run", str(cfg), "-q", "--backend", "cpu", "--report-html", str(tmp_path / "p.html")],
                       capture_output=True, text=True, timeout=120, env={**os.environ, "TMPDIR": str(tmp)})
    assert r.returncode == 0, r.stderr
    page = parse((tmp_path / "p.html").read_text())
    assert page.figures.get("plot-latency-cdf") is True and page.figures.get("plot-drops") is True
    assert list(tmp.iterdir()) == []  # the temporary JSON copy is gone
    # A page that cannot be written fails the run after it; the JSON report is still written.
    r = run_gpunfv(gpunfv, "run", cfg, "-q", "--backend", "cpu", "--report", tmp_path / "r.json",
                   "--report-html", tmp_path / "no-such-dir" / "p.html")
    assert r.returncode == 1 and "cannot write" in r.stderr, r.stderr
    check_accounting(json.loads((tmp_path / "r.json").read_text()))
