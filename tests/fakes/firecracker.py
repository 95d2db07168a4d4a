#!/usr/bin/env python3
"""tests/fakes/firecracker.py - a fake of the firecracker program and its API.

Started as firecracker is, `firecracker.py --api-sock PATH` (no firecracker
binary exists on these machines, nor in Debian), it serves Firecracker's
REST API as HTTP/1.1 on that unix socket, with the requests the microvm
provider's Firecracker backend makes (plugins/microvm/mv-fc.c), checked
as Firecracker's public API definition (swagger, firecracker.yaml)
describes them: required fields, types, unknown fields refused, pre-boot
resources refused after InstanceStart, a snapshot only of a paused VM,
a snapshot loaded only into a VMM nothing was configured in.  Success is
204 with no body; bad input is 400 with {"fault_message": "..."} (the
messages are this fake's own words).  GET / and GET /machine-config
answer 200 with JSON.

No VM boots.  At InstanceStart (or a /snapshot/load that resumes) the
"guest" is this process: it listens on the vsock device's uds_path (in
its working directory when relative, as Firecracker does), takes
Firecracker's host-initiated handshake ("CONNECT <port>\\n", answered
"OK <n>\\n", or the connection closed when no guest listener has that
port) and speaks the guest agent's protocol (plugins/microvm/mv-proto.h)
on the port the kernel command line names (sbx.vsock=PORT): HELLO at the
first connection after a boot, HELLO in answer to SEED, FILE/GET in a
work directory of its own (under $TMPDIR), EXEC run as a host process in
it (whole: it asks for no streamed stdin, and a KILL, SIGNAL or STDIN
reaches it only between commands).  It is a
protocol fake for tests, not a sandbox.

Fidelity: no Firecracker API client from npm could drive this fake
(2026-11: npm's search did not answer from here, and the list of npm
packages kept on this workplace names none; Firecracker's own Go SDK is
not an npm package).  So tests/microvm/firecracker.sh checks it through
the provider and through curl, a client nobody here wrote, and its
validation follows the published API definition.

FAKE_FC_LOG, when set, names a file that gets one JSON line per API
request ({"pid", "method", "path", "body", "status"}) and per agent frame
({"pid", "agent": TYPE, ...}).  FAKE_FC_FAULT="METHOD PATH=message"
makes that request fail with 400 and that fault_message.
Python 3 standard library only.
"""
import http.server
import json
import os
import socket
import socketserver
import struct
import subprocess
import sys
import tempfile
import threading

LOG = os.environ.get("FAKE_FC_LOG")
LOCK = threading.Lock()
PROTO = 4
T = {"HELLO": 1, "FILE": 2, "EXEC": 3, "KILL": 4, "STDOUT": 5, "STDERR": 6, "EXIT": 7,
     "ERROR": 8, "GET": 9, "FILEDATA": 10, "DONE": 11, "SEED": 12, "WANT": 13, "STDIN": 14,
     "SIGNAL": 15}
NAMES = {v: k for k, v in T.items()}
MAX_PAYLOAD = 4 << 20
SNAP_MAGIC = "polysandbox-fake-firecracker-snapshot/1"


def log(entry):
    if not LOG:
        return
    entry = dict(entry, pid=os.getpid())
    with LOCK, open(LOG, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry, sort_keys=True) + "\n")


class Fault(Exception):
    """A 400 answer: Firecracker's fault_message."""


class Vm:
    """What one firecracker process holds: pre-boot resources and state."""

    def __init__(self, vm_id):
        self.id = vm_id
        self.state = "Not started"
        self.machine = None
        self.boot = None
        self.drives = {}
        self.vsock = None
        self.configured = False
        self.listener = None
        self.restored = False


def need(body, fields, optional, what):
    """Checks @body is an object with @fields (name: type) and no others."""
    if not isinstance(body, dict):
        raise Fault("%s: the body is not a JSON object" % what)
    for k in body:
        if k not in fields and k not in optional:
            raise Fault("%s: unknown field `%s`" % (what, k))
    for k, typ in fields.items():
        if k not in body:
            raise Fault("%s: missing field `%s`" % (what, k))
    for k, typ in list(fields.items()) + list(optional.items()):
        if k in body and not (isinstance(body[k], typ) and
                              not (typ is int and isinstance(body[k], bool))):
            raise Fault("%s: field `%s` has the wrong type" % (what, k))


