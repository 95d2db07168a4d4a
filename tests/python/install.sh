#!/bin/sh
# tests/python/install.sh - `make install` of the Python package (TAP):
# every module byte-compiled, py.typed and the generated _paths.py in
# $(pkgpythondir); the installed package runs a command; with a prefix of
# its own it loads the library installed beside it (through _paths.py)
# given nothing but PYTHONPATH; `make uninstall` removes it; and a
# Makefile configured --disable-python installs none of it; the cffi
# backend's module, when built, is staged beside the package and runs.
set -u
b=${top_builddir:?run through make check}
src=${top_srcdir:?run through make check}
. "$src/tests/python/no-asan.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sbx-pyinstall-XXXXXX") || exit 1
off=$b/.sbx-nopython-$$.mk
# the build tree's _paths.py back to the configured libdir (test 5 installs another)
trap 'rm -rf "$tmp" "$off"; mk python/_paths.py >/dev/null 2>&1' EXIT

# The parent make's flags (jobserver, TESTS=...) are not for these makes.
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$b" "$@"; }
cat >"$tmp/vars.mk" <<'MK'
sbx-vars:
	@printf '%s\n' '$(PYTHON)' '$(pkgpythondir)' '$(libdir)' '$(notdir $(pkgpython_PYTHON))' \
	    '$(pkgpyexecdir)' '$(pkgpyexec_LTLIBRARIES)'
MK
vars() { # vars [VAR=VALUE...]: PYTHON, pkgpythondir, libdir, modules,
         # pkgpyexecdir, the cffi module's .la (or nothing); one a line
    mk -s -f Makefile -f "$tmp/vars.mk" "$@" sbx-vars
}
line() { sed -n "$1p" "$tmp/vars"; }
fail() { # fail N DESCRIPTION LOG
    echo "not ok $1 - $2"
    [ -f "$3" ] && tail -n 20 "$3" | sed 's/^/# /'
}

vars >"$tmp/vars" || { echo "Bail out! cannot read the Makefile's variables"; exit 1; }
PY=$(line 1) pkgpy=$(line 2) libdir=$(line 3) modules=$(line 4)
pkgpyexec=$(line 5) cffi=$(line 6)
[ -n "$modules" ] || { echo "1..0 # SKIP configured --disable-python"; exit 0; }
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 9))' ||
    { echo "1..0 # SKIP $PY is not a python3 >= 3.9"; exit 0; }
echo "1..6"

