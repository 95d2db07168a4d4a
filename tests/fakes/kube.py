#!/usr/bin/env python3
"""tests/fakes/kube.py - a local fake of the Kubernetes API server, with faults.

Serves on 127.0.0.1 (HTTPS with its own CA, or plain HTTP) what clients of
pods need from a cluster (see ../shared/reference/wire-apis.md section 6
and kubefake/*.py): the core, apps, networking, policy, rbac, node,
authorization and apiextensions resources, and with --agent-sandbox the
kubernetes-sigs/agent-sandbox CRDs and a controller for them.  Pods run
for real as local processes in namespaces (kubefake/runtime.py), with
exec over a WebSocket in the v5 and v4 channel protocols.

Its fidelity is checked with clients nobody here wrote: kubectl, Debian's
python3-kubernetes and npm's @kubernetes/client-node (tests/kube/).  It is
a protocol fake, not a security boundary.

The port is printed on stdout as "READY port=N" (and written to
--port-file).  Python 3 standard library only (python3-yaml for YAML
request bodies).
"""
import argparse
import json
import os
import signal
import ssl
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from kubefake import execsession, runtime  # noqa: E402
from kubefake.cluster import Cluster  # noqa: E402
from kubefake.server import Server, Handler  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description="A local fake of the Kubernetes API server.")
    ap.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free one)")
    ap.add_argument("--port-file", help="also write the port here")
    ap.add_argument("--state-dir", help="where pods' files go (default: a temporary directory)")
    ap.add_argument("--tls-cert", help="serve HTTPS with this certificate (PEM)")
    ap.add_argument("--tls-key", help="its private key (PEM)")
    ap.add_argument("--client-ca", help="accept client certificates signed by this CA")
    ap.add_argument("--token-file", help="static bearer tokens, CSV: token,user,uid,\"groups\"")
    ap.add_argument("--anonymous", action="store_true",
                    help="treat requests without credentials as system:anonymous (else 401)")
    ap.add_argument("--namespace", action="append", help="another namespace to make at start")
    ap.add_argument("--schedule-delay", type=float, default=0.05,
                    help="seconds before a new pod is bound to the node")
    ap.add_argument("--pull-delay", type=float, default=0.0, help="seconds an image pull takes")
    ap.add_argument("--missing-images", default=r"does-not-exist|missing",
                    help="regular expression of images that cannot be pulled")
    ap.add_argument("--node-cpu", default="64", help="the node's allocatable CPU")
    ap.add_argument("--node-memory", default="256Gi", help="the node's allocatable memory")
    ap.add_argument("--node-pods", type=int, default=500, help="the node's pod capacity")
    ap.add_argument("--runtime-classes", default="gvisor,kata-qemu",
                    help="RuntimeClasses to make, comma-separated")
    ap.add_argument("--watch-window", type=int, default=5000,
                    help="events kept for watches (older resource versions get 410 Gone)")
    ap.add_argument("--watch-timeout", type=int, default=1800,
                    help="longest a watch lasts when the client gives no timeoutSeconds")
    ap.add_argument("--bookmark-interval", type=float, default=5.0,
                    help="seconds between BOOKMARK events (allowWatchBookmarks=true)")
    ap.add_argument("--exec-protocols", default=",".join(execsession.PROTOCOLS),
                    help="the exec WebSocket subprotocols served, comma-separated (without "
                         "v5.channel.k8s.io: an API server before 1.30)")
    ap.add_argument("--agent-sandbox", action="store_true",
                    help="serve the agent-sandbox CRDs and run their controller")
    ap.add_argument("--faults", help="initial faults, a JSON object (see kubefake/faults.py)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the fault RNG")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    if bool(args.tls_cert) != bool(args.tls_key):
        ap.error("--tls-cert and --tls-key go together")
    args.exec_protocols = tuple(p for p in args.exec_protocols.split(",") if p)
    unknown = [p for p in args.exec_protocols if p not in execsession.PROTOCOLS]
    if unknown or not args.exec_protocols:
        ap.error("--exec-protocols: %s: not among %s"
                 % (",".join(unknown) or "none", ",".join(execsession.PROTOCOLS)))
    if not args.state_dir:
        args.state_dir = tempfile.mkdtemp(prefix="kube-fake-")
    os.makedirs(args.state_dir, exist_ok=True)
    ok, why = runtime.probe()
    if not ok:
        print("kube-fake: cannot run containers here: %s" % why, file=sys.stderr)
        sys.exit(77)

    tls = None
    if args.tls_cert:
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(args.tls_cert, args.tls_key)
        tls.set_alpn_protocols(["http/1.1"])
        if args.client_ca:
            tls.load_verify_locations(args.client_ca)
            tls.verify_mode = ssl.CERT_OPTIONAL

    ctx = Cluster(args)
    if args.faults:
        ctx.faults.set(json.loads(args.faults))
    srv = Server(("127.0.0.1", args.port), Handler, ctx, tls)
    port = srv.server_address[1]
    ctx.address = "127.0.0.1:%d" % port

    def stop(*_):
        ctx.shutdown()
        os._exit(0)
    # A container's processes start with every signal at its default (the
    # runtime's doing), whatever the test runner ignored (make run under
    # nohup ignores SIGHUP, a background job SIGINT): so do the pods' and
    # execs' processes started from here, which inherit what is ignored.
    for sig in (signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM,
                signal.SIGWINCH):
        if signal.getsignal(sig) == signal.SIG_IGN:
            signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write("%d\n" % port)
        os.rename(args.port_file + ".tmp", args.port_file)
    print("READY port=%d tls=%s" % (port, "yes" if tls else "no"), flush=True)
    try:
        srv.serve_forever(poll_interval=0.2)
    finally:
        stop()


if __name__ == "__main__":
    main()
