"""kubefake/execsession.py - pods/exec over a WebSocket, as the API server and
kubelet serve it (apimachinery util/httpstream/wsstream, kubelet
cri/streaming/remotecommand).

Subprotocols, the first of the client's list the server knows:
v5.channel.k8s.io (adds the CLOSE message, 255 + channel, to half-close
stdin), v4.channel.k8s.io (exit status as a JSON Status on channel 3),
channel.k8s.io (v1: plain error text on channel 3), and the text variants
base64.channel.k8s.io and v4.base64.channel.k8s.io (an ASCII channel digit
then base64).  Each binary message is one channel byte and its payload:
0 stdin (client to server), 1 stdout, 2 stderr, 3 error/status, 4 resize.

The server first sends an empty message on the lowest writable channel.
When the process has exited and its stdout and stderr are drained, the
status goes on channel 3 and the socket closes with 1000.  The process is
not killed when the client goes away (stdin is closed; output is drained
and dropped): what an exec started lives on in the container, as it does
on a real cluster.
"""
import base64
import json
import os
import threading

from .ws import Closed

PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io", "v4.base64.channel.k8s.io",
             "channel.k8s.io", "base64.channel.k8s.io")
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255


def negotiate(offered, served=PROTOCOLS):
    """The chosen subprotocol (the first offered that is served) or None.
    No offer at all means v1."""
    if not offered:
        return "channel.k8s.io" if "channel.k8s.io" in served else None
    for p in offered:
        if p in served:
            return p
    return None


def status_message(code, argv):
    if code == 0:
        return {"metadata": {}, "status": "Success"}
    return {"metadata": {}, "status": "Failure",
            "message": "command terminated with non-zero exit code: command '%s' exited with %d"
                       % (" ".join(argv), code),
            "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}


def internal_error(msg):
    return {"metadata": {}, "status": "Failure", "message": "Internal error occurred: " + msg,
            "reason": "InternalError", "details": {"causes": [{"message": msg}]}, "code": 500}


class Session:
    def __init__(self, ws, protocol, argv, want, drop_after_first=False, log=None):
        self.ws, self.protocol, self.argv = ws, protocol, argv
        self.want = want                     # {"stdin","stdout","stderr"}: bools
        self.b64 = "base64" in protocol
        self.v4 = protocol.startswith("v4") or protocol.startswith("v5")
        self.v5 = protocol.startswith("v5")
        self.drop_after_first = drop_after_first
        self.log = log or (lambda m: None)
        self.sent_output = False
        self.gone = False                    # the client went away (or we cut it)
        self.lock = threading.Lock()

    def send(self, channel, data):
        if self.gone:
            return
        try:
            if self.b64:
                self.ws.send_text(chr(ord("0") + channel) + base64.b64encode(data).decode())
            else:
                self.ws.send_binary(bytes([channel]) + data)
        except Closed:
            self.gone = True

    def output(self, channel, data):
        self.send(channel, data)
        with self.lock:
            first = not self.sent_output
            self.sent_output = True
        if first and self.drop_after_first and not self.gone:
            self.log("exec: dropping the stream (fault)")
            self.gone = True
            self.ws.drop()

    def run(self, proc):
        """Relays until the process ended; returns its exit code (containerd's)."""
        lowest = STDOUT if self.want["stdout"] else STDERR if self.want["stderr"] else ERROR
        self.send(lowest, b"")
        pumps = []
        for ch, f in ((STDOUT, proc.stdout), (STDERR, proc.stderr)):
            t = threading.Thread(target=self._pump, args=(ch, f), daemon=True)
            t.start()
            pumps.append(t)
        reader = threading.Thread(target=self._read, args=(proc,), daemon=True)
        reader.start()
        rc = proc.wait()
        for t in pumps:
            t.join()
        code = 128 - rc if rc < 0 else rc
        if not self.gone:
            if self.v4:
                self.send(ERROR, json.dumps(status_message(code, self.argv)).encode())
            elif code != 0:
                self.send(ERROR, ("command terminated with non-zero exit code: exit status %d"
                                  % code).encode())
            self.ws.close(1000)
        self._close_stdin(proc)
        return code

    def _pump(self, ch, f):
        fd = f.fileno()
        while True:
            try:
                data = os.read(fd, 32768)
            except OSError:
                break
            if not data:
                break
            if self.want["stdout" if ch == STDOUT else "stderr"]:
                self.output(ch, data)
        f.close()

    def _close_stdin(self, proc):
        if proc.stdin is not None:
            try:
                proc.stdin.close()
            except OSError:
                pass

    def _read(self, proc):
        try:
            while True:
                op, data = self.ws.receive()
                if self.b64:
                    if not data:
                        continue
                    ch = data[0] - ord("0")
                    try:
                        payload = base64.b64decode(data[1:])
                    except ValueError:
                        continue
                else:
                    if not data:
                        continue
                    ch, payload = data[0], data[1:]
                if ch == CLOSE and self.v5:
                    if len(payload) == 1 and payload[0] == STDIN:
                        self._close_stdin(proc)
                    continue
                if ch == STDIN and proc.stdin is not None:
                    try:
                        proc.stdin.write(payload)
                        proc.stdin.flush()
                    except (BrokenPipeError, ValueError, OSError):
                        pass
        except Closed:
            pass
        self.gone = True
        self._close_stdin(proc)
