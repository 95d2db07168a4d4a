#!/bin/sh
# tests/server/judge0.sh - the Judge0 routes (/languages, /statuses,
# /submissions, /submissions/batch) driven by curl: the statuses a
# submission ends in, base64_encoded both ways, Judge0's answer to output
# that is not UTF-8, bad requests naming their field, submissions in the
# background (queued, processing, finished; the queue's bound; SIGTERM),
# batches, callback_url (a PUT received by a python3 http.server on
# 127.0.0.1, retried once when the first try gets no answer), DELETE
# (off by default, refused while queued or running), and the family
# switched off.
# (No Judge0 client is on npm to drive it with, unlike piston.sh.)
# The answers are kept and judged together by one python3 at the end.
. "$top_srcdir/tests/server/lib.sh"

plan 68

check "polysandboxd starts" srv_start -o server.max_body=64K

mkdir "$tmp/j"
n_j=0
# jc DESC STATUS EXPR: the last answer had STATUS and EXPR holds of its
# JSON (j; None when it is not JSON): judged at the end.
jc() {
    n_j=$((n_j + 1))
    cp "$tmp/out" "$tmp/j/$n_j.body" 2>/dev/null || : >"$tmp/j/$n_j.body"
    printf '%s\n%s\n%s\n%s' "$code" "$2" "$1" "$3" >"$tmp/j/$n_j.check"
}
# sub JSON [QUERY]: POST /submissions?wait=true&QUERY
sub() { post "/submissions?wait=true${2:+&$2}" "$1"; }
token() { sed -n 's/.*"token":"\([0-9a-f-]*\)".*/\1/p' "$tmp/out"; }
# invalid FIELD: Judge0's 422 {FIELD: [message]}
# poll TOKEN: GET the submission until it ended (a status past 2), its
# statuses kept one a line in $tmp/seen.TOKEN; bounded (60 s: a hang).
poll() {
    : >"$tmp/seen.$1"
    p_n=1200
    while [ $p_n -gt 0 ]; do
        req GET "/submissions/$1?fields=status_id"
        p_s=$(sed -n 's/.*"status_id":\([0-9]*\).*/\1/p' "$tmp/out")
        echo "$p_s" >>"$tmp/seen.$1"
        [ "${p_s:-0}" -gt 2 ] && return 0
        sleep 0.05
        p_n=$((p_n - 1))
    done
    return 1
}
# The callbacks' receiver (callback-receiver.py): each PUT it answers is
# kept as $tmp/cb/PATH-with-_; under /flaky/ the first try of a path gets
# no answer (the connection is closed).
mkdir "$tmp/cb"
"$PY" "$top_srcdir/tests/server/callback-receiver.py" "$tmp/cb" &
cb_pid=$!
# callback NAME: wait (bounded: 60 s) for the PUT to /NAME; its record in
# $tmp/out, code 200 (000 when none came).
callback() {
    c_f="$tmp/cb/$(echo "$1" | tr / _)"
    c_n=1200
    code=000
    while [ $c_n -gt 0 ]; do
        if [ -f "$c_f" ]; then
            cp "$c_f" "$tmp/out"
            code=200
            return 0
        fi
        sleep 0.05
        c_n=$((c_n - 1))
    done
    return 1
}
c_n=200
while [ ! -f "$tmp/cb/port" ] && [ $c_n -gt 0 ]; do sleep 0.05; c_n=$((c_n - 1)); done
cb_url="http://127.0.0.1:$(cat "$tmp/cb/port" 2>/dev/null)"
invalid() { printf 'list(j) == ["%s"] and isinstance(j["%s"][0], str) and j["%s"][0]' "$1" "$1" "$1"; }

req GET /languages
jc "languages: Judge0's ids of our templates, by name" 200 '
[ids[71] == "Python (3)" and ids[63] == "JavaScript (Node.js)" and ids[50] == "C (GCC)" and
 ids[54] == "C++ (GCC)" and ids[46] == "Bash" and 62 in ids and 75 not in ids and 70 not in ids
 for ids in [{l["id"]: l["name"] for l in j}]][0]'
req GET /statuses
jc "statuses: 1 to 14 with Judge0's descriptions" 200 '
[s["id"] for s in j] == list(range(1, 15)) and j[10]["description"] == "Runtime Error (NZEC)" and
j[12]["description"] == "Internal Error"'

