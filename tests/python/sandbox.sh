#!/bin/sh
# tests/python/sandbox.sh - the Python package's sandboxes, run_many and
# cancellation, in the process and through polysandboxd: runs sandbox.py
# (see run-python.sh).
PYTHON_TEST=sandbox.py
. "${top_srcdir:?top_srcdir is not set (run through make check)}/tests/python/run-python.sh"
