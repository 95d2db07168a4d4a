#!/bin/sh
# tests/sdk-example.sh - the out-of-tree SDK example, end to end (TAP)
#
# 1. make install DESTDIR=<tmp> of the build tree (a staged install), and
#    of the SDK alone (its headers and polysandbox-provider.pc, nothing
#    else) into another tree;
# 2. build sdk/example with its plain Makefile against the SDK alone,
#    through pkg-config only (PKG_CONFIG_PATH + PKG_CONFIG_SYSROOT_DIR);
# 3. run the staged conformance kit on it, through the staged library
#    (first with a bad setting, which the core refuses, naming it).
set -u

src=${top_srcdir:?run through make check}
b=${top_builddir:?run through make check}
for tool in pkg-config make cc nm unshare; do
    if ! command -v $tool >/dev/null 2>&1; then
        echo "1..0 # SKIP $tool is not installed"
        exit 0
    fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sbx-sdk-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
stage=$tmp/stage
sdk=$tmp/sdk
echo "1..7"

fail() { # fail N DESCRIPTION LOGFILE
    echo "not ok $1 - $2"
    [ -f "$3" ] && tail -n 20 "$3" | sed 's/^/# /'
}

# The parent make's flags (jobserver, TESTS=...) are not for this make.
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$b" install \
        DESTDIR="$stage" >"$tmp/install.log" 2>&1 &&
   env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$b" \
        install-sdkincludeHEADERS install-sdkpkgconfigDATA \
        DESTDIR="$sdk" >>"$tmp/install.log" 2>&1; then
    echo "ok 1 - make install DESTDIR=... of the build tree and of the SDK alone"
else
    fail 1 "make install DESTDIR=... of the build tree and of the SDK alone" "$tmp/install.log"
    for i in 2 3 4 5 6 7; do echo "not ok $i - not tried: no staged install"; done
    exit 1
fi

pcdir=$(dirname "$(find "$sdk" -name polysandbox-provider.pc | head -n 1)")
PKG_CONFIG_PATH=$pcdir
PKG_CONFIG_LIBDIR=$pcdir
PKG_CONFIG_SYSROOT_DIR=$sdk
export PKG_CONFIG_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR

# Build a copy, as an author would outside the tree (srcdir may be read-only).
mkdir "$tmp/example"
cp "$src/sdk/example/example.c" "$src/sdk/example/example-test.c" \
    "$src/sdk/example/Makefile" "$tmp/example/"
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$tmp/example" \
        CFLAGS="-O2 -g -Werror" >"$tmp/build.log" 2>&1 &&
   [ -f "$tmp/example/example.so" ]; then
    echo "ok 2 - sdk/example builds against the SDK alone, through pkg-config"
else
    fail 2 "sdk/example builds against the SDK alone, through pkg-config" \
        "$tmp/build.log"
fi