sub '{"language_id":71,"source_code":"print(6*7)\nprint()","expected_output":"42  \n"}'
jc "accepted: expected_output compared as Judge0 does (trailing blanks)" 201 '
j["status"] == {"id": 3, "description": "Accepted"} and j["stdout"] == "42\n\n" and
j["stderr"] is None and j["compile_output"] is None and j["message"] is None'
jc "a submission: Judge0's default attributes, time in s as a string, memory in KB" 201 '
set(j) == {"stdout", "time", "memory", "stderr", "token", "compile_output", "message", "status"} and
0 <= float(j["time"]) < 30 and (j["memory"] is None or 100 < j["memory"] < 10**7) and len(j["token"]) == 36'
tok_ok=$(token)
sub '{"language_id":71,"source_code":"print(41)","expected_output":"42"}'
jc "wrong answer: status 4, its stdout shown" 201 'j["status"]["id"] == 4 and j["stdout"] == "41\n"'
sub '{"language_id":46,"source_code":"sleep 30","wall_time_limit":0.5}'
jc "wall_time_limit: Time Limit Exceeded" 201 'j["status"] == {"id": 5, "description": "Time Limit Exceeded"}'
sub '{"language_id":46,"source_code":"while :; do :; done","cpu_time_limit":0.3,"wall_time_limit":30}'
jc "cpu_time_limit: Time Limit Exceeded" 201 'j["status"]["id"] == 5'
sub '{"language_id":71,"source_code":"x = bytearray(400 << 20)","memory_limit":65536}' \
    'fields=status,message,exit_signal'
jc "memory_limit (KB): status 12 and its message (Judge0 has no status for it)" 201 '
j == {"status": {"id": 12, "description": "Runtime Error (Other)"}, "message": "Memory limit exceeded", "exit_signal": 9}'
sub '{"language_id":50,"source_code":"int main(void) { return }"}'
jc "C: a compile error is status 6 with the compiler's output" 201 '
j["status"] == {"id": 6, "description": "Compilation Error"} and "error" in j["compile_output"] and
j["stdout"] is None and j["time"] is None'
sub '{"language_id":50,"source_code":"#include <stdio.h>\nint main(void) { int c = getchar(); printf(\"%c!\\n\", c); return 0; }","stdin":"x"}'
jc "C: compiled and run, stdin" 201 'j["status"]["id"] == 3 and j["stdout"] == "x!\n"'
sub '{"language_id":46,"source_code":"echo out; echo err >&2; exit 3"}'
jc "a non-zero exit: NZEC, its message" 201 '
j["status"] == {"id": 11, "description": "Runtime Error (NZEC)"} and
j["message"] == "Exited with error status 3" and j["stdout"] == "out\n" and j["stderr"] == "err\n"'
tok_nzec=$(token)
sub '{"language_id":46,"source_code":"kill -SEGV $$"}' 'fields=status,exit_signal,exit_code'
jc "SIGSEGV: status 7, exit_signal 11 (fields=)" 201 '
j == {"status": {"id": 7, "description": "Runtime Error (SIGSEGV)"}, "exit_signal": 11, "exit_code": None}'
sub '{"language_id":46,"source_code":"kill -FPE $$"}' 'fields=status'
jc "SIGFPE: status 9" 201 'j["status"]["id"] == 9'
sub '{"language_id":46,"source_code":"kill -USR1 $$"}' 'fields=status,message'
jc "another signal: status 12, its message" 201 'j["status"]["id"] == 12 and j["message"] == "Caught fatal signal 10"'
sub '{"language_id":46,"source_code":"read x; echo \"$x|$1|$2|$#\"","stdin":"in\n","command_line_arguments":"a '"'b c'"'"}'
jc "stdin and command_line_arguments (quoted as a shell would)" 201 'j["stdout"] == "in|a|b c|2\n"'
sub '{"language_id":46,"source_code":"echo o; echo e >&2","redirect_stderr_to_stdout":true}'
jc "redirect_stderr_to_stdout" 201 'j["stdout"] == "o\ne\n" and j["stderr"] is None'

# base64 both ways: what comes back is Ruby's Base64.encode64 (lines of 60).
src=$(printf 'read x; printf "%%s-%%070d\\n" "$x" 7' | base64 -w0)
sub '{"language_id":46,"source_code":"'"$src"'","stdin":"'"$(printf 'h\303\251' | base64 -w0)"'"}' \
    base64_encoded=true
jc "base64_encoded=true: source and stdin decoded, stdout encoded in lines of 60" 201 '
[base64.b64decode(j["stdout"]).decode() == "h\u00e9-" + "0" * 69 + "7\n" and lines[-1] == "" and
 len(lines) == 3 and len(lines[0]) == 60 and j["stderr"] is None
 for lines in [j["stdout"].split("\n")]][0]'
