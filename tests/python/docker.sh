#!/bin/sh
# tests/python/docker.sh - the package's main calls on the docker provider
# and the local one: runs the pytest file test_docker.py (see
# run-python.sh) once dockerd answers and the test image exists (started
# and built as tests/docker do; skipped when they cannot be).
: "${top_srcdir:?top_srcdir is not set (run through make check)}"
. "$top_srcdir/tests/docker/lib.sh"
docker_ready; r=$?
[ "$r" -eq 77 ] && exit 0   # the skip was printed as TAP
[ "$r" -eq 0 ] || exit "$r"
PYTHON_TEST=test_docker.py
. "$top_srcdir/tests/python/run-python.sh"
