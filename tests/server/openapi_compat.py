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