sub '{"language_id":46,"source_code":"printf '"'\\\\377\\\\376'"'"}'
jc "output not UTF-8 without base64: 201 {token, error} as Judge0" 201 '
set(j) == {"token", "error"} and j["error"] == "some attributes for this submission cannot be converted to UTF-8, use base64_encoded=true query parameter"'
tok_bin=$(token)
req GET "/submissions/$tok_bin"
jc "... its GET without base64: 400 {error}" 400 'list(j) == ["error"] and "base64_encoded=true" in j["error"]'
req GET "/submissions/$tok_bin?base64_encoded=true"
jc "... and with base64: the bytes" 200 'base64.b64decode(j["stdout"]) == b"\xff\xfe" and j["status"]["id"] == 3'
req GET "/submissions/$tok_bin?base64_encoded=true&fields=stdout"
jc "... fields=stdout asks for that one only" 200 'list(j) == ["stdout"]'
req GET "/submissions/$tok_ok?fields=*"
jc "GET a kept submission, fields=*: what was asked and what came of it" 200 '
j["source_code"] == "print(6*7)\nprint()" and j["language_id"] == 71 and j["expected_output"] == "42  \n" and
j["status_id"] == 3 and j["exit_code"] == 0 and j["token"] == "'"$tok_ok"'" and j["finished_at"] >= j["created_at"]'
req GET "/submissions/$tok_nzec?base64_encoded=true&fields=message,stderr"
jc "GET with base64: the message is encoded too" 200 '
base64.b64decode(j["message"]) == b"Exited with error status 3" and j["stderr"] == "ZXJyCg==\n"'

# In the background (no wait=true, Judge0's default): 201 {token} at
# once, then GET shows it queued, processing, finished.
post /submissions '{"language_id":71,"source_code":"import sys\nprint(sys.stdin.read()*2)","stdin":"ab"}'
jc "without wait=true: 201 {token} at once (the run in the background)" 201 '
set(j) == {"token"} and len(j["token"]) == 36'
tok_bg=$(token)
poll "$tok_bg"
req GET "/submissions/$tok_bg?fields=*"
jc "... GET polled until it ended: statuses in Judge0's order (1, 2, then 3), its result" 200 '
j["status"] == {"id": 3, "description": "Accepted"} and j["stdout"] == "abab\n" and
j["stdin"] == "ab" and j["finished_at"] >= j["created_at"] and
[s for s in open("'"$tmp/seen.$tok_bg"'").read().split() if s] == sorted(
 s for s in open("'"$tmp/seen.$tok_bg"'").read().split() if s) and
open("'"$tmp/seen.$tok_bg"'").read().split()[-1] == "3" and
set(open("'"$tmp/seen.$tok_bg"'").read().split()) <= {"1", "2", "3"}'
post "/submissions?base64_encoded=true&wait=false" '{"language_id":46,"source_code":"'"$(printf 'printf "\\377"' | base64 -w0)"'"}'
tok_bg64=$(token)
poll "$tok_bg64"
req GET "/submissions/$tok_bg64?base64_encoded=true&fields=stdout,status_id"
jc "wait=false and base64_encoded=true: bytes that are not UTF-8 shown in base64" 200 '
j == {"stdout": "/w==\n", "status_id": 3}'
# callback_url: Judge0's PUT once the submission is finished.
post /submissions '{"language_id":46,"source_code":"echo called","callback_url":"'"$cb_url"'/cb/1"}'
tok_cb=$(token)
callback cb/1
jc "callback_url: a PUT of JSON once finished, Judge0's default fields in base64" 200 '
j["method"] == "PUT" and j["type"] == "application/json" and j["tries"] == 1 and
[set(b) == {"stdout", "time", "memory", "stderr", "token", "compile_output", "message", "status"} and
 b["token"] == "'"$tok_cb"'" and base64.b64decode(b["stdout"]) == b"called\n" and
 b["status"] == {"id": 3, "description": "Accepted"} for b in [json.loads(j["body"])]][0]'
req GET "/submissions/$tok_cb?fields=status_id,callback_url"
jc "... GET shows it finished then, and its callback_url" 200 '
j == {"status_id": 3, "callback_url": "'"$cb_url"'/cb/1"}'
sub '{"language_id":46,"source_code":"echo again","callback_url":"'"$cb_url"'/flaky/2"}'
tok_cb2=$(token)
callback flaky/2
jc "wait=true calls back too; a try without an answer is tried again" 200 '
j["tries"] == 2 and json.loads(j["body"])["token"] == "'"$tok_cb2"'"'
sub '{"language_id":46,"source_code":"echo x","callback_url":"ftp://127.0.0.1/x"}'
jc "a callback_url that is not http(s): 422 naming it" 422 "$(invalid callback_url)"
req DELETE "/submissions/$tok_cb"
jc "DELETE without [server] judge0_delete: 400 as Judge0's default" 400 'j == {"error": "delete not allowed"}'

