#!/bin/sh
# tests/sdk-example.sh - the out-of-tree SDK example, end to end (TAP)
#
# 1. make install DESTDIR=<tmp> of the build tree (a staged install);
# 2. build sdk/example with its plain Makefile against the staged SDK,
#    through pkg-config only (PKG_CONFIG_PATH + PKG_CONFIG_SYSROOT_DIR);
# 3. load the result through the staged libpolysandbox and run it.
set -u

src=${top_srcdir:?run through make check}
b=${top_builddir:?run through make check}
for tool in pkg-config make cc nm; do
    if ! command -v $tool >/dev/null 2>&1; then
        echo "1..0 # SKIP $tool is not installed"
        exit 0
    fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sbx-sdk-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
stage=$tmp/stage
echo "1..6"

fail() { # fail N DESCRIPTION LOGFILE
    echo "not ok $1 - $2"
    [ -f "$3" ] && tail -n 20 "$3" | sed 's/^/# /'
}

# The parent make's flags (jobserver, TESTS=...) are not for this make.
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$b" install \
        DESTDIR="$stage" >"$tmp/install.log" 2>&1; then
    echo "ok 1 - make install DESTDIR=... of the build tree"
else
    fail 1 "make install DESTDIR=... of the build tree" "$tmp/install.log"
    for i in 2 3 4 5 6; do echo "not ok $i - not tried: no staged install"; done
    exit 1
fi

pcdir=$(dirname "$(find "$stage" -name polysandbox-provider.pc | head -n 1)")
PKG_CONFIG_PATH=$pcdir
PKG_CONFIG_LIBDIR=$pcdir
PKG_CONFIG_SYSROOT_DIR=$stage
export PKG_CONFIG_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR

# Build a copy, as an author would outside the tree (srcdir may be read-only).
mkdir "$tmp/example"
cp "$src/sdk/example/example.c" "$src/sdk/example/Makefile" "$tmp/example/"
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$tmp/example" \
        CFLAGS="-O2 -g -Werror" >"$tmp/build.log" 2>&1 &&
   [ -f "$tmp/example/example.so" ]; then
    echo "ok 2 - sdk/example builds with pkg-config --cflags polysandbox-provider only"
else
    fail 2 "sdk/example builds with pkg-config --cflags polysandbox-provider only" \
        "$tmp/build.log"
fi

# make install of the example goes to providerdir as the staged SDK
# reports it.  pkgconf prepends the sysroot to variables, so no DESTDIR is
# needed there; an older pkg-config does not, then DESTDIR=$stage does it.
pdir=$(pkg-config --variable=providerdir polysandbox-provider)
case $pdir in
    "$stage"/*) dest= ; inst=$pdir ;;
    *) dest=$stage ; inst=$stage$pdir ;;
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

# Load the installed example.so through the staged library, with a
# config that enables it.
conf=$tmp/conf
mkdir -p "$conf/providers.d"
# The example has no network policy: network = none (the default) may go
# unenforced here, else it is refused.
printf '[core]\nunenforced_limits = network\n' >"$conf/polysandbox.ini"
printf '[provider]\nenabled = true\n' >"$conf/providers.d/example.ini"
printf '[provider]\nenabled = false\n' >"$conf/providers.d/local.ini" # only the example
cat >"$tmp/check.c" <<'CEOF'
#include <stdio.h>
#include <string.h>
#include <polysandbox/sandbox.h>

/* argv[1]: config dir.  Prints the provider's state, then runs it. */
int main(int argc, char **argv)
{
    static const char *const cmd[] = {"true", NULL};
    const sbx_provider *p;
    sbx_exec_opts *x;
    sbx_create_opts *c;
    sbx_result *r = NULL;
    const char *out;
    size_t len = 0;
    sbx_ctx *ctx;

    if (argc < 2 || sbx_ctx_new(&ctx, argv[1]) != SBX_OK)
        return 2;
    p = sbx_ctx_find_provider(ctx, "example");
    if (!p || sbx_provider_get_state(p) != SBX_PROVIDER_READY) {
        printf("not ready: %s\n", p && sbx_provider_reason(p) ?
               sbx_provider_reason(p) : "not found");
        sbx_ctx_free(ctx);
        return 1;
    }
    printf("ready\n");
    c = sbx_create_opts_new();
    x = sbx_exec_opts_new();
    if (c && x && sbx_create_opts_set_provider(c, "example") == SBX_OK &&
        sbx_exec_opts_set_argv(x, cmd) == SBX_OK &&
        sbx_run(ctx, c, x, &r) == SBX_OK) {
        out = sbx_result_stdout(r, &len);
        printf("status %s exit %d\n", sbx_run_status_name(sbx_result_status(r)),
               sbx_result_exit_code(r));
        fwrite(out, 1, len, stdout);
    } else {
        printf("run failed: %s\n", sbx_error_message(sbx_ctx_last_error(ctx)));
    }
    sbx_result_free(r);
    sbx_exec_opts_free(x);
    sbx_create_opts_free(c);
    sbx_ctx_free(ctx);
    return 0;
}
CEOF
libdir=$(dirname "$(find "$stage" -name 'libpolysandbox.so' | head -n 1)")
# The build's compiler and flags: a sanitizer build's library needs its
# runtime linked into the program too.
# shellcheck disable=SC2086
if ${SBX_CC:-cc} ${SBX_CFLAGS:-} -o "$tmp/check" "$tmp/check.c" \
        $(pkg-config --cflags --libs polysandbox) ${SBX_LDFLAGS:-} >"$tmp/cc.log" 2>&1; then
    POLYSANDBOX_PROVIDER_PATH=$inst LD_LIBRARY_PATH=$libdir \
        "$tmp/check" "$conf" >"$tmp/check.out" 2>&1
    rc=$?
else
    echo "# building the check program against the staged polysandbox.pc failed"
    cat "$tmp/cc.log" >"$tmp/check.out"
    rc=1
fi
if [ $rc = 0 ] && head -n 1 "$tmp/check.out" | grep -qx ready; then
    echo "ok 5 - the staged core loads example.so: READY"
else
    fail 5 "the staged core loads example.so: READY" "$tmp/check.out"
fi
if grep -qx 'status ok exit 0' "$tmp/check.out" &&
   grep -qx 'hello from example' "$tmp/check.out"; then
    echo "ok 6 - running it prints 'hello from example', status ok, exit 0"
else
    fail 6 "running it prints 'hello from example', status ok, exit 0" "$tmp/check.out"
fi
