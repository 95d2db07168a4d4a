#!/bin/sh
# tests/kube/stdin-stream.sh - streamed stdin (SBX_CAP_STDIN_STREAM) on the
# kubernetes provider against the Kubernetes fake: over v5 the command
# reads lines as they are written and the rest to the pipe's end (CLOSE of
# channel 0), a command that reads nothing holds the writer back; with
# exec_protocol = v4, which cannot end stdin, the exec is refused.  The
# checks are test-stdin-stream's (public API, sbx_run).
. "$top_srcdir/tests/kube/lib.sh"
plan 6
start_provider_fake
prog=$top_builddir/tests/kube/test-stdin-stream
timeout -k 5 300 "$prog" stream 0 || tap_failed=1
KUBE_SETTINGS="exec_protocol = v4" write_config
timeout -k 5 120 "$prog" refused 4 || tap_failed=1
tap_n=6
done_testing
