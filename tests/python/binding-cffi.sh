#!/bin/sh
# tests/python/binding-cffi.sh - test_binding.py (run, run_code, limits,
# errors, providers, and the same requests locally and through
# polysandboxd) with the module-level runner on the cffi backend
# (POLYSANDBOX_BACKEND=cffi; skipped when it is not built): see
# run-python.sh.
PYTHON_TEST=test_binding.py
POLYSANDBOX_BACKEND=cffi
export POLYSANDBOX_BACKEND
. "${top_srcdir:?top_srcdir is not set (run through make check)}/tests/python/run-python.sh"
