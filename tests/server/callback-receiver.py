"""tests/server/callback-receiver.py DIR [PORT] - the receiver of
Judge0's callbacks in the tests (judge0.sh, judge0-callbacks*.sh).

Listens on 127.0.0.1:PORT (0 or none: a free port), writes its port to
DIR/port, and keeps each PUT it answers (204) as DIR/PATH-with-_
({method, path, tries, type, body}).  The first try of a path under
/flaky/ gets no answer (the connection is closed); the first try of a
path under /hold/ is read, marked DIR/held_PATH-with-_, then never
answered: the connection is held until the client closes it (marked
DIR/closed_PATH-with-_).

With PORT "down" it is a receiver that is down: its port (DIR/port) is
bound, its queue of connections full, so a connection to it is never
made (a client's tries time out).  A path under /fail/ never gets an answer: its
second try is held as one under /hold/, the others are closed; each try
of it is counted in DIR/seen_PATH-with-_.  Each file is written whole (a rename).  It
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
        if self.path.startswith("/fail/"):
            put("seen_" + name, str(seen[self.path]))
        if self.path.startswith("/fail/") and seen[self.path] != 2:
            self.close_connection = True
            return
        if seen[self.path] == (2 if self.path.startswith("/fail/") else 1) and \
                self.path.startswith(("/hold/", "/fail/")):
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


threading.Timer(600, os._exit, (0,)).start()
if sys.argv[2:] == ["down"]:
    import socket
    d = socket.socket()
    d.bind(("127.0.0.1", 0))
    d.listen(0)
    filler = socket.create_connection(d.getsockname())   # the queue is full
    put("port", str(d.getsockname()[1]))
    threading.Event().wait()
http.server.ThreadingHTTPServer.daemon_threads = True
s = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2]) if len(sys.argv) > 2 else 0), H)
put("port", str(s.server_port))
s.serve_forever()
