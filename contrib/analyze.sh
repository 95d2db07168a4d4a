#!/bin/sh
# contrib/analyze.sh - the second static analyser beside contrib/cppcheck.sh:
# clang's static analyser (what scan-build runs: clang --analyze) over the
# tracked C sources of core/, plugins/ and sdk/ (tests/ and the generated
# sources are left out). Exits 1 on any finding not listed in
# contrib/analyze.supp, or on a file it cannot compile; prints each finding
# as file:line:col: warning: message [checker].
#
# Why clang and not gcc 12's -fanalyzer (measured on the 260 files, two
# cores): clang needs 350 to 450 s of CPU (4 min 20 s on two cores) and its
# findings are mostly real; gcc 12 needed about 4 s of CPU a file (over 9
# minutes) and its first findings were leak false positives on pointers
# stored into heap arrays (core/run/options.c). clang comes with the clang-14
# package .ci/run already installs for the fuzz targets; scan-build itself
# (clang-tools) would add a make run and nothing we need.
#
# Run it from the top of a built tree (the generated headers, such as
# plugins/docker/init/docker-init.h and plugins/modal/api.pb-c.h, must exist).
# Extra arguments are the files to analyse (contrib/analyze.sh core/units.c).
#
# A false positive goes in contrib/analyze.supp, one entry per finding with
# the reason on the comment line above it: the finding without its line and
# column ("core/x.c: message [checker]"), so an entry survives edits above
# it. An entry that no longer matches anything is reported too.
set -eu
cd "$(dirname "$0")/.."
# Debian's clang-14 package (in contrib/quickstart.sh's list for the fuzz
# targets) installs clang-14 only; the clang package adds the plain name.
CLANG=${CLANG:-$(command -v clang || command -v clang-14 || echo clang)}
supp=contrib/analyze.supp
if [ $# -gt 0 ]; then
    files="$*"
else
    files=$(git ls-files -- 'core/*.c' 'plugins/*.c' 'sdk/*.c')
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The flags of the build (AM_CPPFLAGS and the per-folder -I of the
# local.mk files) in one set: a header name is unique across folders.
# The quotes of the path macros are meant literally: they make C strings.
# shellcheck disable=SC2089,SC2090
flags="-std=gnu11 -DHAVE_CONFIG_H -D_GNU_SOURCE -I. -Icore -Icore/include
 -Isdk/include -Isdk -Icore/cli -Icore/server -Iplugins/common -Iplugins/docker
 -Iplugins/microvm -Iplugins/modal -I/usr/include/p11-kit-1
 -I/usr/include/x86_64-linux-gnu -pthread -DSYSCONFDIR=\"/etc\"
 -DPROVIDERDIR=\"/x\" -DSTATEDIR=\"/x\" -DPKGCACHEDIR=\"/x\" -DPKGDATADIR=\"/x\""
# shellcheck disable=SC2090
export CLANG flags
# $0, $CLANG and $flags are the inner shell's (SC2016).
# shellcheck disable=SC2086,SC2016
printf '%s\n' $files | xargs -P"${ANALYZE_JOBS:-2}" -n1 sh -c '
    # shellcheck disable=SC2086
    nice $CLANG $flags --analyze -o /dev/null "$0" 2>&1 || echo "$0:0:0: error: clang could not analyse it"
' >"$tmp/out"
grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error|fatal error):' "$tmp/out" | sort -u >"$tmp/found" || true
grep -v '^#' "$supp" | grep -v '^[[:space:]]*$' | sort -u >"$tmp/supp" || true
status=0
while IFS= read -r line; do
    key=$(printf '%s\n' "$line" | sed -E 's/^([^ :]+):[0-9]+:[0-9]+: (warning|error|fatal error): /\1: /')
    if grep -qxF -- "$key" "$tmp/supp"; then
        printf '%s\n' "$key" >>"$tmp/used"
    else
        printf '%s\n' "$line"
        status=1
    fi
done <"$tmp/found"
# A stale entry is a finding only on a full run (a file list sees a part).
if [ $# -eq 0 ]; then
    touch "$tmp/used"
    sort -u "$tmp/used" | comm -13 - "$tmp/supp" | while IFS= read -r key; do
        echo "$supp: entry matches no finding: $key"
    done | grep . && status=1
fi
[ "$status" -eq 0 ] || echo "analyze: findings above (fix them, or list them in $supp with why)"
exit "$status"
