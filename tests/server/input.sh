#!/bin/sh
# tests/server/input.sh - what a run request may carry and what bad input
# gets: stdin (text and base64), files (both forms, modes), env, cwd,
# args, limits with units, output caps with truncation, timeout,
# fallback; and a clear 4xx naming the field for malformed, truncated,
# invalid UTF-8, nested, duplicated, wrongly typed, huge, negative or
# unknown input -- never a crash or a hang (the server still answers
# afterwards).
. "$top_srcdir/tests/server/lib.sh"

plan 36

check "polysandboxd starts" srv_start

# ---- what a run takes --------------------------------------------------------------
post /v1/run '{"argv":["cat"],"stdin":"from stdin\n"}'
check "stdin" eval 'is 200 && json_check "j[\"stdout\"] == \"from stdin\\n\""'
post /v1/run '{"argv":["od","-An","-tx1"],"stdin_base64":"AP8K"}'
check "stdin_base64 (bytes 00 ff 0a)" eval 'is 200 && json_check "j[\"stdout\"].split() == [\"00\", \"ff\", \"0a\"]"'
post /v1/run '{"shell":"cat a.txt; cat d/b.sh; ls -l d/b.sh | cut -c1-10","files":[{"path":"a.txt","content":"A\n"},{"path":"d/b.sh","content_base64":"Qgo=","mode":"0755"}]}'
check "files as a list: content, content_base64, mode" \
    eval 'is 200 && json_check "j[\"stdout\"] == \"A\\nB\\n-rwxr-xr-x\\n\""'
post /v1/run '{"shell":"cat x","files":{"x":"aGkK"}}'
check "files as {path: base64}" eval 'is 200 && json_check "j[\"stdout\"] == \"hi\\n\""'
post /v1/run '{"shell":"echo $A-$B; pwd","env":{"A":"1","B":"two"},"cwd":"sub","files":{"sub/.keep":""}}'
check "env and cwd" eval 'is 200 && json_check "j[\"stdout\"].startswith(\"1-two\\n\") and j[\"stdout\"].rstrip().endswith(\"/sub\")"'
post /v1/run '{"language":"python","code":"import sys; print(sys.argv[1:])","args":["x","y"]}'
check "code with args" eval 'is 200 && json_check "j[\"stdout\"] == \"[\x27x\x27, \x27y\x27]\\n\""'
post /v1/run '{"shell":"head -c 5000 /dev/zero | tr \"\\\\0\" a","limits":{"stdout":"1K","memory":"256M","pids":"64","wall":"5s","cpu":2}}'
check "limits with units; stdout over a 1K cap: output_limit, truncated at 1024" \
    eval 'is 200 && json_check "j[\"status\"] == \"output_limit\" and j[\"stdout_truncated\"] and len(j[\"stdout\"]) == 1024"'
post /v1/run '{"argv":["sleep","10"],"timeout":0.5}'
check "timeout 0.5 (seconds): status timeout" eval 'is 200 && json_check "j[\"status\"] == \"timeout\""'
post /v1/run '{"argv":["sleep","10"],"timeout":"300ms"}'
check "timeout \"300ms\": status timeout" eval 'is 200 && json_check "j[\"status\"] == \"timeout\""'
post /v1/run '{"argv":["true"],"provider":"local","fallback":["local"]}'
check "provider with a fallback list" eval 'is 200 && json_check "j[\"provider\"] == \"local\""'

# ---- bad input -----------------------------------------------------------------------
post /v1/run '{"argv":["true"],'
check "truncated JSON: 400 naming the place" \
    eval 'err_is 400 bad_request && json_check "\"column\" in j[\"error\"][\"message\"]"'
