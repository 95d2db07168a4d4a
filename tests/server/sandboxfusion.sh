#!/bin/sh
# tests/server/sandboxfusion.sh - the SandboxFusion routes: /run_code with
# its field names, units (seconds, MB) and statuses, one check per row of
# the status mapping (doc/polysandboxd.8, SANDBOXFUSION), files and
# fetch_files in base64, /v1/ping, FastAPI's 422 for bad input, and the
# switch.  SandboxFusion's own client (sandbox-fusion) is on PyPI only,
# which cannot be reached here: the requests and answers follow its
# server's models (RunCodeRequest, RunCodeResponse, CommandRunResult).
. "$top_srcdir/tests/server/lib.sh"

plan 27

# A CPU limit and a stdout cap small enough to reach.
check "polysandboxd starts" srv_start -o limits.cpu=1s -o limits.stdout=64K
rc_post() { post /run_code "$1"; }
fj() { is 200 && json_check "set(j) == {'status', 'message', 'compile_result', 'run_result', 'executor_pod_name', 'files'} and ($1)"; }
phase='set(p) == {"status", "execution_time", "return_code", "stdout", "stderr"}'

rc_post '{"language":"python","code":"print(input()[::-1])","stdin":"abc"}'
check "ok: Success, run_result Finished, return_code 0, stdin" \
    fj "j['status'] == 'Success' and j['compile_result'] is None and (lambda p: $phase)(j['run_result']) and j['run_result']['status'] == 'Finished' and j['run_result']['return_code'] == 0 and j['run_result']['stdout'] == 'cba\n' and j['executor_pod_name'] is None"
check "execution_time is in seconds" fj "0 < j['run_result']['execution_time'] < 5"
rc_post '{"language":"bash","code":"echo out; echo err >&2; exit 3"}'
check "nonzero exit: Failed, Finished, its return_code, both streams" \
    fj "j['status'] == 'Failed' and j['run_result']['status'] == 'Finished' and j['run_result']['return_code'] == 3 and j['run_result']['stdout'] == 'out\n' and j['run_result']['stderr'] == 'err\n'"
rc_post '{"language":"python","code":"import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)"}'
check "a signal: Failed, Finished, return_code -signal" \
    fj "j['status'] == 'Failed' and j['run_result']['status'] == 'Finished' and j['run_result']['return_code'] == -11"
rc_post '{"language":"nodejs","code":"while (true) {}","run_timeout":0.5}'
check "wall timeout (run_timeout in seconds): Failed, TimeLimitExceeded" \
    fj "j['status'] == 'Failed' and j['run_result']['status'] == 'TimeLimitExceeded' and j['run_result']['return_code'] is None and 0.4 < j['run_result']['execution_time'] < 3"
rc_post '{"language":"python","code":"while True: pass","run_timeout":20}'
check "CPU limit: Failed, TimeLimitExceeded" \
    fj "j['status'] == 'Failed' and j['run_result']['status'] == 'TimeLimitExceeded' and j['run_result']['execution_time'] < 10"
rc_post '{"language":"python","code":"x = bytearray(600 << 20)","memory_limit_MB":64}'
check "memory limit (memory_limit_MB): Failed, Finished, return_code 137" \
    fj "j['status'] == 'Failed' and j['run_result']['status'] == 'Finished' and j['run_result']['return_code'] == 137"
rc_post '{"language":"python","code":"print(\"x\" * 1000000)"}'
check "output limit: Failed, Finished" \
    fj "j['status'] == 'Failed' and j['run_result']['status'] == 'Finished' and len(j['run_result']['stdout']) <= 65536"
rc_post '{"language":"c","code":"#include <stdio.h>\nint main(void) { puts(\"compiled\"); return 0; }"}'
check "a compiled language: compile_result Finished 0 and run_result" \
    fj "j['status'] == 'Success' and (lambda p: $phase)(j['compile_result']) and j['compile_result']['status'] == 'Finished' and j['compile_result']['return_code'] == 0 and j['run_result']['stdout'] == 'compiled\n'"
