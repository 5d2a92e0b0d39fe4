"""NF plugins built the way their authors build them: against the SDK that `cmake --install`
puts out from gpunfv's own build tree. On a GPU host, where gpunfv comes packaged without its
build tree, an environment variable names a plugin built beside it instead."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest


def build_dir(gpunfv: Path) -> Path:
    folder = gpunfv.resolve().parent
    if not (folder / "CMakeCache.txt").exists():
        pytest.skip(f"{gpunfv} is not in a CMake build tree: no SDK to install")
    return folder


def installed_sdk(gpunfv: Path, tmp_path_factory) -> Path:
    """The SDK, installed once per session."""
    sdk = tmp_path_factory.getbasetemp() / "gpunfv-sdk"
    if not (sdk / "lib" / "cmake" / "gpunfv").exists():
        run(["cmake", "--install", build_dir(gpunfv), "--prefix", sdk])
    return sdk


def build_plugin(gpunfv: Path, tmp_path_factory, source: Path, name: str, env: str) -> Path:
    """Builds the plugin project in `source` (its library: lib`name`.so); `env` may name one
    built already."""
    if os.environ.get(env):
        return Path(os.environ[env])
    sdk = installed_sdk(gpunfv, tmp_path_factory)
    out = tmp_path_factory.mktemp(f"plugin-{name}")
    run(["cmake", "-S", source, "-B", out, f"-DCMAKE_PREFIX_PATH={sdk}", "-DCMAKE_BUILD_TYPE=Release"])
    run(["cmake", "--build", out])
    library = out / f"lib{name}.so"
    assert library.exists()
    return library


def run(step: list) -> None:
    proc = subprocess.run([str(s) for s in step], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{step}\n{proc.stdout}\n{proc.stderr}"