# hi PYTHONPATH LOG: run "echo hi" with the installed package, printing
# its output, where the package and the library were loaded from
hi() {
    (cd "$tmp" && PYTHONPATH=$1 PYTHONDONTWRITEBYTECODE=1 "$PY" -c '
import polysandbox as psb
from polysandbox import _native
r = psb.run("echo hi")
print(r.stdout, end="")
print(psb.__file__)
print(_native.lib()._name)') >"$2" 2>&1
}

# 1. make install DESTDIR=...
dest=$tmp/dest
if mk install DESTDIR="$dest" >"$tmp/install.log" 2>&1; then
    bad=
    for m in $modules _paths.py; do
        [ -f "$dest$pkgpy/$m" ] || bad="$bad $m"
        ls "$dest$pkgpy/__pycache__/${m%.py}".*.pyc >/dev/null 2>&1 || bad="$bad ${m%.py}.pyc"
    done
    [ -f "$dest$pkgpy/py.typed" ] || bad="$bad py.typed"
    grep -qx "LIBDIR = \"$libdir\"" "$dest$pkgpy/_paths.py" 2>/dev/null || bad="$bad _paths.py:LIBDIR"
    if [ -z "$bad" ]; then
        echo "ok 1 - make install puts the package, byte-compiled, py.typed and _paths.py in $pkgpy"
    else
        echo "not ok 1 - make install puts the package in $pkgpy: missing or wrong:$bad"
    fi
else
    fail 1 "make install DESTDIR=..." "$tmp/install.log"
fi

# 2. the staged package on the staged library: where the configured
# libdir is taken already, _paths.py would name that one (the machine's)
if POLYSANDBOX_LIBRARY="$dest$libdir/libpolysandbox.so.0" hi "${dest%/}${pkgpy%/polysandbox}" "$tmp/hi2" &&
   [ "$(sed -n 1p "$tmp/hi2")" = hi ] &&
   [ "$(sed -n 2p "$tmp/hi2")" = "$dest$pkgpy/__init__.py" ]; then
    echo "ok 2 - the package staged by make install DESTDIR=... runs echo hi"
else
    fail 2 "the package staged by make install DESTDIR=... runs echo hi" "$tmp/hi2"
fi

# 3. the staged cffi module beside the package, on the staged library
if [ -z "$cffi" ]; then
    echo "ok 3 # SKIP the cffi backend is not built"
elif [ -f "$dest$pkgpyexec/_polysandbox_cffi.so" ] &&
     (cd "$tmp" && LD_LIBRARY_PATH="$dest$libdir" POLYSANDBOX_BACKEND=cffi \
        PYTHONPATH="${dest%/}${pkgpy%/polysandbox}" PYTHONDONTWRITEBYTECODE=1 "$PY" -c '
import polysandbox as psb
from polysandbox import _cffi
print(psb.run("echo hi").stdout, end="")
print(psb.backend(), _cffi.module().__file__)') >"$tmp/hi3" 2>&1 &&
     [ "$(sed -n 1p "$tmp/hi3")" = hi ] &&
     [ "$(sed -n 2p "$tmp/hi3")" = "cffi $dest$pkgpyexec/_polysandbox_cffi.so" ]; then
    echo "ok 3 - the cffi module staged beside the package runs echo hi"
else
    fail 3 "the cffi module staged beside the package runs echo hi" "$tmp/hi3"
fi

# 4. make uninstall DESTDIR=...
if mk uninstall DESTDIR="$dest" >"$tmp/uninstall.log" 2>&1 &&
   [ -z "$(find "$dest" -type f -print 2>/dev/null)" ]; then
    echo "ok 4 - make uninstall leaves no file behind"
else
    find "$dest" -type f | sed 's/^/# left: /'
    fail 4 "make uninstall leaves no file behind" "$tmp/uninstall.log"
fi

# 5. a prefix of its own (only the library and the package: a full
# install without DESTDIR would build the Go cache): PYTHONPATH is all
# python needs, _paths.py leads it to the library
p=$tmp/prefix
if vars prefix="$p" >"$tmp/vars" && pkgp=$(line 2) && libp=$(line 3) &&
   mk install-libLTLIBRARIES install-pkgpythonPYTHON install-nodist_pkgpythonPYTHON \
       install-pkgpythonDATA prefix="$p" >"$tmp/pinstall.log" 2>&1; then
    if (unset POLYSANDBOX_LIBRARY; hi "${pkgp%/polysandbox}" "$tmp/hi4") &&
       [ "$(sed -n 1p "$tmp/hi4")" = hi ] &&
       [ "$(sed -n 2p "$tmp/hi4")" = "$pkgp/__init__.py" ] &&
       [ "$(sed -n 3p "$tmp/hi4")" = "$libp/libpolysandbox.so.0" ]; then
        echo "ok 5 - installed in a prefix, it loads that prefix's library through _paths.py"
    else
        fail 5 "installed in a prefix, it loads that prefix's library through _paths.py" "$tmp/hi4"
    fi
else
    fail 5 "make install of the library and the package with prefix=..." "$tmp/pinstall.log"
fi

# 6. --disable-python: this build's Makefile.in with the conditional off,
# made by its config.status (in the build tree, for its relative paths)
sed 's/@ENABLE_PYTHON_TRUE@/#/g; s/@ENABLE_PYTHON_FALSE@//g' "$src/Makefile.in" >"$tmp/Makefile.in"
if (cd "$b" && ./config.status --file="$(basename "$off")":"$tmp/Makefile.in") >"$tmp/off.log" 2>&1 &&
   mk -f "$off" install-data DESTDIR="$tmp/off" >>"$tmp/off.log" 2>&1; then
    if [ -n "$(find "$tmp/off" -name '*.1' -print -quit)" ] &&
       [ -z "$(find "$tmp/off" -name '*.py*' -print -quit)" ] && [ ! -e "$tmp/off$pkgpy" ]; then
        echo "ok 6 - configured --disable-python, make install installs none of the package"
    else
        find "$tmp/off" -name '*.py*' | sed 's/^/# installed: /'
        echo "not ok 6 - configured --disable-python, make install installs none of the package"
    fi
else
    fail 6 "make install-data of a Makefile configured --disable-python" "$tmp/off.log"
fi
