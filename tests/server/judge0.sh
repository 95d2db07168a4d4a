#!/bin/sh
# tests/server/judge0.sh - the Judge0 routes (/languages, /statuses,
# /submissions) driven by curl: the statuses a submission ends in,
# base64_encoded both ways, Judge0's answer to output that is not UTF-8,
# bad requests naming their field, and the family switched off.
# (No Judge0 client is on npm to drive it with, unlike piston.sh.)
. "$top_srcdir/tests/server/lib.sh"

plan 39

check "polysandboxd starts" srv_start -o server.max_body=64K

# sub JSON [QUERY]: POST /submissions?wait=true&QUERY
sub() { post "/submissions?wait=true${2:+&$2}" "$1"; }
# ok201 EXPR: a 201 whose body satisfies EXPR
ok201() { is 201 && json_check "$1"; }
# invalid FIELD: Judge0's 422 {FIELD: [message]}
invalid() { is 422 && json_check "list(j) == ['$1'] and isinstance(j['$1'][0], str) and j['$1'][0]"; }

req GET /languages
check "languages: Judge0's ids of our templates, by name" eval 'is 200 && json_check "
[ids[71] == \"Python (3)\" and ids[63] == \"JavaScript (Node.js)\" and ids[50] == \"C (GCC)\" and ids[54] == \"C++ (GCC)\" and ids[46] == \"Bash\" and 62 in ids and 75 not in ids and 70 not in ids for ids in [{l[\"id\"]: l[\"name\"] for l in j}]][0]"'
req GET /statuses
check "statuses: 1 to 14 with Judge0's descriptions" eval 'is 200 && json_check "[s[\"id\"] for s in j] == list(range(1, 15)) and j[10][\"description\"] == \"Runtime Error (NZEC)\" and j[12][\"description\"] == \"Internal Error\""'

sub '{"language_id":71,"source_code":"print(6*7)\nprint()","expected_output":"42  \n"}'
check "accepted: expected_output compared as Judge0 does (trailing blanks)" eval 'ok201 "
j[\"status\"] == {\"id\": 3, \"description\": \"Accepted\"} and j[\"stdout\"] == \"42\n\n\" and j[\"stderr\"] is None and j[\"compile_output\"] is None and j[\"message\"] is None"'
check "a submission: Judge0's default attributes, time in s as a string, memory in KB" eval 'json_check "
set(j) == {\"stdout\", \"time\", \"memory\", \"stderr\", \"token\", \"compile_output\", \"message\", \"status\"} and 0 <= float(j[\"time\"]) < 30 and (j[\"memory\"] is None or 100 < j[\"memory\"] < 10**7) and len(j[\"token\"]) == 36"'
tok_ok=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["token"])' "$tmp/out" 2>/dev/null)
sub '{"language_id":71,"source_code":"print(41)","expected_output":"42"}'
check "wrong answer: status 4, its stdout shown" eval 'ok201 "j[\"status\"][\"id\"] == 4 and j[\"stdout\"] == \"41\n\""'
sub '{"language_id":46,"source_code":"sleep 30","wall_time_limit":0.5}'
check "wall_time_limit: Time Limit Exceeded" eval 'ok201 "j[\"status\"] == {\"id\": 5, \"description\": \"Time Limit Exceeded\"}"'
sub '{"language_id":46,"source_code":"while :; do :; done","cpu_time_limit":0.3,"wall_time_limit":30}'
check "cpu_time_limit: Time Limit Exceeded" eval 'ok201 "j[\"status\"][\"id\"] == 5"'
sub '{"language_id":50,"source_code":"int main(void) { return }"}'
check "C: a compile error is status 6 with the compiler's output" eval 'ok201 "
j[\"status\"] == {\"id\": 6, \"description\": \"Compilation Error\"} and \"error\" in j[\"compile_output\"] and j[\"stdout\"] is None and j[\"time\"] is None"'
sub '{"language_id":50,"source_code":"#include <stdio.h>\nint main(void) { int c = getchar(); printf(\"%c!\\n\", c); return 0; }","stdin":"x"}'
check "C: compiled and run, stdin" eval 'ok201 "j[\"status\"][\"id\"] == 3 and j[\"stdout\"] == \"x!\n\""'
sub '{"language_id":46,"source_code":"echo out; echo err >&2; exit 3"}'
check "a non-zero exit: NZEC, its message" eval 'ok201 "
j[\"status\"] == {\"id\": 11, \"description\": \"Runtime Error (NZEC)\"} and j[\"message\"] == \"Exited with error status 3\" and j[\"stdout\"] == \"out\n\" and j[\"stderr\"] == \"err\n\""'
tok_nzec=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["token"])' "$tmp/out" 2>/dev/null)
sub '{"language_id":46,"source_code":"kill -SEGV $$"}' 'fields=status,exit_signal,exit_code'
check "SIGSEGV: status 7, exit_signal 11 (fields=)" eval 'ok201 "j == {\"status\": {\"id\": 7, \"description\": \"Runtime Error (SIGSEGV)\"}, \"exit_signal\": 11, \"exit_code\": None}"'
sub '{"language_id":46,"source_code":"kill -FPE $$"}' 'fields=status'
check "SIGFPE: status 9" eval 'ok201 "j[\"status\"][\"id\"] == 9"'
sub '{"language_id":46,"source_code":"kill -USR1 $$"}' 'fields=status,message'
check "another signal: status 12, its message" eval 'ok201 "j[\"status\"][\"id\"] == 12 and j[\"message\"] == \"Caught fatal signal 10\""'
sub '{"language_id":46,"source_code":"read x; echo \"$x|$1|$2|$#\"","stdin":"in\n","command_line_arguments":"a '"'b c'"'"}'
check "stdin and command_line_arguments (quoted as a shell would)" eval 'ok201 "j[\"stdout\"] == \"in|a|b c|2\n\""'
sub '{"language_id":46,"source_code":"echo o; echo e >&2","redirect_stderr_to_stdout":true}'
check "redirect_stderr_to_stdout" eval 'ok201 "j[\"stdout\"] == \"o\ne\n\" and j[\"stderr\"] is None"'

# base64 both ways: what comes back is Ruby's Base64.encode64 (lines of 60).
src=$(printf 'read x; printf "%%s-%%070d\\n" "$x" 7' | base64 -w0)
sub '{"language_id":46,"source_code":"'"$src"'","stdin":"'"$(printf 'h\303\251' | base64 -w0)"'"}' \
    base64_encoded=true
check "base64_encoded=true: source and stdin decoded, stdout encoded in lines of 60" eval 'ok201 "
[base64.b64decode(j[\"stdout\"]).decode() == \"h\u00e9-\" + \"0\" * 69 + \"7\n\" and lines[-1] == \"\" and all(len(l) == 60 for l in lines[:-2]) and j[\"stderr\"] is None for lines in [j[\"stdout\"].split(\"\n\")]][0]"'
sub '{"language_id":46,"source_code":"printf '"'\\\\377\\\\376'"'"}'
check "output not UTF-8 without base64: 201 {token, error} as Judge0" eval 'ok201 "
set(j) == {\"token\", \"error\"} and j[\"error\"] == \"some attributes for this submission cannot be converted to UTF-8, use base64_encoded=true query parameter\""'
tok_bin=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["token"])' "$tmp/out" 2>/dev/null)
req GET "/submissions/$tok_bin"
check "... its GET without base64: 400 {error}" eval 'is 400 && json_check "list(j) == [\"error\"] and \"base64_encoded=true\" in j[\"error\"]"'
req GET "/submissions/$tok_bin?base64_encoded=true"
check "... and with base64: the bytes" eval 'is 200 && json_check "base64.b64decode(j[\"stdout\"]) == b\"\xff\xfe\" and j[\"status\"][\"id\"] == 3"'
req GET "/submissions/$tok_bin?base64_encoded=true&fields=stdout"
check "... fields=stdout asks for that one only" eval 'is 200 && json_check "list(j) == [\"stdout\"]"'
req GET "/submissions/$tok_ok?fields=*"
check "GET a kept submission, fields=*: what was asked and what came of it" eval 'is 200 && json_check "
j[\"source_code\"] == \"print(6*7)\nprint()\" and j[\"language_id\"] == 71 and j[\"expected_output\"] == \"42  \n\" and j[\"status_id\"] == 3 and j[\"exit_code\"] == 0 and j[\"token\"] == \"$tok_ok\" and j[\"finished_at\"] >= j[\"created_at\"]"'
req GET "/submissions/$tok_nzec?base64_encoded=true&fields=message,stderr"
check "GET with base64: the message is encoded too" eval 'is 200 && json_check "base64.b64decode(j[\"message\"]) == b\"Exited with error status 3\" and j[\"stderr\"] == \"ZXJyCg==\n\""'

# bad requests
req GET /submissions/00000000-0000-4000-8000-000000000000
check "an unknown token: 404 {error}" eval 'is 404 && json_check "list(j) == [\"error\"]"'
req GET "/submissions/$tok_ok?fields=stdout,bogus"
check "fields= naming no attribute: 400 as Judge0" eval 'is 400 && json_check "j == {\"error\": \"invalid fields: [bogus]\"}"'
post /submissions '{"language_id":71,"source_code":"print(1)"}'
check "without wait=true: 400 saying to send it" eval 'is 400 && json_check "\"wait=true\" in j[\"error\"]"'
sub '{"language_id":71,"source_code":"x"}' base64_encoded=yes
check "base64_encoded neither true nor false: 400 naming it" eval 'is 400 && json_check "\"base64_encoded\" in j[\"error\"]"'
sub '{"language_id":71,"source_code":'
check "malformed JSON: 400 {error}" eval 'is 400 && json_check "list(j) == [\"error\"]"'
sub '{"language_id":"python","source_code":"x"}'
check "language_id not an integer: 422 naming it" eval 'invalid language_id'
sub '{"language_id":75,"source_code":"x"}'
check "a language id with no template here: 422 as Judge0" eval 'is 422 && json_check "j == {\"language_id\": [\"language with id 75 doesn'"'"'t exist\"]}"'
sub '{"language_id":71}'
check "no source_code: 422 naming it" eval 'invalid source_code'
sub '{"language_id":71,"source_code":"x","stdin":5}'
check "stdin not a string: 422 naming it" eval 'invalid stdin'
sub '{"language_id":71,"source_code":"x","memory_limit":"lots"}'
check "memory_limit not a number: 422 naming it" eval 'invalid memory_limit'
sub '{"language_id":71,"source_code":"x","stack_limit":64000}'
check "a limit this server cannot apply (stack_limit): 422, not ignored" eval 'invalid stack_limit'
sub '{"language_id":71,"source_code":"x","enable_network":true}'
check "enable_network true: 422" eval 'invalid enable_network'
sub '{"language_id":71,"source_code":"!!!"}' base64_encoded=true
check "source_code that is not base64: 422 naming it" eval 'invalid source_code'
sub '{"language_id":46,"source_code":"x","command_line_arguments":"a \"b"}'
check "command_line_arguments with an open quote: 422" eval 'invalid command_line_arguments'
big=$(head -c 70000 /dev/zero | tr '\0' 'x')
sub '{"language_id":71,"source_code":"'"$big"'"}'
check "a body over [server] max_body: 413" eval 'is 413'

srv_stop TERM
check "switched off ([server] compat_judge0 = false): 404" eval 'srv_start -o server.compat_judge0=false && req GET /languages && err_is 404 not_found'
done_testing
