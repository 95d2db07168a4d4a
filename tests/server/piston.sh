#!/bin/sh
# tests/server/piston.sh - the Piston routes (/api/v2/runtimes, /execute)
# driven by the npm piston-client, unchanged, and by curl for Piston's
# own errors; the route family switched off is not served.
. "$top_srcdir/tests/server/lib.sh"
. "$top_srcdir/tests/server/npm.sh"
npm_clients

plan 27

check "polysandboxd starts" srv_start
pc="$tmp/pc"
mkdir -p "$pc"
node "$top_srcdir/tests/server/piston-client.mjs" "$NODE_MODULES" "$base" "$pc" 2>"$tmp/err"
check "the piston client ran every case" test -s "$pc/files.json"
pj() { json_check_file "$pc/$1.json" "$2"; }

check "runtimes: our templates, SemVer versions asked of the runtimes" pj runtimes \
    'isinstance(j, list) and {"python", "javascript", "c", "bash", "sh"} <= {r["language"] for r in j} and all(len(r["version"].split(".")) == 3 and all(p.isdigit() for p in r["version"].split(".")) for r in j) and [r for r in j if r["language"] == "python"][0]["version"] != "0.0.0"'
check "runtimes: aliases from extensions and Piston's names" pj runtimes \
    '"py" in [r for r in j if r["language"] == "python"][0]["aliases"] and [r for r in j if r["language"] == "javascript"][0]["runtime"] == "node" and "js" in [r for r in j if r["language"] == "javascript"][0]["aliases"]'
check "execute python: stdout, output, code 0, no status" pj hello \
    'j["language"] == "python" and j["run"]["stdout"] == "Hello World!\n" and j["run"]["output"] == "Hello World!\n" and j["run"]["code"] == 0 and j["run"]["signal"] is None and j["run"]["status"] is None and "compile" not in j'
check "execute: a stage has every Piston field (ms, bytes)" pj hello \
    'set(j["run"]) == {"stdout", "stderr", "output", "code", "signal", "status", "message", "memory", "cpu_time", "wall_time"} and 0 < j["run"]["wall_time"] < 10000 and (j["run"]["memory"] is None or j["run"]["memory"] > 1000)'
check "the client's default args reach the program" pj default_args 'j["run"]["stdout"] == "1 2 3\n"'
check "args" pj args 'j["run"]["stdout"] == "x y z\n"'
check "stdin" pj stdin 'j["run"]["stdout"] == "cba\n"'
check "javascript (node) by Piston's name" pj javascript 'j["language"] == "javascript" and j["run"]["stdout"] == "42\n"'
check "bash: exit 4 is status RE with its code and message" pj bash_exit \
    'j["run"]["code"] == 4 and j["run"]["status"] == "RE" and j["run"]["stdout"] == "1\n" and "4" in j["run"]["message"]'
check "output interleaves stdout and stderr in order" pj interleaved \
    'j["run"]["output"] == "a\nb\nc\n" and j["run"]["stdout"] == "a\nc\n" and j["run"]["stderr"] == "b\n"'
check "c: a compile stage (code 0) and the run" pj c_ok \
    'j["compile"]["code"] == 0 and j["compile"]["status"] is None and j["run"]["stdout"] == "4 1\n" and j["run"]["code"] == 0'
check "c: a compile error is the compile stage, and run repeats it" pj c_compile_error \
    'j["compile"]["code"] not in (0, None) and j["compile"]["status"] == "RE" and "error" in j["compile"]["stderr"] and j["run"] == j["compile"]'
# The wall time is at least the 500 ms run_timeout; its upper bound only
# catches a kill that never came (3 s failed once under ASan at load 10).
check "a timeout: status TO, SIGKILL, not before the run_timeout" pj timeout \
    'j["run"]["status"] == "TO" and j["run"]["signal"] == "SIGKILL" and j["run"]["code"] is None and 400 <= j["run"]["wall_time"] < 60000'
check "a signal: status SG and its name" pj signal \
    'j["run"]["status"] == "SG" and j["run"]["signal"] == "SIGSEGV" and j["run"]["code"] is None'
check "an unknown language: Piston's message (the client sends no version)" pj unknown_language \
    'j == {"message": "version is required as a string"}'
check "a limit above the server's maxima: 400 with a message" pj over_limit \
    'set(j) == {"message"} and "max" in j["message"]'
check "files: the first is the program, the others beside it" pj files 'j["run"]["stdout"] == "42\n"'

H='Content-Type: application/json'
post /api/v2/execute '{"language":"cobol","version":"*","files":[{"content":"x"}]}'
check "unknown runtime: 400 {message}" eval 'is 400 && json_check "j == {\"message\": \"cobol-* runtime is unknown\"}"'
post /api/v2/execute '{"language":"python","version":"9.9","files":[{"content":"x"}]}'
check "a version that matches no runtime: 400" eval 'is 400 && json_check "j[\"message\"] == \"python-9.9 runtime is unknown\""'
post /api/v2/execute '{"language":"python","version":"3","files":[{"content":"print(1)","encoding":"base64"}]}'
check "no utf8 file: 400" eval 'is 400 && json_check "j[\"message\"] == \"files must include at least one utf8 encoded file\""'
post /api/v2/execute '{"language":"python","version":"*","files":[{"content":"print(1)"}],"run_timeout":"fast"}'
check "a limit that is not a number: 400" eval 'is 400 && json_check "j[\"message\"] == \"If specified, run_timeout must be a number\""'
post /api/v2/execute '{"language":"c","version":"*","files":[{"content":"int main(){}"}],"compile_memory_limit":1000000,"run_memory_limit":2000000}'
check "a compile limit the server cannot apply apart: 400, not dropped" eval 'is 400 && json_check "\"compile_memory_limit\" in j[\"message\"]"'
req POST /api/v2/execute -H 'Content-Type: application/x-www-form-urlencoded' --data 'language=python'
check "a body that is not JSON: 415" eval 'is 415 && json_check "j == {\"message\": \"requests must be of type application/json\"}"'
post /api/v2/execute '{"language":'
check "malformed JSON: 400 {message}" eval 'is 400 && json_check "set(j) == {\"message\"}"'

srv_stop TERM
check "switched off ([server] compat_piston = false): 404" eval 'srv_start -o server.compat_piston=false && req GET /api/v2/runtimes && err_is 404 not_found'
done_testing
