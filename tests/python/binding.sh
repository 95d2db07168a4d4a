#!/bin/sh
# tests/python/binding.sh - the Python package (python/polysandbox) on the
# build tree's libpolysandbox, in the process and through polysandboxd:
# runs the pytest file test_binding.py (see run-python.sh).
PYTHON_TEST=test_binding.py
. "${top_srcdir:?top_srcdir is not set (run through make check)}/tests/python/run-python.sh"
