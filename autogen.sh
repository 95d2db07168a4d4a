#!/bin/sh
# autogen.sh - regenerate the build system (same as autoreconf -fi)
set -e
cd "$(dirname "$0")"
autoreconf -fi
