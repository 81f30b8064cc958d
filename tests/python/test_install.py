"""Installing next to the user's torch: the library records the torch it was
built against, and ``import myns`` refuses another torch minor version with
an ImportError (naming both versions and the rebuild command) before the
library is loaded, never an undefined symbol from the dynamic loader.
(``make wheel-test`` installs a built wheel into a fresh virtualenv.)"""

import os
import re
import subprocess
import sys
from pathlib import Path

import torch

import myns

ROOT = Path(__file__).resolve().parents[2]


def test_library_records_the_running_torch():
    assert myns.built_against(myns.library_path()) == torch.__version__


def _with_recorded(tmp_path: Path, version: str) -> Path:
    """A copy of the library whose record says `version`."""
    data = bytearray(Path(myns.library_path()).read_bytes())
    i = data.index(myns._MARKER) + len(myns._MARKER)
    end = data.index(b"\0", i)
    new = version.encode()
    assert len(new) <= end - i, "the replacement must fit the record"
    data[i:end] = new + b"\0" * (end - i - len(new))
    copy = tmp_path / "libmyns.so"
    copy.write_bytes(bytes(data))
    return copy


def _import_with(lib: Path) -> subprocess.CompletedProcess:
    probe = r"""
import torch
try:
    import myns
except ImportError as e:
    print("IMPORT-ERROR:", e)
mapped = [l for l in open("/proc/self/maps") if "LIB" in l]
print("MAPPED:", len(mapped))
print("LOADED:", sorted(torch.ops.loaded_libraries))
""".replace("LIB", str(lib))
    env = dict(os.environ, MYNS_LIBRARY=str(lib), PYTHONPATH=str(ROOT / "python_loader"))
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)


def test_other_torch_is_an_import_error_with_nothing_loaded(tmp_path):
    major, minor = (int(p) for p in torch.__version__.split(".")[:2])
    other = f"{major}.{minor + 1}.0"
    r = _import_with(_with_recorded(tmp_path, other))
    assert r.returncode == 0, r.stderr
    err = next(l for l in r.stdout.splitlines() if l.startswith("IMPORT-ERROR:"))
    assert f"built against torch {other}" in err and torch.__version__ in err, err
    assert "pip install --no-build-isolation" in err, err
    assert "MAPPED: 0" in r.stdout, r.stdout  # never dlopen'd
    assert "LOADED: []" in r.stdout, r.stdout


def test_same_minor_other_patch_loads(tmp_path):
    # A patch release of the same torch keeps its ABI: no error.
    base = torch.__version__.split("+")[0]
    r = _import_with(_with_recorded(tmp_path, re.sub(r"\.\d+$", ".9", base)))
    assert "IMPORT-ERROR" not in r.stdout, r.stdout
    assert "MAPPED: 0" not in r.stdout, r.stdout


def test_supported_range_is_the_makefiles():
    """setup.py's range comes from the Makefile's TORCH_VERSIONS, and the
    torch running the tests is in it."""
    line = next(l for l in (ROOT / "Makefile").read_text().splitlines() if l.startswith("TORCH_VERSIONS :="))
    versions = line.split(":=")[1].split()
    minors = {tuple(int(p) for p in v.split(".")[:2]) for v in versions}
    running = tuple(int(p) for p in torch.__version__.split(".")[:2])
    assert running in minors, f"torch {torch.__version__} is not in TORCH_VERSIONS {versions}"
