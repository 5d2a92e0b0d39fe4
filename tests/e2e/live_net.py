"""Network namespaces and veth pairs for the live-port tests, with the real tools: tcpreplay
sends, tcpdump captures. Everything a test creates lives in one namespace named
gpunfv-test-<pid>-<n>, deleted (with its interfaces) when the test ends, pass or fail.
"""
from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

_counter = itertools.count()


def _run(*cmd: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=30, check=check)


def skip_without_netns_tools(*tools: str) -> None:
    """Skips (never passes silently) when the machine cannot run the test, saying why."""
    for t in ("ip",) + tools:
        if shutil.which(t) is None:
            pytest.skip(f"{t} not installed (scripts/install-deps.sh installs it)")
    if os.geteuid() != 0:
        pytest.skip("needs root (CAP_NET_ADMIN for network namespaces, CAP_NET_RAW for sockets)")
    probe = f"gpunfv-probe-{os.getpid()}"
    r = _run("ip", "netns", "add", probe, check=False)
    if r.returncode != 0:
        pytest.skip(f"cannot create a network namespace: {r.stderr.strip()}")
    _run("ip", "netns", "del", probe, check=False)


class Netns:
    def __init__(self) -> None:
        self.name = f"gpunfv-test-{os.getpid()}-{next(_counter)}"
        _run("ip", "netns", "add", self.name)
        # No IPv6 autoconfiguration: the kernel would send router solicitations on the links.
        self.exec("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                  "net.ipv6.conf.default.disable_ipv6=1")

    def exec(self, *cmd: str, check: bool = True) -> subprocess.CompletedProcess:
        return _run("ip", "netns", "exec", self.name, *cmd, check=check)

    def popen(self, *cmd: str, **kw) -> subprocess.Popen:
        return subprocess.Popen(["ip", "netns", "exec", self.name, *map(str, cmd)], **kw)

    def veth(self, a: str, b: str, mtu: int = 1500) -> None:
        self.exec("ip", "link", "add", a, "mtu", str(mtu), "type", "veth", "peer", "name", b,
                  "mtu", str(mtu))
        for dev in (a, b):
            self.exec("ip", "link", "set", "dev", dev, "up")

    def delete(self) -> None:
        _run("ip", "netns", "del", self.name, check=False)


@pytest.fixture
def netns():
    skip_without_netns_tools("tcpreplay", "tcpdump")
    ns = Netns()
    try:
        yield ns
    finally:
        ns.delete()


class Capture:
    """tcpdump on an interface of the namespace, writing a pcap until stopped."""

    def __init__(self, ns: Netns, dev: str, path: Path) -> None:
        self.path = path
        self.proc = ns.popen("tcpdump", "-i", dev, "-U", "-n", "-s", "0", "-w", str(path),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # tcpdump says "listening on" once its socket is bound.
        deadline = time.monotonic() + 20
        self.stderr = ""
        while "listening on" not in self.stderr:
            line = self.proc.stderr.readline()
            if not line:
                raise AssertionError(f"tcpdump on {dev} did not start: {self.stderr}")
            self.stderr += line
            if time.monotonic() > deadline:
                raise AssertionError(f"tcpdump on {dev} did not start: {self.stderr}")

    def stop(self) -> str:
        time.sleep(0.3)  # frames already sent may still be on their way through the veth
        self.proc.send_signal(signal.SIGINT)
        try:
            _, err = self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return self.stderr + (err or "")


class Gpunfv:
    """gpunfv run in the namespace; wait_ready() returns once its threads are polling."""

    def __init__(self, ns: Netns, binary: Path, config: Path, duration: float,
                 report: Path) -> None:
        self.proc = ns.popen(binary, "run", config, "--duration", duration, "--report", report,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.err_lines: list[str] = []
        self._ready = threading.Event()
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()

    def _read_stderr(self) -> None:
        for line in self.proc.stderr:
            self.err_lines.append(line)
            # The first progress line comes once every rx thread has run for a second
            # (the startup lines come before the batch pool is even allocated).
            if line.startswith("["):
                self._ready.set()
        self._ready.set()

    def wait_ready(self) -> None:
        self._ready.wait(timeout=30)
        assert self.proc.poll() is None, "gpunfv exited early:\n" + "".join(self.err_lines)

    def finish(self, timeout: float = 60) -> tuple[int, str, str]:
        try:
            out = self.proc.stdout.read()
            self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        self._reader.join(timeout=5)
        return self.proc.returncode, out, "".join(self.err_lines)
