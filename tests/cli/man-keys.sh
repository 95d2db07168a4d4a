#!/bin/sh
# tests/cli/man-keys.sh - polysandbox.ini(5) and the shipped
# providers.d/NAME.ini name exactly the [settings] keys each provider
# accepts; polysandbox.ini(5) names exactly the [server] keys
# polysandboxd accepts.
#
# The keys a provider accepts are its descriptor's two tables,
# config_keys and secret_keys (the loader refuses any other key), read
# here from the source file that defines the descriptor.  Its man page
# section (".SS The NAME provider") must give each key a tagged paragraph
# (.TP/.TQ) and tag nothing else; a credential's paragraph says it is
# one, and only a credential's tag takes a "reference".  The shipped
# NAME.ini shows each key in [settings] (";key =" or "#key =") and no
# other.  Needs no build: only the sources.
: "${top_srcdir:?top_srcdir is not set (run through make check)}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-man-keys.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
. "$top_srcdir/tests/lib/tap.sh"

page="$top_srcdir/doc/polysandbox.ini.5"

# table FILE NAME: the string literals of "static const char *const
# NAME[] = { ... };" in FILE, one a line.
table() {
    awk -v name="$2" '
        $0 ~ "^static const char \\*const " name "\\[\\] = \\{" { on = 1 }
        on { s = s $0 "\n" }
        on && /};/ { on = 0 }
        END {
            while (match(s, /"[^"]*"/)) {
                print substr(s, RSTART + 1, RLENGTH - 2)
                s = substr(s, RSTART + RLENGTH)
            }
        }' "$1"
}

# section NAME: the lines of the page's ".SS The [built-in ]NAME provider".
section() {
    awk -v name="$1" '
        /^\.S[SH]/ { on = ($0 == ".SS The " name " provider" || $0 == ".SS The built-in " name " provider"); next }
        on' "$page"
}

