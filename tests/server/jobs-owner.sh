#!/bin/sh
# tests/server/jobs-owner.sh - a job is its token's: another token cannot
# read, list, follow or cancel it (404, as a job never made), nor reach
# it with the same Idempotency-Key; which token owns it holds across a
# restart that reorders the token file, and no token is written to the
# state directory.  And the jobs' figures in /metrics.
. "$top_srcdir/tests/server/lib.sh"
. "$top_srcdir/tests/server/jobs-lib.sh"

plan 16

tok1=owner-token-aaaaaaaaaaaaaaaa
tok2=owner-token-bbbbbbbbbbbbbbbb
printf '%s\n%s\n' "$tok1" "$tok2" >"$tmp/tokens"
chmod 600 "$tmp/tokens"
a1="Authorization: Bearer $tok1"
a2="Authorization: Bearer $tok2"

check "polysandboxd starts with two tokens and a state directory" \
    srv_start --token-file "$tmp/tokens" -o server.state_dir="$state" -o server.grace=1s

post /v1/batch '{"items":[{"shell":"echo one"},{"shell":"exit 3"}]}' -H "$a1" -H 'Idempotency-Key: k1'
done_job=$(jq_out 'j["id"]')
# A job that runs until it is cancelled.
post /v1/batch '{"items":[{"shell":"sleep 300","timeout":290}]}' -H "$a1"
long=$(jq_out 'j["id"]')
check "token 1 makes two jobs" eval 'is 202 && [ -n "$done_job" ] && [ -n "$long" ]'
check "... and reads its job" eval 'wait_job "$done_job" 60 -H "$a1"; req GET "/v1/jobs/$done_job" -H "$a1"; is 200'

req GET "/v1/jobs/$done_job" -H "$a2"
check "token 2 reading token 1's job: 404, as a job never made" err_is 404 not_found
req GET /v1/jobs -H "$a2"
check "token 2's list holds none of them" \
    eval 'is 200 && json_check "j[\"total\"] == 0 and j[\"jobs\"] == []"'
req GET /v1/jobs -H "$a1"
check "token 1's list holds both" \
    eval 'is 200 && json_check "sorted(x[\"id\"] for x in j[\"jobs\"]) == sorted([\"$done_job\", \"$long\"])"'
req GET "/v1/jobs/$done_job/events" -H "$a2"
check "token 2 following token 1's events: 404" err_is 404 not_found
req DELETE "/v1/jobs/$long" -H "$a2"
check "token 2 cancelling token 1's job: 404" err_is 404 not_found
req GET "/v1/jobs/$long?limit=0" -H "$a1"
check "... and the job was not cancelled" \
    eval 'is 200 && json_check "j[\"state\"] in (\"queued\", \"running\")"'
post /v1/batch '{"items":[{"shell":"echo one"},{"shell":"exit 3"}]}' -H "$a2" -H 'Idempotency-Key: k1'
check "token 2 with token 1's Idempotency-Key makes a job of its own" \
    eval 'is 202 && [ "$(jq_out "j[\"id\"]")" != "$done_job" ]'
other=$(jq_out 'j["id"]')
wait_job "$other" 60 -H "$a2" >/dev/null

req GET /metrics -H "$a1"
check "/metrics: jobs by kind and state, items done and failed" \
    eval 'is 200 && grep -q "^polysandboxd_jobs{kind=\"batch\",state=\"succeeded\"} 2$" "$tmp/out" &&
          grep -q "^polysandboxd_jobs{kind=\"batch\",state=\"running\"} 1$" "$tmp/out" &&
          grep -q "^polysandboxd_jobs{kind=\"eval\",state=\"queued\"} 0$" "$tmp/out" &&
          grep -q "^polysandboxd_job_items_done_total{kind=\"batch\"} 4$" "$tmp/out" &&
          grep -q "^polysandboxd_job_items_failed_total{kind=\"batch\"} 2$" "$tmp/out" &&
          grep -q "^polysandboxd_job_items_pending{kind=\"batch\"} 1$" "$tmp/out"'
check "no token is written to the state directory" \
    eval '! grep -r -q -e "$tok1" -e "$tok2" "$state"'

# The same tokens, the other way round: each still owns its own jobs.
srv_stop TERM
printf '%s\n%s\n' "$tok2" "$tok1" >"$tmp/tokens"
check "restarted with the token file reordered" \
    srv_start --token-file "$tmp/tokens" -o server.state_dir="$state" -o server.grace=1s
req GET "/v1/jobs/$done_job?limit=0" -H "$a1"
check "... token 1 still reads its job, token 2 still does not" \
    eval 'is 200 && req GET "/v1/jobs/$done_job" -H "$a2" && err_is 404 not_found'
req GET /metrics -H "$a1"
check "... items that ended before the restart are not counted again" \
    eval 'is 200 && grep -q "^polysandboxd_job_items_done_total{kind=\"batch\"} 0$" "$tmp/out" &&
          grep -q "^polysandboxd_jobs{kind=\"batch\",state=\"succeeded\"} 2$" "$tmp/out"'
req DELETE "/v1/jobs/$long" -H "$a1"
check "token 1 cancels its job" \
    eval 'case $code in 200|202) true ;; *) false ;; esac && wait_job "$long" 60 -H "$a1" && json_check "j[\"state\"] == \"cancelled\""'
