#!/bin/sh
# tests/unit/include-graph.sh - no two folders include each other in a loop (TAP)
#
# Runs contrib/include-graph.sh on the tree, then on a small tree of its
# own with a loop between two folders, which the script must refuse.
set -u
src=${top_srcdir:?run through make check}
script=$src/contrib/include-graph.sh
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

echo "1..4"
if sh "$script" "$src" >"$tmp/out" 2>"$tmp/err"; then
    echo "ok 1 - no folder of core/, sdk/, plugins/ is in an include loop"
else
    echo "not ok 1 - folders in an include loop"
    sed 's/^/# /' "$tmp/err"
fi
if grep -q '^core/image -> core ' "$tmp/out"; then
    echo "ok 2 - the folder graph is printed"
else
    echo "not ok 2 - the folder graph is printed"
    sed 's/^/# /' "$tmp/out" | head -20
fi

mkdir -p "$tmp/t/core/a" "$tmp/t/core/b" "$tmp/t/sdk" "$tmp/t/plugins"
printf '#include "../b/b.h"\n' >"$tmp/t/core/a/a.h"
printf '#include "a/a.h"\n' >"$tmp/t/core/b/b.h"
if sh "$script" "$tmp/t" >/dev/null 2>"$tmp/err2"; then
    echo "not ok 3 - a loop between core/a and core/b is refused"
elif grep -q 'core/a' "$tmp/err2"; then
    echo "ok 3 - a loop between core/a and core/b is refused"
else
    echo "not ok 3 - the loop is named"
    sed 's/^/# /' "$tmp/err2"
fi

# The same by calls, over the library's objects in the build tree.
b=${top_builddir:-}
if [ -z "$b" ] || ! command -v nm >/dev/null 2>&1; then
    echo "ok 4 # SKIP no build tree or no nm"
else
    sh "$script" --link "$b" "$src" >"$tmp/link" 2>"$tmp/err4"
    case $? in
    0) echo "ok 4 - no folder of the library calls another that calls it back" ;;
    2) echo "ok 4 # SKIP no libtool objects of the library under $b/core" ;;
    *)
        echo "not ok 4 - folders of the library call each other in a loop"
        cat "$tmp/link" "$tmp/err4" | grep -v '^plugins' | sed 's/^/# /' | head -40
        ;;
    esac
fi