# The awk function keys(tagline, out): the keys a .TP/.TQ tag line names
# ('.BR cpu ", " memory " = " \fIcount\fR' names cpu and memory).
keys_awk='
function keys(line, out,    n, i, k, part) {
    sub(/^\.[A-Z]+ /, "", line)
    n = split(line, part, /" *, *"/)
    for (i = 1; i <= n; i++) {
        k = part[i]
        sub(/^[ "]+/, "", k)
        sub(/[ "\\].*$/, "", k)
        out[i] = k
    }
    return n
}'

# tags: from a section on stdin, "KEY<TAB>TAGLINE" for each key a tag names.
tags() {
    awk "$keys_awk"'
        tag { n = keys($0, k); for (i = 1; i <= n; i++) print k[i] "\t" $0; tag = 0; next }
        /^\.T[PQ]$/ { tag = 1 }'
}

# para KEY: the paragraph of a section on stdin whose tags name KEY (its
# tags and text, to the next .TP, .PP or section).
para() {
    awk -v key="$1" "$keys_awk"'
        function flush() { if (has) printf "%s", buf; buf = ""; has = 0 }
        /^\.TP$/ { flush(); tag = 1; next }
        /^\.TQ$/ { tag = 1; next }
        /^\.(PP|SS|SH)/ { flush(); next }
        tag { n = keys($0, k); for (i = 1; i <= n; i++) if (k[i] == key) has = 1; tag = 0 }
        { buf = buf $0 "\n" }
        END { flush() }'
}

# ini_keys FILE: the keys the [settings] section of FILE sets or shows
# commented out (";key = ..." or "#key = ...", no blank after the mark).
ini_keys() {
    awk '
        /^\[/ { on = ($0 == "[settings]"); next }
        on && match($0, /^[;#]?[a-z_]+ *=/) {
            k = substr($0, 1, RLENGTH)
            sub(/^[;#]/, "", k)
            sub(/ *=$/, "", k)
            print k
        }' "$1" | sort -u
}

providers=
for dir in "$top_srcdir"/plugins/*/; do
    name=$(basename "$dir")
    grep -l 'SBX_PROVIDER_DEFINE' "$dir"*.c >/dev/null 2>&1 && providers="$providers $name"
done
set -- $providers
count=$#
plan $((count * 6 + 3))
check "the providers are found:$providers" eval '[ "$count" -ge 9 ]'

for name in $providers; do
    src=$(grep -l 'SBX_PROVIDER_DEFINE' "$top_srcdir/plugins/$name/"*.c | head -n 1)
    # The descriptor's keys and credentials are the tables read here.
    awk '/SBX_PROVIDER_DEFINE/ { on = 1 } on { print } on && /\);/ { exit }' "$src" >"$tmp/define"
    table "$src" config_keys >"$tmp/config"
    table "$src" secret_keys >"$tmp/secret"
    sort -u "$tmp/config" "$tmp/secret" >"$tmp/keys"
    sort -u "$tmp/secret" >"$tmp/secret.s"
    check "$name: its descriptor names config_keys ($(wc -l <"$tmp/config") keys) and secret_keys or NULL ($(wc -l <"$tmp/secret"))" \
        eval 'grep -q "config_keys, \(secret_keys\|NULL\)" "$tmp/define" && [ -s "$tmp/config" ] &&
              { grep -q "config_keys, NULL" "$tmp/define" || [ -s "$tmp/secret" ]; }'

    section "$name" >"$tmp/section"
    tags <"$tmp/section" >"$tmp/tags"
    cut -f1 "$tmp/tags" | sort -u >"$tmp/doc"
    comm -23 "$tmp/keys" "$tmp/doc" >"$tmp/undoc"
    comm -13 "$tmp/keys" "$tmp/doc" >"$tmp/extra"
    check "$name: polysandbox.ini(5) documents each key the provider accepts" \
        eval '[ -s "$tmp/section" ] && ! [ -s "$tmp/undoc" ] || { sed "s/^/# undocumented: /" "$tmp/undoc"; false; }'
    check "$name: polysandbox.ini(5) documents no key the provider does not accept" \
        eval '! [ -s "$tmp/extra" ] || { sed "s/^/# not accepted: /" "$tmp/extra"; false; }'

    : >"$tmp/bad"
    while read -r k; do
        para "$k" <"$tmp/section" | grep -qi 'credential' || echo "$k: its paragraph does not call it a credential" >>"$tmp/bad"
    done <"$tmp/secret.s"
    awk -F '\t' '$2 ~ /reference/ { print $1 }' "$tmp/tags" | sort -u | comm -23 - "$tmp/secret.s" |
        sed 's/$/: a "reference" but not a credential of the provider/' >>"$tmp/bad"
    check "$name: the page's credentials are the provider's secret_keys" \
        eval '! [ -s "$tmp/bad" ] || { sed "s/^/# /" "$tmp/bad"; false; }'

    ini_keys "$top_srcdir/plugins/$name/$name.ini" >"$tmp/ini"
    comm -23 "$tmp/keys" "$tmp/ini" >"$tmp/undoc"
    comm -13 "$tmp/keys" "$tmp/ini" >"$tmp/extra"
    check "$name: the shipped $name.ini shows each key the provider accepts" \
        eval '! [ -s "$tmp/undoc" ] || { sed "s/^/# not in $name.ini: /" "$tmp/undoc"; false; }'
    check "$name: the shipped $name.ini shows no key the provider does not accept" \
        eval '! [ -s "$tmp/extra" ] || { sed "s/^/# not accepted: /" "$tmp/extra"; false; }'
done

# [server]: the keys of core/server/conf.c's keys[] and the route
# families' switches (core/server/router.c), against the tags of the
# page's [server] sections (the switches are named in compat_NAME's).
{
    awk '/^} keys\[\] = \{/ { on = 1; next } on && /^};/ { on = 0 } on' \
        "$top_srcdir/core/server/conf.c" | grep -o '{ "[a-z0-9_]*"' | cut -d'"' -f2
    grep -o '{ "[a-z0-9_]*", "[a-z0-9_]*", srv_routes' "$top_srcdir/core/server/router.c" |
        cut -d'"' -f4
} | sort -u >"$tmp/keys"
awk '/^\.SS \[server\]/ { on = 1; next } /^\.S[SH]/ { on = 0 } on' "$page" >"$tmp/section"
{
    awk '/^\.T[PQ]$/ { tag = 1; next } tag { print; tag = 0 }' "$tmp/section" |
        sed -E 's/^\.[A-Z]+ "?([a-z0-9_A-Z]+).*/\1/' | grep -v '^compat_NAME$'
    grep -o '^\.B compat_[a-z0-9_]*$' "$tmp/section" | cut -d' ' -f2
} | sort -u >"$tmp/doc"
comm -23 "$tmp/keys" "$tmp/doc" >"$tmp/undoc"
comm -13 "$tmp/keys" "$tmp/doc" >"$tmp/extra"
check "[server]: polysandbox.ini(5) documents each key polysandboxd accepts ($(wc -l <"$tmp/keys"))" \
    eval '[ -s "$tmp/keys" ] && ! [ -s "$tmp/undoc" ] || { sed "s/^/# undocumented: /" "$tmp/undoc"; false; }'
check "[server]: polysandbox.ini(5) documents no key polysandboxd does not accept" \
    eval '! [ -s "$tmp/extra" ] || { sed "s/^/# not accepted: /" "$tmp/extra"; false; }'
done_testing
