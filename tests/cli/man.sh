#!/bin/sh
# tests/cli/man.sh - the man pages format without a warning (groff -ww,
# tables included, 80 columns),
# each program's page is installed (listed in dist_man_MANS), and
# polysandbox-locald, which people meet in ps(1) though it is not run by
# hand, has a usage of its own: --help (exit 0), bad options (exit 2).
. "$top_srcdir/tests/cli/lib.sh"

pages="polysandbox.1 polysandbox-eval.1 polysandbox-conformance.1 polysandbox-locald.8 polysandboxd.8 polysandbox.ini.5"
plan 13

for p in $pages; do
    if ! command -v groff >/dev/null 2>&1; then
        echo "ok $((tap_n += 1)) - # SKIP $p: groff is not installed"
        continue
    fi
    # Tables too (-t), at the width man(1) gives an 80-column terminal.
    groff -t -man -ww -z -Tutf8 -rLL=78n "$top_srcdir/doc/$p" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    check "$p formats without a warning" eval 'is_rc 0 && ! [ -s "$tmp/err" ]'
done

check "polysandbox-locald.8 is installed with the others" \
    grep -q 'doc/polysandbox-locald\.8' "$top_builddir/Makefile"

# Every page of ours a page names (".BR polysandbox\-eval (1)", say) exists.
sed -n 's/^\.BR* \(polysandbox[-a-z.\\]*\) *(\([0-9]\)).*/\1.\2/p' "$top_srcdir"/doc/*.[0-9] |
    sed 's/\\//g' | sort -u >"$tmp/named"
: >"$tmp/missing"
while read -r n; do [ -f "$top_srcdir/doc/$n" ] || echo "$n" >>"$tmp/missing"; done <"$tmp/named"
check "every polysandbox page the pages name exists ($(wc -l <"$tmp/named") named)" \
    eval '[ -s "$tmp/named" ] && ! [ -s "$tmp/missing" ] || { sed "s/^/# missing: /" "$tmp/missing"; false; }'

"$PS" compare --help >"$tmp/out" 2>&1
check "compare --help lists --json once" eval '[ "$(grep -c -- "--json" "$tmp/out")" -eq 1 ]'
# Each FILES entry of polysandbox(1) is a paragraph of its own (.TP).
sed -n '/^\.SH FILES/,/^\.SH/p' "$top_srcdir/doc/polysandbox.1" >"$tmp/files"
check "every FILES entry of polysandbox.1 starts its own paragraph" \
    eval '[ -s "$tmp/files" ] && ! awk '\''/^\.I [/$]/ && prev !~ /^\.TP/ { bad = 1 } { prev = $0 } END { exit !bad }'\'' "$tmp/files"'

PS="$top_builddir/plugins/local/polysandbox-locald"
cli --help
check "polysandbox-locald --help: exit 0, the usage and its page on stdout" \
    eval 'is_rc 0 && out_has "usage: polysandbox-locald" && out_has "polysandbox-locald(8)" && ! [ -s "$tmp/err" ]'
cli
check "polysandbox-locald without its options: exit 2 and the usage" rc_and_err 2 "usage: polysandbox-locald"
cli --state-dir /nonexistent --run-dir /nonexistent --key k --idle 0
check "polysandbox-locald --idle 0: exit 2 naming the value" rc_and_err 2 "--idle '0'"
done_testing
