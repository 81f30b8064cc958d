"""myns: PyTorch custom operators written in Rust.

``import myns`` loads the bundled ``libmyns`` library, which registers every op
as ``torch.ops.myns.<name>`` (CPU, CUDA, Meta and Autograd kernels). This
module also exposes each op as a plain function, ``myns.<name>``, with the
op's documentation and a signature taken from its schema.
"""

from __future__ import annotations

import ctypes
import inspect
import os
from pathlib import Path
from typing import Callable

import torch

__all__ = ["library_path", "op_names", "set_override"]


def library_path() -> str:
    """Path of the shared library that defines the ``myns`` ops.

    ``MYNS_LIBRARY`` in the environment overrides the copy bundled with the package.
    """
    override = os.environ.get("MYNS_LIBRARY")
    if override:
        return override
    here = Path(__file__).resolve().parent
    found = sorted(here.glob("libmyns*.so"))
    if not found:
        raise ImportError(
            f"myns: no libmyns*.so in {here}; install the package with "
            "`pip install --no-build-isolation .` (or set MYNS_LIBRARY)"
        )
    return str(found[0])


_MARKER = b"myns-built-against-torch="


def _minor(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("+")[0].split(".")[:2])


def built_against(path: str) -> str | None:
    """The torch version the library at ``path`` was built against, read from
    the file without loading it (``None`` for a library without the record)."""
    import mmap

    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        i = m.find(_MARKER)
        if i < 0:
            return None
        return m[i + len(_MARKER) : m.find(b"\0", i)].decode()


def _check_torch_version(path: str) -> None:
    # Checked before the library is loaded: one built for another torch
    # would fail in the dynamic loader with an undefined symbol.
    built = built_against(path)
    if built is not None and _minor(built) != _minor(torch.__version__):
        raise ImportError(
            f"myns: {path} was built against torch {built}, but this environment has torch "
            f"{torch.__version__}; a library works only with the torch minor version it was "
            "built against. Rebuild it here: `pip install --no-build-isolation --no-deps "
            "--force-reinstall .` in a myns checkout (`make install TORCH=<version>` in one "
            f"made with the Makefile), or install the myns wheel built for torch {torch.__version__.split('+')[0]}."
        )


_PATH = library_path()
_check_torch_version(_PATH)
torch.ops.load_library(_PATH)
# Same handle the dlopen above made; used for the library's C queries.
_lib = ctypes.CDLL(_PATH)
_lib.myns_version.restype = ctypes.c_char_p
_lib.myns_op_count.restype = ctypes.c_size_t
_lib.myns_op_name.restype = ctypes.c_char_p
_lib.myns_op_name.argtypes = [ctypes.c_size_t]
_lib.myns_op_doc.restype = ctypes.c_char_p
_lib.myns_op_doc.argtypes = [ctypes.c_size_t]

_lib.myns_set_override.restype = ctypes.c_int
_lib.myns_set_override.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
_lib.myns_last_error.restype = ctypes.c_char_p

__version__: str = _lib.myns_version().decode()


def set_override(name: str, value: str | None) -> None:
    """Forces a kernel choice for the whole process, as the environment
    variable ``name`` (``MYNS_MATMUL_KERNEL``, ``MYNS_ROW_KERNEL`` or
    ``MYNS_MATMUL_TMA_STORE``) does when the library starts; ``None``,
    ``""`` or ``"auto"`` restores the automatic choice. For testing and
    tuning: the library reads the environment only once."""
    if _lib.myns_set_override(name.encode(), None if value is None else value.encode()) != 0:
        raise ValueError(_lib.myns_last_error().decode())

_PY_TYPES = {"Tensor": torch.Tensor, "float": float, "int": int, "bool": bool, "str": str, "Scalar": int | float}


def _annotation(type_str: str):
    base = type_str.rstrip("?")
    ann = _PY_TYPES.get(base, inspect.Parameter.empty)
    return ann if base == type_str or ann is inspect.Parameter.empty else ann | None


def _wrapper(name: str, doc: str) -> Callable:
    """``myns.<name>``: the op's ``torch.ops.myns.<name>.default`` overload
    behind a one-off subclass of its class whose ``__call__`` is the
    overload's own C++ entry point, so a call runs no Python frame (the plain
    overload's ``__call__`` is a Python method, and a wrapper function would
    add another). Being an ``OpOverload``, torch.compile, FX and opcheck
    treat it as the op; other attributes are the overload's. It carries the
    op's documentation and a signature built from its schema."""
    overload = getattr(torch.ops.myns, name).default
    schema = overload._schema
    params = [
        inspect.Parameter(
            a.name,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            annotation=_annotation(str(a.type)),
            **({"default": a.default_value} if a.has_default_value() else {}),
        )
        for a in schema.arguments
    ]
    returns = [str(r.type) for r in schema.returns]
    ret = torch.Tensor if returns == ["Tensor"] else (None if not returns else tuple)

    def __getattr__(self, attr):  # only for attributes the instance lacks
        return getattr(overload, attr)

    cls = type(
        name,
        (type(overload),),
        {"__call__": staticmethod(overload._op), "__getattr__": __getattr__, "__module__": __name__},
    )
    op = object.__new__(cls)  # no __init__: every other attribute comes from `overload`
    op.__name__ = op.__qualname__ = name
    op.__module__ = __name__
    op.__doc__ = f"{doc}\n\nSchema: ``{schema}``"
    op.__signature__ = inspect.Signature(params, return_annotation=ret)
    return op


def op_names() -> list[str]:
    """Names of every op the library registers (``torch.ops.myns.<name>``)."""
    return [_lib.myns_op_name(i).decode() for i in range(_lib.myns_op_count())]


for _i, _name in enumerate(op_names()):
    globals()[_name] = _wrapper(_name, _lib.myns_op_doc(_i).decode())
    __all__.append(_name)
del _i, _name

from . import nn  # noqa: E402  (layers on the ops above; needs the library loaded)
from .nn import patch  # noqa: E402

__all__ += ["nn", "patch"]
