#!/bin/sh
# tests/conformance/kubernetes.t - the conformance kit against the
# kubernetes provider, talking to the Kubernetes fake (tests/fakes/kube.py)
# over TLS on 127.0.0.1 with a token whose only rights are the Role of
# plugins/kubernetes/README.md.  The kit prints TAP itself.
. "$top_srcdir/tests/kube/lib.sh"
start_provider_fake
timeout -k 5 900 "$top_builddir/polysandbox-conformance" -t 300 kubernetes
