#!/bin/sh
# tests/python/sandbox.sh - the Python package's sandboxes, run_many and
# cancellation, in the process and through polysandboxd: runs the pytest
# file test_sandbox.py (see run-python.sh).
PYTHON_TEST=test_sandbox.py
. "${top_srcdir:?top_srcdir is not set (run through make check)}/tests/python/run-python.sh"
