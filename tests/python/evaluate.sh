#!/bin/sh
# tests/python/evaluate.sh - the Python package's evaluate and aevaluate
# against `polysandbox eval --json`: runs the pytest file test_evaluate.py
# (see run-python.sh).
PYTHON_TEST=test_evaluate.py
. "${top_srcdir:?top_srcdir is not set (run through make check)}/tests/python/run-python.sh"
