#!/bin/sh
# tests/python/files.sh - Sandbox.list_files in the process and through
# polysandboxd: runs the pytest file test_files.py (see run-python.sh).
PYTHON_TEST=test_files.py
. "${top_srcdir:?top_srcdir is not set (run through make check)}/tests/python/run-python.sh"
