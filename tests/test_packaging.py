"""Packaging: the wheel carries the core and the adapters; the editable install maps adapters/."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import tracebridge.adapters
from tracebridge.registry import ADAPTER_NAMES

ROOT = Path(__file__).resolve().parents[1]


def test_the_editable_install_serves_adapters_from_the_top_level_folder() -> None:
    assert Path(tracebridge.adapters.__file__).resolve() == ROOT / "adapters" / "__init__.py"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(out), str(ROOT)],
        check=True, capture_output=True,
    )
    (built,) = out.glob("tracebridge-*.whl")
    return built


def test_the_wheel_holds_core_adapters_types_and_the_command(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    names = set(archive.namelist())
    folder = ROOT / "adapters"
    adapters = {p.relative_to(folder).as_posix() for p in folder.rglob("*.py")}
    assert len(adapters) > len(ADAPTER_NAMES)  # every adapter package and its private modules
    assert {f"tracebridge/adapters/{name}" for name in adapters} <= names
    assert {"tracebridge/__init__.py", "tracebridge/py.typed", "tracebridge/cli.py",
            "_tracebridge_cli.py"} <= names
    (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    # the console script starts in a top-level module that covers Ctrl-C during the imports
    assert "tracebridge = _tracebridge_cli:main" in archive.read(entry_points).decode()
    metadata = archive.read(entry_points.replace("entry_points.txt", "METADATA"))
    requires = [line for line in metadata.decode().splitlines() if line.startswith("Requires-Dist")]
    core = [line for line in requires if "extra ==" not in line]
    assert core == ["Requires-Dist: pydantic<3,>=2.14.2"]  # tomli for 3.10 is the gate extra
    # the license the metadata names ships with it
    assert "License-Expression: Apache-2.0" in metadata.decode().splitlines()
    (license_file,) = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
    assert archive.read(license_file) == (ROOT / "LICENSE").read_bytes()


def test_the_installed_wheel_imports_every_adapter(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
         str(wheel)],
        check=True, capture_output=True,
    )
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import tracebridge, tracebridge.adapters as a; from tracebridge.registry import "
        "ADAPTER_NAMES, get_adapter; [get_adapter(n) for n in ADAPTER_NAMES];"
        "print(a.__file__.startswith(sys.argv[1]))"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", code, str(target)], capture_output=True, text=True,
        cwd=tmp_path,
    )
    assert (done.returncode, done.stdout.strip()) == (0, "True"), done.stderr
