#!/bin/sh
# contrib/include-graph.sh - who includes whom in core/, sdk/ and plugins/
#
# Reads the #include "..." and #include <polysandbox/...> lines of every
# .c and .h file under core/, sdk/ and plugins/, resolves each one the way
# the build does (the including file's folder first, then the -I folders
# of the build: core, core/include, sdk/include, sdk (for inside/), plugins/common), and
# prints two graphs:
#   folders  A -> B (N): N include lines of files in A name a header in B
#   files    F -> H: F includes H (with --files, or --dot)
# It exits 1 when the folders depend on each other in a loop (so a folder
# never reaches, through its headers, a folder that reaches back), and
# reports loops between files (headers that include each other) without
# failing on them. Headers the build generates (config.h) and system
# headers are left out.
#
# Includes show what a file may see, not what it calls: a header may
# declare more than a file uses. With --link BUILDDIR the script reads the
# library's objects in a build tree instead (nm: who calls a function
# another file defines), prints that graph by folder and names each group
# of files that call each other in a loop (a strongly connected
# component). It exits 1 when folders call each other in a loop; files
# that do so inside one folder are only reported.
#
# Usage: contrib/include-graph.sh [--files] [--dot] [--link BUILDDIR] [SRCDIR]
#   --files  also list the file-level edges
#   --dot    print the folder graph in Graphviz DOT instead of text
#   --link   the call graph of libpolysandbox's objects in BUILDDIR
# SRCDIR defaults to the tree this script is in. Run by make check
# through tests/unit/include-graph.sh.
set -u

files=0
dot=0
link=
while [ $# -gt 0 ]; do
    case $1 in
    --files) files=1 ;;
    --dot) dot=1 ;;
    --link)
        link=${2:?--link needs a build directory}
        shift
        ;;
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

# scc: "from to" lines in, each group of more than one node that reach
# each other out ("N: a b c"), by Tarjan's algorithm.
scc() {
    awk '
    function visit(v,    i, w, comp, n) {
        idx[v] = low[v] = ++counter
        stack[++sp] = v; onst[v] = 1
        for (i = 1; i <= deg[v]; i++) {
            w = adj[v, i]
            if (!(w in idx)) {
                visit(w)
                if (low[w] < low[v]) low[v] = low[w]
            } else if (onst[w] && idx[w] < low[v]) low[v] = idx[w]
        }
        if (low[v] == idx[v]) {
            comp = ""; n = 0
            do { w = stack[sp--]; onst[w] = 0; comp = comp " " w; n++ } while (w != v)
            if (n > 1) print n ":" comp
        }
    }
    !(($1, $2) in seen) { seen[$1, $2] = 1; adj[$1, ++deg[$1]] = $2 }
    { node[$1] = 1; node[$2] = 1 }
    END { for (v in node) if (!(v in idx)) visit(v) }'
}

if [ -n "$link" ]; then
    # Each object of the convenience library, named by its source file.
    find "$link/core" -path '*/.libs/*libpolysandbox_internal_la-*.o' |
        sort >"$tmp/objs"
    if [ ! -s "$tmp/objs" ]; then
        echo "include-graph: no objects of libpolysandbox under $link/core" >&2
        exit 2
    fi
    while read -r o; do
        s=${o#"$link"/}
        s=${s%/.libs/*}/$(basename "$o" .o | sed 's/^.*libpolysandbox_internal_la-//').c
        # an object left behind by a file that moved away
        [ -f "$s" ] || continue
        nm -g --defined-only "$o" | awk -v s="$s" 'NF == 3 { print "D", s, $3 }'
        nm -u "$o" | awk -v s="$s" '{ print "U", s, $NF }'
    done <"$tmp/objs" >"$tmp/syms"
    awk '$1 == "D" { def[$3] = $2; next }
         { use[++n] = $2; sym[n] = $3 }
         END { for (i = 1; i <= n; i++)
                   if ((sym[i] in def) && def[sym[i]] != use[i])
                       print use[i], def[sym[i]] }' "$tmp/syms" |
        sort -u >"$tmp/calls"
    echo "# folders: A -> B (files in A call functions defined in B)"
    awk '
    function dir(p) { return sub(/\/[^\/]*$/, "", p) ? p : "." }
    { a = dir($1); b = dir($2); if (a != b) n[a " -> " b]++ }
    END { for (k in n) print k " (" n[k] ")" }' "$tmp/calls" | sort
    if [ $files = 1 ]; then
        echo "# files: F -> G (F calls a function G defines)"
        sed 's/ / -> /' "$tmp/calls"
    fi
    echo "# folder loops (folders that call each other)"
    awk '
    function dir(p) { return sub(/\/[^\/]*$/, "", p) ? p : "." }
    { a = dir($1); b = dir($2); if (a != b) print a, b }' "$tmp/calls" | scc >"$tmp/floops"
    cat "$tmp/floops"
    echo "# file loops (files that call each other, the group's size first)"
    scc <"$tmp/calls" | sort -rn
    if [ -s "$tmp/floops" ]; then
        echo "include-graph: folders that call each other in a loop (above)" >&2
        exit 1
    fi
    exit 0
fi

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
BEGIN { nroots = split("core core/include sdk/include sdk plugins/common", root, " ") }
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
