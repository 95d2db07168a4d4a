#!/bin/sh
# tests/python/pip-install.sh - `pip install ./python` offline, on
# Debian's packages only (--no-build-isolation --no-index), into a
# temporary venv (TAP): with pkg-config finding the build tree's library
# (a polysandbox.pc naming the tree's headers and core/.libs) it compiles
# the cffi module, and the installed package runs echo hi on the cffi
# backend with no library path set (the module's run path); with no
# polysandbox.pc it installs without the module, says why, and runs on
# ctypes.  The source is copied first: pip builds in the directory given.
set -u
b=${top_builddir:?run through make check}
src=${top_srcdir:?run through make check}
. "$src/tests/python/no-asan.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "1..0 # SKIP /usr/bin/python3 is not installed"; exit 0; }
"$PY" -m pip --version >/dev/null 2>&1 ||
    { echo "1..0 # SKIP /usr/bin/python3 has no pip (Debian's python3-pip)"; exit 0; }
"$PY" -c 'import venv' 2>/dev/null ||
    { echo "1..0 # SKIP /usr/bin/python3 has no venv (Debian's python3-venv)"; exit 0; }
"$PY" -c 'import cffi, setuptools' 2>/dev/null ||
    { echo "1..0 # SKIP /usr/bin/python3 has no cffi or setuptools (python3-cffi)"; exit 0; }
inc=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
[ -f "$inc/Python.h" ] || { echo "1..0 # SKIP no Python.h (Debian's python3-dev)"; exit 0; }
command -v pkg-config >/dev/null || { echo "1..0 # SKIP no pkg-config"; exit 0; }
lib=$b/core/.libs
[ -f "$lib/libpolysandbox.so" ] || { echo "Bail out! $lib/libpolysandbox.so is not built"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sbx-pip-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/pc" "$tmp/nopc"
# The build tree's library as pkg-config polysandbox names it.
sed -e "s|^libdir=.*|libdir=$lib|" -e "s|^includedir=.*|includedir=$src/core/include|" \
    -e "s|^Cflags:.*|Cflags: -I$src/core/include -I$src/sdk/include|" \
    "$b/core/polysandbox.pc" >"$tmp/pc/polysandbox.pc"
# pip's own chatter and caches are not this test's.
PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
export PIP_NO_CACHE_DIR PIP_DISABLE_PIP_VERSION_CHECK PIP_ROOT_USER_ACTION
# The package must come from the venv, its library by its own means.
unset POLYSANDBOX_LIBRARY POLYSANDBOX_BACKEND PYTHONPATH LD_LIBRARY_PATH

n=0
report() { # report OK DESCRIPTION LOG
    n=$((n + 1))
    if [ "$1" = 0 ]; then echo "ok $n - $2"; else
        echo "not ok $n - $2"; [ -f "$3" ] && tail -n 15 "$3" | sed 's/^/# /'
    fi
}
# install NAME PKG_CONFIG_LIBDIR: a venv NAME with the package pip
# installs from a copy of python/ (pip -v: setup.py's message shows)
install() {
    cp -R "$src/python" "$tmp/src-$1" && chmod -R u+w "$tmp/src-$1" &&
    "$PY" -m venv --without-pip --system-site-packages "$tmp/$1" &&
    PKG_CONFIG_LIBDIR=$2 PKG_CONFIG_PATH= nice -n 19 "$tmp/$1/bin/python" -m pip install -v \
        --no-build-isolation --no-index "$tmp/src-$1" >"$tmp/$1.log" 2>&1
}
# hi NAME: echo hi with NAME's package; its output, the backend and
# where the package and the cffi module (or "none") came from
hi() {
    (cd "$tmp" && PYTHONDONTWRITEBYTECODE=1 "$tmp/$1/bin/python" -c '
import polysandbox as psb
from polysandbox import _cffi
print(psb.run("echo hi").stdout, end="")
print(psb.backend())
print(psb.__file__)
try:
    print(_cffi.module().__file__)
except ImportError:
    print("none")') >"$tmp/$1.out" 2>&1
}
pkgdir() { "$tmp/$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }

echo "1..4"
install cffi "$tmp/pc"
mod=$(ls "$(pkgdir cffi)"/polysandbox/_polysandbox_cffi*.so 2>/dev/null)
[ -n "$mod" ]
report $? "pip install builds the cffi module against pkg-config polysandbox" "$tmp/cffi.log"

hi cffi
[ "$(sed -n 1p "$tmp/cffi.out")" = hi ] && [ "$(sed -n 2p "$tmp/cffi.out")" = cffi ] &&
    [ "$(sed -n 3p "$tmp/cffi.out")" = "$(pkgdir cffi)/polysandbox/__init__.py" ] &&
    [ "$(sed -n 4p "$tmp/cffi.out")" = "$mod" ]
report $? "the pip-installed package runs echo hi on its cffi module" "$tmp/cffi.out"

install nocffi "$tmp/nopc"
rc=$?
[ $rc -eq 0 ] && grep -q "without the cffi backend (ctypes only): pkg-config polysandbox failed" \
    "$tmp/nocffi.log" && [ -z "$(ls "$(pkgdir nocffi)"/polysandbox/_polysandbox_cffi* 2>/dev/null)" ]
report $? "with no polysandbox.pc pip installs the package without the module, saying why" \
    "$tmp/nocffi.log"

# the soname through the loader: the tree's, not an installed one
(LD_LIBRARY_PATH=$lib; export LD_LIBRARY_PATH; hi nocffi)
[ "$(sed -n 1p "$tmp/nocffi.out")" = hi ] && [ "$(sed -n 2p "$tmp/nocffi.out")" = ctypes ] &&
    [ "$(sed -n 4p "$tmp/nocffi.out")" = none ]
report $? "without the module it runs echo hi on ctypes" "$tmp/nocffi.out"