# make install of the example goes to providerdir as the staged SDK
# reports it.  pkgconf prepends the sysroot to variables, so no DESTDIR is
# needed there; an older pkg-config does not, then DESTDIR=$sdk does it.
pdir=$(pkg-config --variable=providerdir polysandbox-provider)
case $pdir in
    "$sdk"/*) dest= ; inst=$pdir ;;
    *) dest=$sdk ; inst=$sdk$pdir ;;
esac
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$tmp/example" install \
        DESTDIR="$dest" >"$tmp/einstall.log" 2>&1 && [ -f "$inst/example.so" ]; then
    echo "ok 3 - make install puts example.so in the SDK's providerdir"
else
    fail 3 "make install puts example.so in the SDK's providerdir ($inst)" \
        "$tmp/einstall.log"
fi

syms=$(nm -D --defined-only "$tmp/example/example.so" 2>/dev/null |
       awk 'NF >= 3 { print $3 }')
if [ "$syms" = "sandbox_provider_v1" ]; then
    echo "ok 4 - example.so exports exactly sandbox_provider_v1"
else
    echo "not ok 4 - example.so exports exactly sandbox_provider_v1"
    echo "# exports: $(echo $syms)"
fi

# The staged kit, through the staged library, loads the installed
# example.so (with a config that enables it alone) and runs every test.
conf=$tmp/conf
mkdir -p "$conf/providers.d"
# What the example cannot enforce (see example.c) may go unenforced here.
printf '[core]\nunenforced_limits = network, memory, pids, disk\n' \
    >"$conf/polysandbox.ini"
printf '[provider]\nenabled = false\n' >"$conf/providers.d/local.ini" # only the example
libdir=$(dirname "$(find "$stage" -name 'libpolysandbox.so' | head -n 1)")
kit=$(find "$stage" -name polysandbox-conformance -type f | head -n 1)
mkdir "$tmp/work"
# example.ini with its [settings]: NICE as given.
example_ini() {
    printf '[provider]\nenabled = true\n[settings]\nwork_root = %s\nnice = %s\n' \
        "$tmp/work" "$1" >"$conf/providers.d/example.ini"
}

# Its settings are read by the core (host->settings_read): a bad value
# is refused before anything runs, naming the file, the line and the key.
example_ini 20
POLYSANDBOX_PROVIDER_PATH=$inst LD_LIBRARY_PATH=$libdir \
    "$kit" -c "$conf" example >"$tmp/kit.out" 2>&1
if grep -q -F "providers.d/example.ini:5: nice = '20': must be from 0 to 19" "$tmp/kit.out"; then
    echo "ok 5 - a bad setting of the example is refused naming the file, line and key"
else
    echo "not ok 5 - a bad setting of the example is refused naming the file, line and key"
    tail -n 5 "$tmp/kit.out" | sed 's/^/# /'
fi
example_ini 1
# The example makes a PID namespace per exec (a user namespace too when
# not root): where this host allows neither, there is nothing to run.
if ! unshare -p -f true 2>/dev/null && ! unshare -U -p -f true 2>/dev/null; then
    echo "ok 6 # SKIP this host allows no PID namespace (unshare -p fails)"
    echo "ok 7 # SKIP this host allows no PID namespace (unshare -p fails)"
    exit 0
fi
POLYSANDBOX_PROVIDER_PATH=$inst LD_LIBRARY_PATH=$libdir \
    "$kit" -c "$conf" example >"$tmp/kit.out" 2>&1
rc=$?
# Its files tests run (SBX_CAP_FILES), not skipped.
if [ $rc = 0 ] && grep -q '^ok ' "$tmp/kit.out" && ! grep -q '^not ok ' "$tmp/kit.out" &&
   grep -q '^ok [0-9]* - files_symlinks$' "$tmp/kit.out"; then
    echo "ok 6 - the example passes the staged conformance kit" \
        "($(grep -c '^ok ' "$tmp/kit.out") tests)"
else
    echo "not ok 6 - the example passes the staged conformance kit (exit $rc)"
    grep -A8 '^not ok ' "$tmp/kit.out" | head -n 60 | sed 's/^/# /'
    tail -n 5 "$tmp/kit.out" | sed 's/^/# /'
fi

# Its unit tests (make check) call the ops directly through the test host
# of polysandbox-provider-test, found in the staged install: the staged
# library holds the host, the staged SDK the headers.
stagepc=$(dirname "$(find "$stage" -name polysandbox-provider-test.pc | head -n 1)")
# A sanitizer build's library needs its runtime in the program: the test
# program is built with the build's sanitizer flags then.
san_cflags= san_ldflags=
case "${SBX_CFLAGS:-}" in
*-fsanitize=*) san_cflags=$SBX_CFLAGS san_ldflags=${SBX_LDFLAGS:-} ;;
esac
if PKG_CONFIG_PATH=$stagepc PKG_CONFIG_LIBDIR=$stagepc PKG_CONFIG_SYSROOT_DIR=$stage \
        LD_LIBRARY_PATH=$libdir env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
        make -C "$tmp/example" check CFLAGS="-O2 -g -Werror $san_cflags" \
        LDFLAGS="$san_ldflags" >"$tmp/check.log" 2>&1 &&
   grep -q '^ok 10 ' "$tmp/check.log" && ! grep -q '^not ok' "$tmp/check.log"; then
    echo "ok 7 - the example's unit tests pass against the installed test host" \
        "($(grep -c '^ok ' "$tmp/check.log") checks)"
else
    echo "not ok 7 - the example's unit tests pass against the installed test host"
    tail -n 20 "$tmp/check.log" | sed 's/^/# /'
fi
