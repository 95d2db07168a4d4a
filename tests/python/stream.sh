#!/bin/sh
# tests/python/stream.sh - the Python package's Sandbox.stream,
# execute_many and Result.compile, in the process and through
# polysandboxd: runs the pytest file test_stream.py (see run-python.sh).
PYTHON_TEST=test_stream.py
. "${top_srcdir:?top_srcdir is not set (run through make check)}/tests/python/run-python.sh"
