#!/bin/sh
# contrib/check-style.sh - `make check-style`, a step of .ci/run: the
# house style (HACKING.md, "Code style") where the tree already keeps it.
# Exits 1 on any finding, printed as file:line: what.
#
# 1. What .editorconfig says, over every tracked text file: no trailing
#    white space, no CR, a final newline; no tab in C, header or Python
#    files (Makefiles use tabs, and shell scripts may carry them in
#    here-documents of Go or make); no line of a C file or header longer
#    than $STYLE_MAX_COLUMNS (130: the longest line of the tree, lower it
#    as long lines go; .clang-format's 100 holds in the formatted files).
#    The exceptions are .editorconfig's: the fuzz corpora and
#    dictionaries, the WebSocket frames and *.jsonl are bytes kept as they
#    are, and the vendor's Cloudflare OpenAPI document has no final newline.
# 2. A ratchet on .clang-format: each file in contrib/style-formatted.txt
#    must be exactly as clang-format-14 writes it, and a C file or header
#    that already is must be listed there (so the list only grows). The
#    rest of the tree was formatted by hand before .clang-format existed
#    and is not reformatted wholesale (it would conflict with every open
#    branch); format a file you rewrite with `clang-format-14 -i FILE` and
#    list it. An entry whose file is gone (renamed, deleted) is a finding.
#    `contrib/check-style.sh --update-list` adds the files that pass and
#    drops the entries of files that are gone, never one that fails.
#
# The exports of libpolysandbox.so and the provider modules (only sbx_*,
# only sandbox_provider_v1) are checked by tests/loader/exports.sh.
#
# Needs git, perl and clang-format-14 (contrib/quickstart.sh installs them);
# run from a git checkout (a tarball has no file list to check).
set -eu
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format || echo clang-format-14)}
STYLE_MAX_COLUMNS=${STYLE_MAX_COLUMNS:-130}
list=contrib/style-formatted.txt
update=no
[ "${1:-}" = --update-list ] && update=yes

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    echo "check-style: not a git checkout; nothing to check" >&2
    exit 1
fi
command -v "$CLANG_FORMAT" >/dev/null 2>&1 || {
    echo "check-style: $CLANG_FORMAT not found (apt-get install clang-format-14)" >&2
    exit 1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

# shellcheck disable=SC2016
# 1. Plain-text rules, in one perl pass over the files (a process per file
# is slow on a busy machine). Symbolic links and binary files are skipped.
git ls-files -z | perl -0ne '
    chomp;
    next if m{^tests/fuzz/(corpus|dict)/|^tests/server/ws-corpus/|\.jsonl$};
    print "$_\0" if -f $_ && !-l $_;
' | STYLE_MAX_COLUMNS=$STYLE_MAX_COLUMNS xargs -0 perl -e '
    my $max = $ENV{STYLE_MAX_COLUMNS};
    my $bad = 0;
    for my $f (@ARGV) {
        next if -B $f;
        open(my $fh, "<", $f) or do { print "$f: cannot read: $!\n"; $bad = 1; next };
        my $c = $f =~ /\.[ch]$/;
        my $notab = $f =~ /\.(c|h|py)$/;
        my ($last, $n) = ("", 0);
        while (my $l = <$fh>) {
            $n++;
            $last = $l;
            (my $t = $l) =~ s/\n\z//;
            my @why;
            push @why, "CR (CRLF line end)" if $t =~ /\r/;
            push @why, "trailing white space" if $t =~ /[ \t]\r?\z/;
            push @why, "tab" if $notab && $t =~ /\t/;
            push @why, "line of " . length($t) . " columns (at most $max)"
                if $c && length($t) > $max;
            if (@why) { print "$f:$n: ", join(", ", @why), "\n"; $bad = 1 }
        }
        if ($n && $last !~ /\n\z/ && $f ne "tests/fakes/cloudflare-openapi.json") {
            print "$f:$n: no newline at the end of the file\n";
            $bad = 1;
        }
    }
    exit $bad;
' || status=1

# 2. clang-format: one run over every C file (--dry-run names each file
# that differs, with its first differing line).
git ls-files -- '*.c' '*.h' >"$tmp/c"
if ! xargs "$CLANG_FORMAT" --style=file --dry-run <"$tmp/c" 2>"$tmp/fmt"; then
    grep -v 'code should be clang-formatted' "$tmp/fmt" | grep ': error:' >&2
    echo "check-style: $CLANG_FORMAT failed" >&2
    exit 1
fi
sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' \
    "$tmp/fmt" | sort -u >"$tmp/differ"
sort -u "$tmp/c" | comm -23 - "$tmp/differ" >"$tmp/pass"
grep -v '^#' "$list" | grep -v '^[[:space:]]*$' | sort -u >"$tmp/listed" || true

if [ "$update" = yes ]; then
    {
        sed -n '/^#/p' "$list"
        sort -u "$tmp/c" | comm -12 - "$tmp/listed" | sort -u - "$tmp/pass"
    } >"$tmp/new"
    cp "$tmp/new" "$list"
    echo "check-style: $list lists $(grep -vc '^#' "$list") files"
    exit 0
fi

# Listed, and not what clang-format writes.
comm -12 "$tmp/listed" "$tmp/differ" | while IFS= read -r f; do
    grep -m1 "^$f:[0-9]*:[0-9]*: warning: code should be clang-formatted" "$tmp/fmt" |
        sed 's/: warning: code should be clang-formatted.*/: differs from clang-format (clang-format-14 -i FILE)/'
done | grep . && status=1
# Formatted, and not listed.
comm -13 "$tmp/listed" "$tmp/pass" | sed "s|\$|: is formatted: add it to $list|" | grep . && status=1
# Listed, and gone.
sort -u "$tmp/c" | comm -13 - "$tmp/listed" | sed "s|^|$list: no such C file: |" | grep . && status=1

[ "$status" -eq 0 ] || echo "check-style: findings above (HACKING.md, \"Code style\")"
exit "$status"