rc_post '{"language":"c","code":"int main(void) { return }"}'
check "compile error: Failed, compile_result Finished rc != 0 with the compiler's stderr, no run_result" \
    fj "j['status'] == 'Failed' and j['compile_result']['status'] == 'Finished' and j['compile_result']['return_code'] not in (0, None) and 'error' in j['compile_result']['stderr'] and j['run_result'] is None"
# A file that includes itself twice at each of 40 levels: 2^40 includes,
# all time and almost no memory (reading /dev/zero hit the memory limit
# first on a slow machine).
rc_post '{"language":"c","code":"#if __INCLUDE_LEVEL__ < 40\n#include __FILE__\n#include __FILE__\n#endif\n#if __INCLUDE_LEVEL__ == 0\nint main(void) { return 0; }\n#endif\n","compile_timeout":0.5}'
check "compile timeout (compile_timeout): compile_result TimeLimitExceeded" \
    fj "j['status'] == 'Failed' and j['compile_result']['status'] == 'TimeLimitExceeded' and j['run_result'] is None"
rc_post '{"language":"bash","code":"exit 127"}'
check "not found (127): Failed, Finished 127" \
    fj "j['status'] == 'Failed' and j['run_result']['status'] == 'Finished' and j['run_result']['return_code'] == 127"
rc_post '{"language":"bash","code":"echo hi","files":{"a":"eA==","a/b":"eA=="}}'
check "a sandbox error: SandboxError, run_result Error, the message says why" \
    fj "j['status'] == 'SandboxError' and j['run_result']['status'] == 'Error' and 'a/b' in j['message']"
rc_post '{"language":"bash","code":"tr a-z A-Z < in/x.txt > out.txt; printf \"\\377\" > bin","files":{"in/x.txt":"aGVsbG8="},"fetch_files":["out.txt","bin","missing"]}'
check "files in and fetch_files out, base64; a missing file is left out" \
    fj "j['status'] == 'Success' and j['files'] == {'out.txt': base64.b64encode(b'HELLO').decode(), 'bin': '/w=='}"

req GET /v1/ping
check "GET /v1/ping: \"pong\"" eval 'is 200 && [ "$(cat "$tmp/out")" = "\"pong\"" ]'

detail() { [ "$code" = 422 ] && json_check "set(j) == {'detail'} and j['detail'][0]['loc'] == $1 and j['detail'][0]['type'] == '$2'"; }
rc_post '{"language":"python"}'
check "missing code: 422 FastAPI detail naming body.code" detail '["body", "code"]' missing
rc_post '{"language":"cobol","code":"x"}'
check "a language without a template: 422 literal_error listing the languages" \
    eval 'detail "[\"body\", \"language\"]" literal_error && json_check "\"nodejs\" in j[\"detail\"][0][\"msg\"] and j[\"detail\"][0][\"input\"] == \"cobol\""'
rc_post '{"language":"python","code":7}'
check "code not a string: 422 string_type" detail '["body", "code"]' string_type
rc_post '{"language":"python","code":"1","run_timeout":"soon"}'
check "run_timeout not a number: 422" detail '["body", "run_timeout"]' float_parsing
rc_post '{"language":"python","code":"1","run_timeout":0}'
check "run_timeout 0 (cannot switch the limit off): 422" detail '["body", "run_timeout"]' greater_than
rc_post '{"language":"python","code":"1","memory_limit_MB":1.5}'
check "memory_limit_MB not an integer: 422" detail '["body", "memory_limit_MB"]' int_type
rc_post '{"language":"python","code":"1","files":{"../x":"eA=="}}'
check "a file path with ..: 422" detail '["body", "files"]' value_error
rc_post '{"language":"python","code":"1","files":{"x":"not base64!"}}'
check "a file that is not base64: 422" detail '["body", "files"]' value_error
rc_post '{"language":"python","code":"1","fetch_files":"out.txt"}'
check "fetch_files not a list: 422" detail '["body", "fetch_files"]' list_type
rc_post '{"language":"python",'
check "malformed JSON: 422 json_invalid" detail '["body"]' json_invalid

srv_stop TERM
check "switched off ([server] compat_sandboxfusion = false): 404" \
    eval 'srv_start -o server.compat_sandboxfusion=false && post /run_code "{}" && err_is 404 not_found'
done_testing
