# Builds libmyns (the Rust cdylib) during `pip install` and ships it inside the
# `myns` package. Install with `--no-build-isolation` so torch-sys builds
# against the torch already installed in this environment.
import os
import sys

from setuptools import setup
from setuptools_rust import Binding, RustExtension

os.environ.setdefault("LIBTORCH_USE_PYTORCH", "1")
# torch-sys asks `python` (with VIRTUAL_ENV set) or `python3` for torch's paths:
# make that the interpreter running this build.
os.environ.setdefault("VIRTUAL_ENV", sys.prefix)
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")

setup(
    rust_extensions=[
        RustExtension("myns.libmyns", path="Cargo.toml", binding=Binding.NoBinding, py_limited_api=True,
                      debug=False)  # release even for editable installs
    ],
    zip_safe=False,
)
