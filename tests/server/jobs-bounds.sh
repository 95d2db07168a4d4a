#!/bin/sh
# tests/server/jobs-bounds.sh - what jobs may keep: jobs_max (429 while
# every job kept still runs, else the oldest ended one makes room),
# job_ttl (an ended job is forgotten, its directory removed), heartbeats
# on a silent event stream, and a state directory that cannot be used
# (the configured one stops the server, the default one only the jobs).
. "$top_srcdir/tests/server/lib.sh"
. "$top_srcdir/tests/server/jobs-lib.sh"

plan 12

check "polysandboxd starts: jobs_max 2, job_ttl 3s, heartbeat 1s" \
    srv_start -o server.state_dir="$state" -o server.jobs_max=2 -o server.job_ttl=3s \
    -o server.heartbeat=1s
# Its own timeout: at the default (10 s) a loaded machine could see the
# item end before the "a running job is not" check below.
slow='{"items":[{"argv":["sleep","300"],"timeout":240}]}'
post /v1/batch "$slow"
a=$(jq_out 'j["id"]')
post /v1/batch "$slow"
b=$(jq_out 'j["id"]')
post /v1/batch '{"items":[{"argv":["true"]}]}'
check "a third job while the two kept run: 429 too_many_jobs with Retry-After" \
    eval 'err_is 429 too_many_jobs && [ -n "$(header Retry-After)" ] && json_check "\"jobs_max\" in j[\"error\"][\"message\"]"'

curl -sS -N --max-time 3 "$base/v1/jobs/$a/events" >"$tmp/beats" 2>/dev/null
check "a silent job's event stream gets heartbeats" grep -q '^: ping' "$tmp/beats"

req DELETE "/v1/jobs/$a"
post /v1/batch '{"items":[{"argv":["true"]}]}'
c=$(jq_out 'j["id"]')
check "once one has ended, a new job makes it be forgotten" \
    eval 'is 202 && req GET "/v1/jobs/$a" && err_is 404 not_found && ! [ -e "$state/jobs/$a" ] && [ -d "$state/jobs/$b" ]'

wait_job "$c"
i=0
while [ $i -lt 100 ] && [ -d "$state/jobs/$c" ]; do sleep 0.1; i=$((i + 1)); done
check "an ended job is forgotten after job_ttl: 404, its directory removed" \
    eval 'req GET "/v1/jobs/$c" && err_is 404 not_found && ! [ -e "$state/jobs/$c" ]'
req GET "/v1/jobs/$b?limit=0"
check "... a running job is not" eval 'is 200 && json_check "j[\"state\"] == \"running\""'
# A limit the library refuses (above limits.max_wall) when the item runs:
# an error record naming it, not a crash of the server.
post /v1/batch '{"items":[{"argv":["true"],"timeout":600}]}'
d=$(jq_out 'j["id"]')
check "an item's timeout above limits.max_wall: an error record naming it" \
    eval 'wait_job "$d" && req GET "/v1/jobs/$d" && json_check "j[\"items\"][0][\"record\"][\"error\"][\"error\"][\"code\"] == \"limit\" and \"max_wall\" in j[\"items\"][0][\"record\"][\"error\"][\"error\"][\"message\"]"'
req DELETE "/v1/jobs/$b"
srv_stop TERM
check "SIGTERM: exit 0, no sandbox left" eval '[ "$srv_rc" = 0 ] && [ -z "$(sandboxes_left)" ]'

check "a state_dir that cannot be used: the server does not start, naming it" \
    eval '! srv_start -o server.state_dir=/proc/self/nowhere && [ "$srv_rc" = 1 ] && grep -q "/proc/self/nowhere.*state_dir" "$tmp/server.log"'
XDG_STATE_HOME=/proc/self/nowhere
check "the default directory unusable: the server starts without jobs" \
    eval 'srv_start && grep -q "cannot use the jobs directory" "$tmp/server.log"'
post /v1/batch '{"items":[{"argv":["true"]}]}'
check "... POST /v1/batch: 503 jobs_unavailable naming state_dir" \
    eval 'err_is 503 jobs_unavailable && json_check "\"state_dir\" in j[\"error\"][\"message\"]"'
post /v1/run '{"argv":["true"]}'
check "... POST /v1/run: 200" is 200
done_testing
