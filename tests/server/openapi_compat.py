# tests/server/openapi_compat.py - the compatibility routes' answers
# against the OpenAPI document: run by openapi.py (exec'd there, with its
# check() and request()), one check per documented answer of each route.

# ---- Piston --------------------------------------------------------------------------------

check("GET", "/api/v2/runtimes", 200, want=lambda j: any(r["language"] == "python" for r in j))
check("POST", "/api/v2/execute", 200,
      {"language": "python", "version": "*", "files": [{"content": "print(1)"}]},
      want=lambda j: j["run"]["stdout"] == "1\n")
check("POST", "/api/v2/execute", 200,
      {"language": "c", "version": "*", "files": [{"content": "int main(void) { return }"}]},
      want=lambda j: j["compile"]["status"] == "RE")
check("POST", "/api/v2/execute", 400, {"language": "cobol", "version": "*", "files": []})
check("POST", "/api/v2/execute", 415, "language=python",
      {"Content-Type": "application/x-www-form-urlencoded"})

# ---- SandboxFusion ---------------------------------------------------------------------------

check("GET", "/v1/ping", 200, want=lambda j: j == "pong")
check("POST", "/run_code", 200, {"language": "python", "code": "print(1)"},
      want=lambda j: j["status"] == "Success" and j["run_result"]["stdout"] == "1\n")
check("POST", "/run_code", 200, {"language": "c", "code": "int main(void) { return 2; }"},
      want=lambda j: j["status"] == "Failed" and j["compile_result"]["return_code"] == 0)
check("POST", "/run_code", 200, {"language": "bash", "code": "x", "files": {"a": "eA==", "a/b": "eA=="}},
      want=lambda j: j["status"] == "SandboxError")
check("POST", "/run_code", 422, {"language": "cobol", "code": "x"})
check("POST", "/run_code", 422, '{"code": ')

# ---- the first sketch ---------------------------------------------------------------------

check("POST", "/run_single", 200, {"backend": "local", "argv": ["true"]},
      want=lambda j: j["status"] == "ok")
check("POST", "/run_single", 422, {"backend": "nosuch", "argv": ["true"]})
check("POST", "/run_batch", 200, {"runs": [{"argv": ["true"]}, {"shell": "exit 1"}]},
      want=lambda j: len(j["runs"]) == 2)
check("POST", "/run_batch", 400, {"runs": "x"})
check("POST", "/run_agent", 200, {"steps": [{"write": {"path": "f", "content": "x"}},
                                            {"exec": {"shell": "cat f"}}, {"read": {"path": "g"}}]},
      want=lambda j: j["steps"][1]["result"]["stdout"] == "x" and "error" in j["steps"][2])
check("POST", "/run_agent", 400, {"steps": []})

# ---- Judge0 ------------------------------------------------------------------------------

check("GET", "/languages", 200, want=lambda j: {"id": 71, "name": "Python (3)"} in j)
check("GET", "/statuses", 200, want=lambda j: j[2] == {"id": 3, "description": "Accepted"})
sub = check("POST", "/submissions?wait=true", 201, {"language_id": 71, "source_code": "print(1)"},
            want=lambda j: j["status"]["id"] == 3 and j["stdout"] == "1\n")
check("POST", "/submissions?wait=true", 201,
      {"language_id": 46, "source_code": "printf '\\377'"},
      want=lambda j: set(j) == {"token", "error"})
check("POST", "/submissions", 201, {"language_id": 71, "source_code": "print(1)"},
      want=lambda j: set(j) == {"token"})
check("POST", "/submissions?wait=maybe", 400, {"language_id": 71, "source_code": "print(1)"})
check("POST", "/submissions?wait=true", 422, {"language_id": 9999, "source_code": "x"})
check("POST", "/submissions?wait=true", 422, {"language_id": 71, "source_code": "x",
                                              "cpu_time_limit": 1e9 / 1e3})
check("GET", "/submissions/" + (sub["token"] if sub else "none") + "?fields=*", 200,
      want=lambda j: j["language_id"] == 71)
check("GET", "/submissions/" + (sub["token"] if sub else "none") + "?fields=nosuch", 400)
check("GET", "/submissions/00000000-0000-4000-8000-000000000000", 404)
bat = check("POST", "/submissions/batch", 201,
            {"submissions": [{"language_id": 71, "source_code": "print(1)"}, {"language_id": 71},
                             {"language_id": 71, "source_code": "x", "stack_limit": 1}]},
            want=lambda j: set(j[0]) == {"token"} and list(j[1]) == ["source_code"])
check("POST", "/submissions/batch", 400, {"submissions": []})
check("POST", "/submissions/batch?base64_encoded=maybe", 400, {"submissions": [{}]})
check("GET", "/submissions/batch?tokens=" + (bat[0]["token"] if bat else "none") + ",none&fields=*",
      200, want=lambda j: len(j["submissions"]) == 2 and j["submissions"][1] is None)
check("GET", "/submissions/batch", 400)
check("GET", "/languages/71", 200, want=lambda j: j["name"] == "Python (3)")
check("GET", "/languages/9999", 404)

# ---- WebSocket routes (a 101 is for websocket.sh; here what is refused) ----------------------

check("GET", "/api/v2/connect", 400)
check("GET", "/api/v2/connect", 426, headers={"Upgrade": "websocket", "Connection": "Upgrade",
                                              "Sec-WebSocket-Key": "AAAAAAAAAAAAAAAAAAAAAA==",
                                              "Sec-WebSocket-Version": "8"})
check("GET", "/v1/sandboxes/lcl-0000000000000000/exec/ws", 404)

# ---- SandboxFusion's datasets -----------------------------------------------------------------

HE = {"task_id": "HumanEval/0", "prompt": "def add(a, b):\n", "test": "def check(c):\n    assert c(1, 2) == 3\n",
      "entry_point": "add"}
check("GET", "/list_datasets", 200)
check("POST", "/list_ids", 200, {"dataset": "humaneval_python", "config": {"provided_data": HE}})
check("POST", "/get_prompts", 200, {"dataset": "humaneval_python", "config": {"provided_data": [HE]}})
check("POST", "/get_prompt_by_id", 200, {"dataset": "humaneval_python", "id": "HumanEval/0",
                                         "config": {"provided_data": [HE]}})
check("POST", "/submit", 200, {"dataset": "humaneval_python", "id": "HumanEval/0",
                               "completion": "    return a + b\n", "config": {"provided_data": HE}},
      want=lambda j: j["accepted"] is True)
check("POST", "/submit", 422, {"dataset": "mbpp", "id": 1, "completion": "x", "config": {}})
check("POST", "/get_metrics", 200, {"results": [{"id": 1, "accepted": True}]})
check("POST", "/get_metrics_function", 200, {"dataset": "mbpp", "config": {}},
      want=lambda j: j == {"function": None})
check("POST", "/get_metrics_function", 422, {"dataset": "mbpp"})