def readable(path, what):
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        raise Fault("%s: cannot open %s: %s" % (what, path, e.strerror))


class Api:
    def __init__(self, vm):
        self.vm = vm

    def preboot(self, what):
        if self.vm.state != "Not started":
            raise Fault("%s: not supported after the microVM started" % what)
        self.vm.configured = True

    def put_machine_config(self, b):
        self.preboot("machine-config")
        need(b, {"vcpu_count": int, "mem_size_mib": int},
             {"smt": bool, "track_dirty_pages": bool, "huge_pages": str, "cpu_template": str},
             "machine-config")
        if not 1 <= b["vcpu_count"] <= 32:
            raise Fault("machine-config: vcpu_count must be from 1 to 32")
        if b["mem_size_mib"] < 1:
            raise Fault("machine-config: mem_size_mib must be positive")
        self.vm.machine = b

    def put_boot_source(self, b):
        self.preboot("boot-source")
        need(b, {"kernel_image_path": str}, {"initrd_path": str, "boot_args": str},
             "boot-source")
        readable(b["kernel_image_path"], "boot-source kernel")
        if "initrd_path" in b:
            readable(b["initrd_path"], "boot-source initrd")
        self.vm.boot = b

    def put_drive(self, drive_id, b):
        self.preboot("drives")
        need(b, {"drive_id": str, "is_root_device": bool},
             {"path_on_host": str, "is_read_only": bool, "partuuid": str, "cache_type": str,
              "rate_limiter": dict, "io_engine": str, "socket": str}, "drives")
        if b["drive_id"] != drive_id:
            raise Fault("drives: the path's drive id %s is not the body's %s" %
                        (drive_id, b["drive_id"]))
        if "path_on_host" not in b and "socket" not in b:
            raise Fault("drives: missing field `path_on_host`")
        if "path_on_host" in b:
            readable(b["path_on_host"], "drives")
        if b["is_root_device"] and any(d["is_root_device"] for k, d in self.vm.drives.items()
                                       if k != drive_id):
            raise Fault("drives: a root device is configured already")
        self.vm.drives[drive_id] = b

    def put_vsock(self, b):
        self.preboot("vsock")
        need(b, {"guest_cid": int, "uds_path": str}, {"vsock_id": str}, "vsock")
        if b["guest_cid"] < 3:
            raise Fault("vsock: guest_cid must be 3 or more")
        self.vm.vsock = b

    def put_actions(self, b):
        need(b, {"action_type": str}, {}, "actions")
        act = b["action_type"]
        if act == "FlushMetrics":
            return
        if act == "SendCtrlAltDel":
            if self.vm.state == "Not started":
                raise Fault("actions: SendCtrlAltDel before the microVM started")
            return
        if act != "InstanceStart":
            raise Fault("actions: unknown action_type %s" % act)
        if self.vm.state != "Not started":
            raise Fault("actions: InstanceStart: the microVM is started already")
        if not self.vm.boot:
            raise Fault("actions: InstanceStart: no boot-source (kernel) configured")
        self.vm.state = "Running"
        self.vm.configured = True
        start_guest(self.vm)

    def patch_vm(self, b):
        need(b, {"state": str}, {}, "vm")
        if b["state"] not in ("Paused", "Resumed"):
            raise Fault("vm: state must be Paused or Resumed")
        if self.vm.state == "Not started":
            raise Fault("vm: the microVM is not started")
        self.vm.state = "Paused" if b["state"] == "Paused" else "Running"

    def put_snapshot_create(self, b):
        need(b, {"snapshot_path": str, "mem_file_path": str}, {"snapshot_type": str, "version": str},
             "snapshot/create")
        if b.get("snapshot_type", "Full") not in ("Full", "Diff"):
            raise Fault("snapshot/create: snapshot_type must be Full or Diff")
        if b.get("snapshot_type") == "Diff" and not (self.vm.machine or {}).get("track_dirty_pages"):
            raise Fault("snapshot/create: a Diff snapshot needs track_dirty_pages")
        if self.vm.state != "Paused":
            raise Fault("snapshot/create: the microVM must be paused")
        state = {"magic": SNAP_MAGIC, "machine": self.vm.machine, "boot": self.vm.boot,
                 "drives": self.vm.drives, "vsock": self.vm.vsock}
        mem = (self.vm.machine or {"mem_size_mib": 128})["mem_size_mib"] << 20
        try:
            with open(b["snapshot_path"], "w", encoding="utf-8") as f:
                json.dump(state, f)
            with open(b["mem_file_path"], "wb") as f:
                f.truncate(mem)  # sparse: a fake's memory costs nothing
        except OSError as e:
            raise Fault("snapshot/create: %s" % e)

    def put_snapshot_load(self, b):
        need(b, {"snapshot_path": str}, {"mem_file_path": str, "mem_backend": dict,
                                         "enable_diff_snapshots": bool,
                                         "track_dirty_pages": bool, "resume_vm": bool},
             "snapshot/load")
        if ("mem_file_path" in b) == ("mem_backend" in b):
            raise Fault("snapshot/load: exactly one of mem_file_path and mem_backend")
        if "mem_backend" in b:
            need(b["mem_backend"], {"backend_type": str, "backend_path": str}, {},
                 "snapshot/load mem_backend")
            if b["mem_backend"]["backend_type"] not in ("File", "Uffd"):
                raise Fault("snapshot/load: backend_type must be File or Uffd")
            mem_path = b["mem_backend"]["backend_path"]
        else:
            mem_path = b["mem_file_path"]
        if self.vm.configured or self.vm.state != "Not started":
            raise Fault("snapshot/load: not allowed after configuring or starting the microVM")
        try:
            with open(b["snapshot_path"], encoding="utf-8") as f:
                state = json.load(f)
            mem_size = os.stat(mem_path).st_size
        except (OSError, ValueError) as e:
            raise Fault("snapshot/load: %s" % e)
        if not isinstance(state, dict) or state.get("magic") != SNAP_MAGIC:
            raise Fault("snapshot/load: %s is not a snapshot" % b["snapshot_path"])
        if mem_size != ((state.get("machine") or {"mem_size_mib": 128})["mem_size_mib"] << 20):
            raise Fault("snapshot/load: the memory file's size is not the snapshot's")
        self.vm.machine, self.vm.boot = state["machine"], state["boot"]
        self.vm.drives, self.vm.vsock = state["drives"], state["vsock"]
        self.vm.configured = True
        self.vm.restored = True
        self.vm.state = "Running" if b.get("resume_vm") else "Paused"
        start_guest(self.vm)

    def get_root(self):
        return {"id": self.vm.id, "state": self.vm.state, "vmm_version": "0.0.0-fake",
                "app_name": "Firecracker"}

    def get_machine_config(self):
        return self.vm.machine or {"vcpu_count": 1, "mem_size_mib": 128, "smt": False}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    api = None

    def log_message(self, fmt, *args):  # the log is FAKE_FC_LOG's
        pass

    def answer(self, status, obj=None):
        data = b"" if obj is None else json.dumps(obj).encode()
        self.send_response(status)
        if data:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if data:
            self.wfile.write(data)

    def route(self, method):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        path = self.path
        body = None
        status, obj = 204, None
        try:
            if raw:
                try:
                    body = json.loads(raw)
                except ValueError as e:
                    raise Fault("the body is not JSON: %s" % e)
            fault = os.environ.get("FAKE_FC_FAULT", "")
            if fault and fault.split("=", 1)[0] == "%s %s" % (method, path):
                raise Fault(fault.split("=", 1)[1] if "=" in fault else "injected fault")
            a = self.api
            if method == "GET" and path == "/":
                status, obj = 200, a.get_root()
            elif method == "GET" and path == "/machine-config":
                status, obj = 200, a.get_machine_config()
            elif method == "PUT" and path == "/machine-config":
                a.put_machine_config(body)
            elif method == "PUT" and path == "/boot-source":
                a.put_boot_source(body)
            elif method == "PUT" and path.startswith("/drives/") and len(path) > 8:
                a.put_drive(path[8:], body)
            elif method == "PUT" and path == "/vsock":
                a.put_vsock(body)
            elif method == "PUT" and path == "/actions":
                a.put_actions(body)
            elif method == "PATCH" and path == "/vm":
                a.patch_vm(body)
            elif method == "PUT" and path == "/snapshot/create":
                a.put_snapshot_create(body)
            elif method == "PUT" and path == "/snapshot/load":
                a.put_snapshot_load(body)
            else:
                raise Fault("invalid request method and/or path: %s %s" % (method, path))
        except Fault as e:
            status, obj = 400, {"fault_message": str(e)}
        log({"method": method, "path": path, "body": body, "status": status})
        self.answer(status, obj)

    def do_GET(self):
        self.route("GET")

    def do_PUT(self):
        self.route("PUT")

    def do_PATCH(self):
        self.route("PATCH")

    def do_POST(self):  # Firecracker answers any other method with 400
        self.route("POST")

    def do_DELETE(self):
        self.route("DELETE")


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self):
        req, _ = self.socket.accept()
        return req, ("unix", 0)


