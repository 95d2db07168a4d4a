#!/bin/sh
# tests/kube/python-client.sh - the Kubernetes fake through Debian's
# python3-kubernetes (tests/kube/python-client.py prints the TAP)
. "$top_srcdir/tests/kube/lib.sh"
"$PY" -c 'import kubernetes' 2>/dev/null || skip_all "python3-kubernetes is not installed"
start_fake
timeout -k 5 180 "$PY" "$top_srcdir/tests/kube/python-client.py"
