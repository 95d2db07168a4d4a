"""tests/server/callback-receiver.py DIR [PORT] - the receiver of
Judge0's callbacks in the tests (judge0.sh, judge0-callbacks.sh).

Listens on 127.0.0.1:PORT (0 or none: a free port), writes its port to
DIR/port, and keeps each PUT it answers (204) as DIR/PATH-with-_
({method, path, tries, type, body}).  The first try of a path under
/flaky/ gets no answer (the connection is closed); the first try of a
path under /hold/ is read, marked DIR/held_PATH-with-_, then never
answered: the connection is held until the client closes it (marked
DIR/closed_PATH-with-_).  Each file is written whole (a rename).  It
exits by itself after 10 minutes, never outliving a test that died.
"""
import http.server
import json
import os
import sys
import threading

out, seen = sys.argv[1], {}


def put(name, text):
    with open(os.path.join(out, name + ".tmp"), "w") as f:
        f.write(text)
    os.rename(os.path.join(out, name + ".tmp"), os.path.join(out, name))


class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_PUT(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        seen[self.path] = seen.get(self.path, 0) + 1
        name = self.path.strip("/").replace("/", "_")
        if seen[self.path] == 1 and self.path.startswith("/flaky/"):
            self.close_connection = True
            return
        if seen[self.path] == 1 and self.path.startswith("/hold/"):
            put("held_" + name, "")
            while self.connection.recv(4096):
                pass
            put("closed_" + name, "")
            self.close_connection = True
            return
        put(name, json.dumps({
            "method": self.command, "path": self.path, "tries": seen[self.path],
            "type": self.headers.get("Content-Type"), "body": body.decode()}))
        self.send_response(204)
        self.end_headers()


http.server.ThreadingHTTPServer.daemon_threads = True
s = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2]) if len(sys.argv) > 2 else 0), H)
threading.Timer(600, os._exit, (0,)).start()
put("port", str(s.server_port))
s.serve_forever()
