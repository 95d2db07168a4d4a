#!/bin/sh
# contrib/include-graph.sh - who includes whom in core/, sdk/ and plugins/
#
# Reads the #include "..." and #include <polysandbox/...> lines of every
# .c and .h file under core/, sdk/ and plugins/, resolves each one the way
# the build does (the including file's folder first, then the -I folders
# of the build: core, core/include, sdk/include, plugins/common), and
# prints two graphs:
#   folders  A -> B (N): N include lines of files in A name a header in B
#   files    F -> H: F includes H (with --files, or --dot)
# It exits 1 when the folders depend on each other in a loop (so a folder
# never reaches, through its headers, a folder that reaches back), and
# reports loops between files (headers that include each other) without
# failing on them. Headers the build generates (config.h) and system
# headers are left out.
#
# Usage: contrib/include-graph.sh [--files] [--dot] [SRCDIR]
#   --files  also list the file-level edges
#   --dot    print the folder graph in Graphviz DOT instead of text
# SRCDIR defaults to the tree this script is in. Run by make check
# through tests/unit/include-graph.sh.
set -u

files=0
dot=0
while [ $# -gt 0 ]; do
    case $1 in
    --files) files=1 ;;
    --dot) dot=1 ;;
    -h | --help)
        sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    -*)
        echo "include-graph: unknown option $1" >&2
        exit 2
        ;;
    *) break ;;
    esac
    shift
done
src=${1:-$(dirname "$0")/..}
cd "$src" || exit 2

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# Every source file, then every include line as "file<TAB>name<TAB>kind".
find core sdk plugins -name node_modules -prune -o \
    -type f \( -name '*.c' -o -name '*.h' \) -print | sort >"$tmp/all"
while read -r f; do
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1	q/p
            s/^[[:space:]]*#[[:space:]]*include[[:space:]]*<\(polysandbox\/[^>]*\)>.*/\1	a/p' \
        "$f" | sed "s|^|$f	|"
done <"$tmp/all" >"$tmp/lines"

# Resolve each name to a file of the tree; write "from<TAB>to" edges.
awk -F'\t' '
function norm(p,    n, i, k, out, part) {
    n = split(p, part, "/"); k = 0
    for (i = 1; i <= n; i++) {
        if (part[i] == "." || part[i] == "") continue
        if (part[i] == ".." && k > 0) { k--; continue }
        out[++k] = part[i]
    }
    p = ""
    for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
    return p
}
function dir(p) { return sub(/\/[^\/]*$/, "", p) ? p : "." }
NR == FNR { have[$0] = 1; next }
{
    cand = ""
    if ($3 == "q") {
        c = norm(dir($1) "/" $2)
        if (c in have) cand = c
    }
    for (i = 1; cand == "" && i <= nroots; i++) {
        c = norm(root[i] "/" $2)
        if (c in have) cand = c
    }
    if (cand != "") print $1 "\t" cand
}
BEGIN { nroots = split("core core/include sdk/include plugins/common", root, " ") }
' "$tmp/all" "$tmp/lines" | sort -u >"$tmp/edges"

awk -F'\t' '
function dir(p) { return sub(/\/[^\/]*$/, "", p) ? p : "." }
{ a = dir($1); b = dir($2); if (a != b) n[a "\t" b]++ }
END { for (k in n) print k "\t" n[k] }
' "$tmp/edges" | sort >"$tmp/folders"

if [ $dot = 1 ]; then
    echo "digraph folders {"
    awk -F'\t' '{ printf "  \"%s\" -> \"%s\" [label=%d];\n", $1, $2, $3 }' "$tmp/folders"
    echo "}"
else
    echo "# folders: A -> B (include lines of files in A naming a header in B)"
    awk -F'\t' '{ printf "%s -> %s (%d)\n", $1, $2, $3 }' "$tmp/folders"
    if [ $files = 1 ]; then
        echo "# files: F -> H"
        awk -F'\t' '{ printf "%s -> %s\n", $1, $2 }' "$tmp/edges"
    fi
fi

status=0
# tsort names the members of a loop on stderr and exits 1.
awk -F'\t' '{ print $1, $2 }' "$tmp/folders" | tsort >/dev/null 2>"$tmp/loop" || {
    echo "include-graph: folders that depend on each other in a loop:" >&2
    sed -n 's/^tsort: //p' "$tmp/loop" | grep -v 'input contains a loop' >&2
    status=1
}
awk -F'\t' '{ print $1, $2 }' "$tmp/edges" | tsort >/dev/null 2>"$tmp/floop" || {
    echo "include-graph: files that include each other in a loop:" >&2
    sed -n 's/^tsort: //p' "$tmp/floop" | grep -v 'input contains a loop' >&2
}
exit $status
