#!/bin/sh
# tests/kube/faults.sh - the kubernetes provider when the cluster misbehaves:
# 429 with Retry-After (absorbed by the core's retries; past them, an error
# naming the wait), 5xx storms, dropped and expired (410 Gone) readiness
# watches, a dropped exec stream (the command is swept), a pod evicted
# under an exec, a full ResourceQuota (a retryable "busy" error), output
# floods, pods that cannot be scheduled or whose image cannot be pulled.
. "$top_srcdir/tests/kube/lib.sh"
plan 19

# Short waits: the core's backoff is not what is under test.
KUBE_EXTRA_INI='[retry]
attempts = 6
base = 5ms
cap = 200ms'
start_provider_fake --node-memory 4Gi --seed 7
no_pods() { [ "$(pods_left)" = 0 ]; }
injected() { fake_state "s['injected']['$1'] >= $2"; }

# ---- rate limits and server errors ----
faults '{"error_rate": 1, "status": 429, "retry_after": 1, "count": 1, "verbs": ["create"]}'
cli run -- echo past-429
check "a 429 with Retry-After on create: retried after it, the run goes through" \
    eval 'rc_and_out 0 past-429 && injected errors 1'
faults '{"error_rate": 1, "status": 429, "retry_after": 2, "verbs": ["create"]}'
KUBE_EXTRA_INI='[retry]
attempts = 1' write_config
cli run -- true
check "429 past the retries: a rate-limited error naming the wait" \
    sh -c "[ $rc -ne 0 ] && grep -q '429.*retry after 2 s' '$tmp/err'"
no_faults
write_config
faults '{"error_rate": 0.3, "status": 503, "seed": 11}'
ok_runs=0
for i in 1 2 3 4 5 6; do
    cli run -- echo "storm $i"
    [ "$rc" = 0 ] && [ "$(cat "$tmp/out")" = "storm $i" ] && ok_runs=$((ok_runs + 1))
done
no_faults
check "30% 503s on every call: 6 of 6 runs go through ($ok_runs)" eval '[ $ok_runs = 6 ] && injected errors 3'
check "... and leave no pod behind" no_pods

# ---- readiness watches ----
faults '{"drop_watch_rate": 1, "count": 3, "verbs": ["watch"]}'
cli run -- echo watched
check "dropped readiness watches: resumed from the last version" \
    eval 'rc_and_out 0 watched && injected drops 1'
faults '{"gone_rate": 1, "count": 2, "verbs": ["watch"]}'
cli run -- echo gone
check "410 Gone on the watch: a fresh GET, then on" eval 'rc_and_out 0 gone && injected gone 1'
no_faults

# ---- a dropped exec stream ----
cli create --ttl 120s
id=$(cat "$tmp/out")
faults '{"drop_exec_rate": 1, "count": 1, "verbs": ["exec"]}'
cli exec "$id" -- sh -c 'echo started; sleep 2; echo late > late.txt'
no_faults
check "an exec stream cut mid-command: an error saying so" \
    sh -c "[ $rc -ne 0 ] && grep -q 'connection was cut' '$tmp/err'"
sleep 3
cli exec "$id" -- sh -c 'cat late.txt 2>/dev/null || echo swept'
check "... and the command was swept, not left running" rc_and_out 0 swept

# ---- output floods ----
cli exec --json "$id" -- sh -c 'yes flood'
check "yes under the 1 MiB cap: output_limit, exactly the cap kept" \
    json_check 'j["status"] == "output_limit" and len(j["stdout"]) == 1048576 and j["stdout_truncated"]'
check "... and no yes is left in the pod" fake_state \
    "not [c for x in s['pods'] if x['name'] == '$id' for c in x['processes'] if c.startswith('yes')]"
cli run --json --output-limit 64K -- sh -c 'head -c 50000000 /dev/zero >&2; echo ok'
check "50 MB on stderr under a 64 KiB cap: stopped at the cap" \
    json_check 'j["status"] == "output_limit" and j["stderr_truncated"] and len(j["stderr"]) == 65536'

# ---- eviction under an exec ----
(cli exec "$id" -- sh -c 'sleep 60'; echo "$rc" >"$tmp/evict.rc") &
exec_pid=$!
sleep 1.5
fake_call POST /_fake/evict "{\"namespace\": \"$KUBE_NS\", \"name\": \"$id\"}"
wait $exec_pid
rc=$(cat "$tmp/evict.rc")
check "a pod evicted under an exec: a sandbox error naming the eviction" \
    sh -c "[ $rc -eq 125 ] && grep -q 'Evicted' '$tmp/err'"
cli exec "$id" -- true
check "... and the next exec is refused the same way" rc_and_err 125 "Evicted"
cli destroy "$id"
check "the evicted sandbox can still be destroyed" is_rc 0

# ---- quota ----
kube_objects '[{"apiVersion": "v1", "kind": "ResourceQuota",
  "metadata": {"name": "two-pods", "namespace": "'"$KUBE_NS"'"}, "spec": {"hard": {"pods": "1"}}}]'
cli create --ttl 120s
id=$(cat "$tmp/out")
KUBE_EXTRA_INI='[retry]
attempts = 2
base = 5ms
cap = 20ms' write_config
cli run -- true
check "a full ResourceQuota: a busy error (retryable, counted by the breaker) naming the quota" \
    sh -c "[ $rc -ne 0 ] && grep -q 'exceeded quota: two-pods' '$tmp/err' && grep -q 'ResourceQuota of the namespace is used up' '$tmp/err'"
cli destroy "$id"
cli run -- echo room-again
check "room again once a sandbox goes" rc_and_out 0 room-again

# ---- pods that will not run ----
KUBE_READY=2s write_config
cli run --memory 8G -- true
check "more memory than any node has: not scheduled in time, a busy error with the scheduler's words" \
    sh -c "[ $rc -ne 0 ] && grep -q 'not scheduled in time.*Insufficient memory' '$tmp/err'"
write_config
cli run --image registry.example/does-not-exist:1 -- true
check "an image that cannot be pulled: refused at once, naming it" \
    sh -c "[ $rc -ne 0 ] && grep -q 'image cannot be pulled (ErrImagePull' '$tmp/err'"
check "no pod is left behind by the failures" no_pods
done_testing