# The guest: the agent's protocol on the vsock device's unix socket.

def frame(kind, payload=b""):
    return struct.pack("<cBBBI", b"S", PROTO, T[kind], 0, len(payload)) + payload


def read_exact(reader, n):
    buf = reader.read(n)
    if len(buf) != n:
        raise EOFError
    return buf


def hello():
    return frame("HELLO", struct.pack("<II", PROTO, 0))


def agent_port(vm):
    for word in ((vm.boot or {}).get("boot_args") or "").split():
        if word.startswith("sbx.vsock="):
            return int(word[10:])
    return None


def run_exec(pl, work):
    timeout_ms = struct.unpack_from("<Q", pl, 0)[0]
    argc, envc, _flags = struct.unpack_from("<III", pl, 48)
    parts = pl[60:].split(b"\0", 1 + argc + envc)
    cwd, argv = parts[0], parts[1:1 + argc]
    env = dict(e.decode().split("=", 1) for e in parts[1 + argc:1 + argc + envc])
    stdin = parts[1 + argc + envc] if len(parts) > 1 + argc + envc else b""
    log({"agent": "EXEC", "argv": [a.decode() for a in argv], "cwd": cwd.decode()})
    flags, code, sig = 0, 0, 0
    try:
        p = subprocess.run([a.decode() for a in argv], input=stdin, capture_output=True,
                           cwd=os.path.join(work, os.path.relpath(cwd.decode() or "/work",
                                                                  "/work")), env=env,
                           timeout=timeout_ms / 1000 if timeout_ms else None, check=False)
        out, err = p.stdout, p.stderr
        if p.returncode < 0:
            sig = -p.returncode
        else:
            code = p.returncode
    except subprocess.TimeoutExpired as e:
        out, err, sig, flags = e.stdout or b"", e.stderr or b"", 9, 1
    except OSError as e:
        out, err, code, flags = b"", (str(e) + "\n").encode(), 127, 32
    frames = [frame("STDOUT", out[i:i + 65536]) for i in range(0, len(out), 65536)]
    frames += [frame("STDERR", err[i:i + 65536]) for i in range(0, len(err), 65536)]
    # FAKE_FC_AGENT: how a hostile agent breaks the protocol in an EXEC's
    # answer (for the host's checks): "want" asks for stdin that is not
    # streamed, "unknown" sends a frame of no known type.
    bad = os.environ.get("FAKE_FC_AGENT", "")
    if bad == "want":
        frames.insert(0, frame("WANT"))
    elif bad == "unknown":
        frames.insert(0, struct.pack("<cBBBI", b"S", PROTO, 99, 0, 0))
    frames.append(frame("EXIT", struct.pack("<iiIqq", code, sig, flags, -1, -1)))
    return b"".join(frames)


