# Builds libmyns (the Rust cdylib) during `pip install` and ships it inside the
# `myns` package. Install with `--no-build-isolation` so torch-sys builds
# against the torch already installed in this environment, which pip then
# never replaces: the package requires that torch's minor version, and its
# version carries it (0.1.0+torch2.15cu132).
import os
import sys

from setuptools import setup
from setuptools_rust import Binding, RustExtension



def supported():
    """Oldest and newest supported torch minor: the Makefile's TORCH_VERSIONS."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        with open(os.path.join(here, "Makefile")) as f:
            line = next(l for l in f if l.startswith("TORCH_VERSIONS :="))
    except (OSError, StopIteration):  # an sdist without the Makefile
        line = "TORCH_VERSIONS := 2.15.0 2.11.0"
    minors = sorted(tuple(int(p) for p in v.split(".")[:2]) for v in line.split(":=")[1].split())
    return minors[0], minors[-1]


SUPPORTED = supported()
BASE_VERSION = "0.1.0"


def torch_metadata():
    """(version, install_requires) for the torch in this environment; without
    one (e.g. an sdist), the supported range."""
    lo, hi = SUPPORTED
    try:
        import torch
    except ImportError:
        return BASE_VERSION, [f"torch>={lo[0]}.{lo[1]},<{hi[0]}.{hi[1] + 1}"]
    major, minor = (int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    if not lo <= (major, minor) <= hi:
        sys.exit(
            f"myns supports torch {lo[0]}.{lo[1]} to {hi[0]}.{hi[1]}; this environment has torch "
            f"{torch.__version__}. Install a supported torch first (pip install 'torch>={lo[0]}.{lo[1]},<{hi[0]}.{hi[1] + 1}')."
        )
    cuda = torch.version.cuda
    tag = "cu" + cuda.replace(".", "") if cuda else "cpu"
    return f"{BASE_VERSION}+torch{major}.{minor}{tag}", [f"torch=={major}.{minor}.*"]


os.environ.setdefault("LIBTORCH_USE_PYTORCH", "1")
# torch-sys asks `python` (with VIRTUAL_ENV set) or `python3` for torch's paths:
# make that the interpreter running this build.
os.environ.setdefault("VIRTUAL_ENV", sys.prefix)
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")

version, requires = torch_metadata()
setup(
    version=version,
    install_requires=requires,
    rust_extensions=[
        RustExtension("myns.libmyns", path="Cargo.toml", binding=Binding.NoBinding, py_limited_api=True,
                      debug=False)  # release even for editable installs
    ],
    zip_safe=False,
)