post /submissions '{"language_id":71}'
jc "in the background too, a submission is checked at once: 422 naming the field" 422 "$(invalid source_code)"

# Batches: each submission checked on its own, each answered in its slot.
post /submissions/batch '{"submissions":[{"language_id":71,"source_code":"print(1)"},{"language_id":71},"x",{"language_id":46,"source_code":"echo two"}]}'
jc "POST /submissions/batch: [{token}, its errors, ...] in order, the invalid ones in their slot" 201 '
len(j) == 4 and set(j[0]) == {"token"} and list(j[1]) == ["source_code"] and
list(j[2]) == ["error"] and set(j[3]) == {"token"} and j[0]["token"] != j[3]["token"]'
tok_b1=$(sed -n 's/^\[{"token":"\([0-9a-f-]*\)".*/\1/p' "$tmp/out")
tok_b4=$(sed -n 's/.*{"token":"\([0-9a-f-]*\)"}\]$/\1/p' "$tmp/out")
poll "$tok_b1" && poll "$tok_b4"
req GET "/submissions/batch?tokens=$tok_b1,00000000-0000-4000-8000-000000000000,$tok_b4&fields=stdout,status_id"
jc "GET /submissions/batch?tokens=: each in order, null for one not kept" 200 '
j == {"submissions": [{"stdout": "1\n", "status_id": 3}, None, {"stdout": "two\n", "status_id": 3}]}'
post /submissions/batch '{"submissions":[]}'
jc "an empty batch: 400 as Judge0" 400 'j == {"error": "there should be at least one submission in a batch"}'
post /submissions/batch "{\"submissions\":[$(printf '{},%.0s' $(seq 20)){}]}"
jc "a batch of 21: 400 as Judge0 (at most 20)" 400 '"less than or equal to 20" in j["error"]'
req GET /submissions/batch
jc "GET /submissions/batch without tokens: 400" 400 'list(j) == ["error"]'
req GET /languages/71
jc "GET /languages/71: that language" 200 'j == {"id": 71, "name": "Python (3)", "is_archived": False}'
req GET /languages/75
jc "GET /languages/75 (no template here): 404 {error}" 404 'list(j) == ["error"]'

# bad requests
req GET /submissions/00000000-0000-4000-8000-000000000000
jc "an unknown token: 404 {error}" 404 'list(j) == ["error"]'
req GET "/submissions/$tok_ok?fields=stdout,bogus"
jc "fields= naming no attribute: 400 as Judge0" 400 'j == {"error": "invalid fields: [bogus]"}'
sub '{"language_id":71,"source_code":"x"}' base64_encoded=yes
jc "base64_encoded neither true nor false: 400 naming it" 400 '"base64_encoded" in j["error"]'
sub '{"language_id":71,"source_code":'
jc "malformed JSON: 400 {error}" 400 'list(j) == ["error"]'
sub '{"language_id":"python","source_code":"x"}'
jc "language_id not an integer: 422 naming it" 422 "$(invalid language_id)"
sub '{"language_id":75,"source_code":"x"}'
jc "a language id with no template here: 422 as Judge0" 422 'j == {"language_id": ["language with id 75 doesn'"'"'t exist"]}'
sub '{"language_id":71}'
jc "no source_code: 422 naming it" 422 "$(invalid source_code)"
sub '{"language_id":71,"source_code":"x","stdin":5}'
jc "stdin not a string: 422 naming it" 422 "$(invalid stdin)"
sub '{"language_id":71,"source_code":"x","memory_limit":"lots"}'
jc "memory_limit not a number: 422 naming it" 422 "$(invalid memory_limit)"
sub '{"language_id":71,"source_code":"x","stack_limit":64000}'
jc "a limit this server cannot apply (stack_limit): 422, not ignored" 422 "$(invalid stack_limit)"
sub '{"language_id":71,"source_code":"x","enable_network":true}'
jc "enable_network true: 422" 422 "$(invalid enable_network)"
sub '{"language_id":71,"source_code":"!!!"}' base64_encoded=true
jc "source_code that is not base64: 422 naming it" 422 "$(invalid source_code)"
sub '{"language_id":46,"source_code":"x","command_line_arguments":"a \"b"}'
jc "command_line_arguments with an open quote: 422" 422 "$(invalid command_line_arguments)"
big=$(head -c 70000 /dev/zero | tr '\0' 'x')
sub '{"language_id":71,"source_code":"'"$big"'"}'
jc "a body over [server] max_body: 413" 413 'True'

