#!/bin/sh
# tests/python/compare.sh - the Python package's compare and pools against
# `polysandbox compare --json` / `pools --json` and polysandboxd: runs
# the pytest file test_compare.py (see run-python.sh).
PYTHON_TEST=test_compare.py
. "${top_srcdir:?top_srcdir is not set (run through make check)}/tests/python/run-python.sh"
