#!/bin/sh
# tests/python/example.sh - issue 18's example of the Python package, run
# as written (test_example.py; see run-python.sh).
PYTHON_TEST=test_example.py
. "${top_srcdir:?top_srcdir is not set (run through make check)}/tests/python/run-python.sh"