srv_stop TERM

# The background's bounds: [server] job_workers runs at once, [server]
# queue waiting, then Judge0's 503; SIGTERM cancels what runs.
secs=$((3000 + $$ % 5000))   # a sleep no other test runs
check "polysandboxd starts (job_workers 1, queue 2, grace 0.2s, DELETE on, callbacks off)" \
    srv_start -o server.job_workers=1 -o server.queue=2 -o server.grace=200ms \
    -o server.judge0_delete=true -o server.judge0_callbacks=false
post /submissions '{"language_id":46,"source_code":"sleep '"$secs"'"}'
tok_a=$(token)
check "a long submission in the background runs" within 30 sleeping "$secs"
req GET "/submissions/$tok_a?fields=status"
jc "... GET shows it Processing (status 2)" 200 'j == {"status": {"id": 2, "description": "Processing"}}'
post /submissions '{"language_id":46,"source_code":"echo b"}'
tok_b=$(token)
post /submissions '{"language_id":46,"source_code":"echo c"}'
req GET "/submissions/$tok_b?fields=status,stdout,time"
jc "the next one waits for it: In Queue (status 1), no result yet" 200 '
j == {"status": {"id": 1, "description": "In Queue"}, "stdout": None, "time": None}'
post /submissions '{"language_id":46,"source_code":"echo d"}'
jc "past [server] queue waiting: 503 {\"error\": \"queue is full\"} as Judge0" 503 '
j == {"error": "queue is full"}'
req GET /metrics
jc "/metrics: 2 Judge0 submissions waiting, 1 running" 200 '
b"\npolysandboxd_judge0_queued 2\n" in body and b"\npolysandboxd_judge0_running 1\n" in body'
req DELETE "/submissions/$tok_a"
jc "DELETE of one running: 400 as Judge0" 400 '
j == {"error": "submission cannot be deleted because its status is 2 (Processing)"}'
req DELETE "/submissions/$tok_b"
jc "DELETE of one queued: 400 as Judge0" 400 '
j == {"error": "submission cannot be deleted because its status is 1 (In Queue)"}'
post /submissions '{"language_id":46,"source_code":"echo x","callback_url":"'"$cb_url"'/cb/3"}'
jc "callback_url with [server] judge0_callbacks = false: 422 as Judge0" 422 '
j == {"callback_url": ["setting callback is not allowed"]}'
sub '{"language_id":46,"source_code":"echo gone"}'
tok_del=$(token)
req DELETE "/submissions/$tok_del?fields=stdout,status_id"
jc "DELETE of one finished ([server] judge0_delete): what it was, in base64" 200 '
j == {"stdout": "Z29uZQo=\n", "status_id": 3}'
req GET "/submissions/$tok_del"
jc "... then it is gone: 404" 404 'list(j) == ["error"]'
srv_stop TERM
# Judge every answer kept, in order, as the next TAP lines.
"$PY" - "$tmp/j" "$n_j" "$tap_n" <<'EOF'
import base64, json, sys
d, n, first = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
failed = 0
for i in range(1, n + 1):
    got, want, desc, expr = open("%s/%d.check" % (d, i)).read().split("\n", 3)
    body = open("%s/%d.body" % (d, i), "rb").read()
    try:
        j = json.loads(body)
    except ValueError:
        j = None
    try:
        good = got == want and bool(eval("(" + expr.strip() + ")"))
    except Exception as e:
        good = False
        print("# %s: %s" % (type(e).__name__, e))
    print("%s %d - %s" % ("ok" if good else "not ok", first + i, desc))
    if not good:
        failed = 1
        print("# status %s (expected %s), body: %s" % (got, want, body[:400]))
sys.exit(failed)
EOF
[ $? = 0 ] || tap_failed=1
tap_n=$((tap_n + n_j))

check "SIGTERM: the server exits 0 past its grace time" test "$srv_rc" = 0
check "... its background run cancelled (the sleep is gone)" gone_within 5 sleeping "$secs"

kill "$cb_pid" 2>/dev/null
wait "$cb_pid" 2>/dev/null
check "switched off ([server] compat_judge0 = false): 404" eval 'srv_start -o server.compat_judge0=false && req GET /languages && err_is 404 not_found'
done_testing