def file_path(work, raw):
    path = raw.decode("utf-8", "replace")
    if not path or path.startswith("/") or any(p in ("", ".", "..") for p in path.split("/")):
        return None
    return os.path.join(work, path)


def serve_agent(vm, conn, work, first):
    if first:
        conn.sendall(hello())
    reader = conn.makefile("rb")
    while True:
        head = read_exact(reader, 8)
        magic, ver, kind, _, n = struct.unpack("<cBBBI", head)
        if magic != b"S" or ver != PROTO or n > MAX_PAYLOAD:
            return
        pl = read_exact(reader, n)
        name = NAMES.get(kind, "?")
        if name == "SEED":
            log({"agent": "SEED", "len": n})
            if n != 56:
                return
            conn.sendall(hello())
        elif name == "EXEC":
            conn.sendall(run_exec(pl, work))
        elif name == "FILE":
            path, _, data = pl[4:].partition(b"\0")
            full = file_path(work, path)
            log({"agent": "FILE", "path": path.decode("utf-8", "replace")})
            if not full:
                conn.sendall(frame("ERROR", struct.pack("<I", 2) + b"unsafe path: " + path))
                continue
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as f:
                f.write(data)
            os.chmod(full, struct.unpack_from("<I", pl, 0)[0] & 0o777)
            conn.sendall(frame("DONE"))
        elif name == "GET":
            path = pl[8:].rstrip(b"\0")
            full = file_path(work, path)
            if not full:  # the host's sync GET of ../sync-NONCE comes here
                conn.sendall(frame("ERROR", struct.pack("<I", 2) + b"unsafe path: " + path))
            elif not os.path.isfile(full):
                conn.sendall(frame("ERROR", struct.pack("<I", 1) + b"no such file: " + path))
            else:
                with open(full, "rb") as f:
                    conn.sendall(frame("FILEDATA", f.read()))
        elif name in ("KILL", "SIGNAL", "STDIN"):
            log({"agent": name})
        else:
            return


