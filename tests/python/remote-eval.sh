#!/bin/sh
# tests/python/remote-eval.sh - the Python package's Client.evaluate
# through polysandboxd, and acompare's cancellation: runs the pytest file
# test_remote_eval.py (see run-python.sh).
PYTHON_TEST=test_remote_eval.py
. "${top_srcdir:?top_srcdir is not set (run through make check)}/tests/python/run-python.sh"
