#!/bin/sh
# tests/python/asyncio.sh - the Python package under asyncio: many
# sandboxes from one loop with no leak, cancellation, the exception
# hierarchy, binary data: runs the pytest file test_asyncio.py (see
# run-python.sh).
PYTHON_TEST=test_asyncio.py
. "${top_srcdir:?top_srcdir is not set (run through make check)}/tests/python/run-python.sh"
