#!/bin/sh
# tests/python/files.sh - Sandbox.list_files in the process and through
# polysandboxd: runs files.py (see run-python.sh).
PYTHON_TEST=files.py
. "${top_srcdir:?top_srcdir is not set (run through make check)}/tests/python/run-python.sh"
