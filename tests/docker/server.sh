#!/bin/sh
# tests/docker/server.sh - the helper's exec server driven through its
# frames on this machine (tests/docker/server.py; no Docker needed).
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
command -v python3 >/dev/null 2>&1 || { echo "1..0 # SKIP no python3"; exit 0; }
exec python3 "$top_srcdir/tests/docker/server.py" "$top_builddir/plugins/docker/init/docker-init"
