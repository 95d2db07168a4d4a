#!/bin/sh
# tests/kube/stdin-stream.sh - streamed stdin (SBX_CAP_STDIN_STREAM) on the
# kubernetes provider against the Kubernetes fake: over v5 the command
# reads lines as they are written and the rest to the pipe's end (CLOSE of
# channel 0), a command that reads nothing holds the writer back; v4 cannot
# end stdin, so with exec_protocol = v4, or against a server without v5
# (before Kubernetes 1.30: the fake's --exec-protocols), the exec is
# refused.  The provider's checks are test-stdin-stream's (public API).
. "$top_srcdir/tests/kube/lib.sh"
plan 10
prog=$top_builddir/tests/kube/test-stdin-stream
# run_prog MODE: its TAP lines, numbered after ours.
run_prog() {
    timeout -k 5 300 "$prog" "$1" "$tap_n" >"$tmp/prog.out" 2>&1 || tap_failed=1
    cat "$tmp/prog.out"
    tap_n=$((tap_n + $(grep -c -E '^(not )?ok ' "$tmp/prog.out")))
}

start_provider_fake
run_prog stream
KUBE_SETTINGS="exec_protocol = v4" write_config
run_prog refused
KUBE_SETTINGS=

no_v5=v4.channel.k8s.io,v4.base64.channel.k8s.io,channel.k8s.io,base64.channel.k8s.io
start_provider_fake --exec-protocols "$no_v5"
cli run -- echo over-v4
check "a server without v5: a plain exec falls back to v4" rc_and_out 0 over-v4
run_prog old
# kubectl 1.32 (nobody here wrote it) takes the fake's refusal of v5 for
# an older API server's: it falls back from the WebSocket to SPDY, which
# the fake does not serve.
if command -v kubectl >/dev/null 2>&1; then
    cli create --ttl 60s
    id=$(cat "$tmp/out")
    kc -n "$KUBE_NS" exec "$id" -- true
    check "kubectl against the server without v5: the WebSocket refused (400), then SPDY tried" \
        eval '! is_rc 0 && grep -q -E "\"GET /api/v1/namespaces/$KUBE_NS/pods/$id/exec\\?[^\"]*\" 400" "$tmp/fake.err" && grep -q -E "\"POST /api/v1/namespaces/$KUBE_NS/pods/$id/exec\\?[^\"]*\" 400" "$tmp/fake.err"'
    cli destroy "$id"
else
    ok "kubectl against the server without v5 # SKIP kubectl is not installed"
fi
done_testing
