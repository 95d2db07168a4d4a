#!/bin/sh
# contrib/go-cache-warm.sh - build a Go build cache for the go template,
# once, outside any sandbox, to be bound read-only into every sandbox.
#
# usage: go-cache-warm.sh DIR [PACKAGE ...]
#
# A sandbox's go test otherwise starts with an empty cache and spends
# seconds computing vet facts of the whole standard library below fmt and
# testing before it compiles one line of the sample.  This script fills
# DIR/build with what `go test` and `go build` of a program importing
# PACKAGEs (default: what MultiPL-E's Go programs import) leave in a
# cache, writes DIR/env (a go env file: GOCACHE=DIR/build) and DIR/version
# (the go that built it), then makes it all read-only.  Go 1.19 reads a
# read-only cache and ignores its failed writes, so no sample can change
# what another reads.
#
# `make install` runs it into $(localstatedir)/cache/polysandbox/go, which
# the local provider binds read-only (cache_dir) and the shipped go
# template reads through GOENV; elsewhere, bind DIR (ro_binds) and name
# DIR/env as GOENV in a templates.d/go.ini (see polysandbox.ini(5),
# TEMPLATES).  Rebuild it after upgrading go: a stale cache is only
# missed, never wrong (Go keys entries by its own version and the
# sources' digests), but every sample then builds cold.  DIR/version is
# the stamp polysandbox compares with the host's `go env GOVERSION`:
# doctor and templates warn of a stale cache, and a sandbox on the
# host's go leaves it aside (core/run/template-cache.c).
#
# Exit status: 0 built, 2 bad usage, 1 go failed (DIR left as it was).
set -eu
umask 022
case ${1:-} in
/*) dir=$1; shift ;;
*) echo "usage: go-cache-warm.sh DIR [PACKAGE ...] (DIR absolute)" >&2; exit 2 ;;
esac
[ $# -gt 0 ] || set -- fmt testing strings sort math strconv reflect unicode bytes \
    regexp errors math/rand time container/heap
for p in "$@"; do
    case $p in
    *[!A-Za-z0-9/._-]* | "") echo "go-cache-warm.sh: bad package name '$p'" >&2; exit 2 ;;
    esac
done
case $dir in
*[!A-Za-z0-9/._+-]*) echo "go-cache-warm.sh: DIR '$dir' has characters a go env file cannot hold" >&2; exit 2 ;;
esac
command -v go >/dev/null || { echo "go-cache-warm.sh: go is not installed" >&2; exit 1; }

# built beside DIR and renamed over it, so a reader sees the old cache or
# the whole new one (a sandbox starting in between just builds cold)
mkdir -p "$(dirname "$dir")"
new=$(mktemp -d "$dir.new.XXXXXX")
work=$(mktemp -d)
trap 'rm -rf "$work" "$new"' EXIT
export GOCACHE="$new/build" GOPATH="$work/gopath" GO111MODULE=off GOTOOLCHAIN=local GOFLAGS='' \
    GOENV=off

{
    echo 'package main_test'
    echo 'import ('
    echo '    "testing"'
    for p in "$@"; do echo "    _ \"$p\""; done
    echo ')'
    echo 'func TestWarm(t *testing.T) {}'
} >"$work/main_test.go"
{
    echo 'package main'
    echo 'import ('
    for p in "$@"; do [ "$p" = testing ] || echo "    _ \"$p\""; done
    echo ')'
    echo 'func main() {}'
} >"$work/main.go"
(cd "$work" && go test main_test.go >/dev/null && go build -o main main.go)
# the path the sandboxes see: DIR itself, bound at the same place
echo "GOCACHE=$dir/build" >"$new/env"
go version >"$new/version"

chmod -R a+rX,a-w "$new"
chmod u+w "$new"
old=
if [ -e "$dir" ]; then
    old=$(mktemp -d "$dir.old.XXXXXX")
    mv "$dir" "$old/cache"
fi
mv "$new" "$dir"
chmod u-w "$dir"
new=
if [ -n "$old" ]; then
    chmod -R u+w "$old"
    rm -rf "$old"
fi