printf '{"shell":"echo \377\376"}' >"$tmp/bad-utf8"
req POST /v1/run --data-binary @"$tmp/bad-utf8"
check "invalid UTF-8: 400" err_is 400 bad_request
post /v1/run '["argv"]'
check "not an object: 400" err_is 400 bad_request
post /v1/run '{"argv":["true"],"argv":["false"]}'
check "a duplicated key: 400" err_is 400 bad_request
"$PY" -c 'print("[" * 100000 + "]" * 100000)' >"$tmp/deep"
req POST /v1/run --data-binary @"$tmp/deep"
check "100000 nested arrays: 400" err_is 400 bad_request
post /v1/run '{"argv":["true"],"timeout":99999999999999999999999}'
check "an integer too large for JSON: 400" err_is 400 bad_request
post /v1/run '{"argv":["true"],"timeout":1e400}'
check "a number too large: 400" err_is 400 bad_request
post /v1/run '{"argv":["true"],"timeout":9000000000000}'
check "a timeout too large: 400 naming timeout" \
    eval 'err_is 400 invalid && json_check "\"timeout\" in j[\"error\"][\"message\"]"'
post /v1/run '{"argv":["true"],"limits":{"memory":-1}}'
check "a negative limit: 400 naming limits.memory" \
    eval 'err_is 400 invalid && json_check "\"limits.memory\" in j[\"error\"][\"message\"]"'
post /v1/run '{"argv":["true"],"limits":{"colour":"red"}}'
check "an unknown limit: 400 naming it" \
    eval 'err_is 400 invalid && json_check "\"limits.colour\" in j[\"error\"][\"message\"]"'
post /v1/run '{"argv":["true"],"limits":{"memory":"1T"}}'
check "a limit above the maximum: 422 limit" err_is 422 limit
post /v1/run '{"argv":["true"],"colour":"red"}'
check "an unknown field: 400 naming it" \
    eval 'err_is 400 invalid && json_check "\"colour\" in j[\"error\"][\"message\"]"'
post /v1/run '{}'
check "nothing to run: 400" err_is 400 invalid
post /v1/run '{"argv":["true"],"shell":"true"}'
check "argv and shell: 400" err_is 400 invalid
post /v1/run '{"code":"print(1)"}'
check "code without a language: 400 naming language" \
    eval 'err_is 400 invalid && json_check "\"language\" in j[\"error\"][\"message\"]"'
post /v1/run '{"argv":["true",7]}'
check "argv with a number: 400 naming argv[1]" \
    eval 'err_is 400 invalid && json_check "\"argv[1]\" in j[\"error\"][\"message\"]"'
post /v1/run '{"argv":["true"],"stdin_base64":"@@@"}'
check "stdin_base64 not base64: 400" err_is 400 invalid
post /v1/run '{"argv":["true"],"files":{"../x":"aGkK"}}'
check "a file path with ..: 400 path" err_is 400 path
post /v1/run '{"argv":["true"],"files":{"/etc/x":"aGkK"}}'
check "an absolute file path: 400 path" err_is 400 path
post /v1/run '{"argv":["true"],"env":{"A=B":"x"}}'
check "an env key with =: 400" err_is 400 invalid
post /v1/run '{"argv":["true"],"provider":"nosuch","fallback":["local"]}'
check "an unknown provider: 422 naming it" \
    eval 'err_is 422 not_found && json_check "\"nosuch\" in j[\"error\"][\"message\"]"'
post /v1/run '{"argv":["true"],"network":"some"}'
check "a network that is not none, egress or host: 400" err_is 400 invalid

# Found by the fuzz target of the requests (tests/fuzz/corpus/server/
# found-query-not-utf8): a message quoting bytes that are not UTF-8 could
# not be made JSON, and the answer was 500 "out of memory".
req GET '/v1/sandboxes?x%A2y=1'
check "a query key that is not UTF-8: 400 quoting it with U+FFFD, not a 500" \
    eval 'err_is 400 invalid && json_check "\"x\\ufffdy\" in j[\"error\"][\"message\"]"'
req GET '/v1/sandboxes?provider=no%FFsuch'
check "a provider that is not UTF-8: 422 naming it as text" \
    eval 'err_is 422 not_found && json_check "j[\"error\"][\"provider\"] == \"no\\ufffdsuch\""'

req GET /healthz
check "the server still answers" is 200
done_testing
