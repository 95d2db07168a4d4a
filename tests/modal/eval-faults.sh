#!/bin/sh
# tests/modal/eval-faults.sh - an evaluation of MODAL_EVAL_SAMPLES samples
# (60 in make check, about 110 s; issue 23's 200 with MODAL_EVAL_SAMPLES=200,
# 355 s on two cores under a load of 20: four execs a sample on the fake)
# on the modal provider, once on a healthy fake and once with 30% of its
# gRPC calls failing UNAVAILABLE and 10% of its output streams cut mid-way:
# every sample is accounted for exactly once, with the same verdict, and
# pass@1 is the same (end to end: the fake's wire faults, the provider's
# status mapping and stream resumption, the core's retries and the eval's
# own retry of sandbox errors).
. "$top_srcdir/tests/modal/lib.sh"

ns=$(eval_samples MODAL_EVAL_SAMPLES 60) || exit 99
plan 8

# Short waits: the core's backoff is not what is under test here.
MODAL_EXTRA_INI='[retry]
attempts = 10
base = 5ms
cap = 100ms'
start_fake --seed 3

. "$top_srcdir/tests/lib/eval-faults.sh"
ef_data "$ns"

ef_eval modal calm
ef_check_calm fake

faults '{"error_rate": 0.3, "code": "UNAVAILABLE", "drop_stream_rate": 0.1, "seed": 5}' || exit 99
ef_eval modal stormy
ef_check_stormy "the same $ns samples under 30% UNAVAILABLE and 10% dropped streams"
fake_state 's["injected"]["errors"] >= 10 and s["injected"]["drops"] >= 1'
check "the fake did inject them ($(cat "$tmp/fake_answer" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["injected"])'))" \
    fake_state 's["injected"]["errors"] >= 10 and s["injected"]["drops"] >= 1'
ef_check_same stormy modal
check "no sandbox is left on the fake" fake_state 'not s["sandboxes"]'
done_testing
