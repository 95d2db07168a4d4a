"""python/setup.py - what pyproject.toml cannot say: `pip install ./python`
also compiles the cffi backend's module (cffi_build.py's ffibuilder, in
cffi's API mode against the header `pkg-config polysandbox` finds).

Without cffi, Python.h, pkg-config or the library's development files,
the package installs without that module and runs on ctypes (the
message says why: `pip install -v` shows it).  A module that does not
compile (a header whose prototypes differ from cffi_build.py's) fails
the install.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import sysconfig

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def why_not_cffi() -> str | None:
    """Why the cffi module cannot be built here, or None when it can."""
    if importlib.util.find_spec("cffi") is None:
        return "cffi is not installed (Debian's python3-cffi)"
    inc = sysconfig.get_paths()["include"]
    if not os.path.isfile(os.path.join(inc, "Python.h")):
        return f"{inc}/Python.h is missing (Debian's python3-dev)"
    import cffi_build
    try:
        cffi_build.pkg_config()
    except RuntimeError as e:
        return str(e)
    return None


reason = why_not_cffi()
if reason is None:
    setup(cffi_modules=["cffi_build.py:ffibuilder"])
else:
    print(f"polysandbox: installing without the cffi backend (ctypes only): {reason}",
          file=sys.stderr)
    setup()