def start_guest(vm):
    """The guest "boots": its agent listens on the vsock device's socket."""
    if not vm.vsock or vm.listener:
        return
    port = agent_port(vm)
    # Not in the VM's directory, which the provider removes file by file.
    work = tempfile.mkdtemp(prefix="fake-fc-guest.")
    lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lsock.bind(vm.vsock["uds_path"])
    lsock.listen(8)
    vm.listener = lsock
    print("fake firecracker: guest up, agent on vsock port %s" % port, flush=True)

    def accept_loop():
        first = not vm.restored
        n = 0
        while True:
            conn, _ = lsock.accept()
            try:
                line = b""
                while not line.endswith(b"\n") and len(line) < 64:
                    got = conn.recv(1)
                    if not got:
                        break
                    line += got
                words = line.decode("ascii", "replace").split()
                if (len(words) != 2 or words[0] != "CONNECT" or port is None or
                        words[1] != str(port) or vm.state != "Running"):
                    continue  # no guest listener: the connection is closed
                n += 1
                conn.sendall(b"OK %d\n" % (1073741824 + n))
                serve_agent(vm, conn, work, first)
            except (EOFError, OSError, ValueError):
                pass
            finally:
                first = False
                conn.close()

    threading.Thread(target=accept_loop, daemon=True).start()


def main():
    args = sys.argv[1:]
    api_sock, vm_id = None, "anonymous-instance"
    while args:
        a = args.pop(0)
        # (the start-time ones: what the jailer passes)
        if a in ("--api-sock", "--id", "--level", "--log-path", "--start-time-us",
                 "--start-time-cpu-us", "--parent-cpu-time-us") and args:
            v = args.pop(0)
            if a == "--api-sock":
                api_sock = v
            elif a == "--id":
                vm_id = v
        elif a == "--version":
            print("Firecracker v0.0.0-fake")
            return 0
        else:
            print("Arguments parsing error: unexpected %s" % a, file=sys.stderr)
            return 153
    if not api_sock:
        api_sock = "/run/firecracker.socket"
    if os.path.exists(api_sock):
        print("Failed to open the API socket at %s: address in use" % api_sock,
              file=sys.stderr)
        return 1
    Handler.api = Api(Vm(vm_id))
    srv = Server(api_sock, Handler)
    print("fake firecracker: API on %s" % api_sock, flush=True)
    srv.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
