#!/usr/bin/env python3
"""tests/fakes/jailer.py - a fake of Firecracker's jailer program.

Takes the command line Firecracker's jailer documents (docs/jailer.md):

    jailer --id ID --exec-file FILE --uid UID --gid GID
           [--parent-cgroup PATH] [--cgroup-version 1|2]
           [--cgroup FILE=VALUE]... [--chroot-base-dir DIR] [--netns PATH]
           [--resource-limit RESOURCE=VALUE]... [--daemonize]
           [--new-pid-ns] [-- FIRECRACKER ARGS...]

and refuses what the jailer refuses: a missing required flag, an unknown
one, an id that is not 1 to 64 alphanumerics and hyphens, an exec file
that is not an executable regular file or whose name lacks
"firecracker", a uid or gid that is no number, a cgroup version other
than 1 or 2, a cgroup that is not FILE=VALUE with FILE a controller's
(CONTROLLER.PARAMETER), a relative chroot base.  Each error is a line on
stderr and exit status 1.

Then it does what it can without privileges: makes the chroot
CHROOT_BASE/<exec file's name>/ID/root (CHROOT_BASE: /srv/jailer by
default), enters it as its working directory (no chroot(2), no cgroup
written, no uid or gid switch: a uid or gid other than ours is refused,
as this fake could not drop to it), and execs the exec file with the
arguments the jailer gives firecracker, --id ID and its start-time
flags, then the ones after "--".

FAKE_JAILER_LOG, when set, names a file that gets one JSON line per run:
{"pid", "argv", "chroot", "cgroups"}.  Python 3 standard library only.
"""
import json
import os
import re
import sys
import time

VALUE_FLAGS = {"--id", "--exec-file", "--uid", "--gid", "--parent-cgroup", "--cgroup-version",
               "--cgroup", "--chroot-base-dir", "--netns", "--resource-limit"}
REPEATED = {"--cgroup", "--resource-limit"}
SWITCHES = {"--daemonize", "--new-pid-ns"}
REQUIRED = ("--id", "--exec-file", "--uid", "--gid")


def fail(msg):
    print("Jailer error: %s" % msg, file=sys.stderr)
    sys.exit(1)


def parse(args):
    opts, extra = {"--cgroup": [], "--resource-limit": []}, []
    while args:
        a = args.pop(0)
        if a == "--":
            extra = args
            break
        if a in VALUE_FLAGS:
            if not args:
                fail("Arguments parsing error: %s needs a value" % a)
            v = args.pop(0)
            if a in REPEATED:
                opts[a].append(v)
            elif a in opts:
                fail("Arguments parsing error: %s given twice" % a)
            else:
                opts[a] = v
        elif a in SWITCHES:
            opts[a] = True
        else:
            fail("Arguments parsing error: unexpected %s" % a)
    for r in REQUIRED:
        if r not in opts:
            fail("Arguments parsing error: %s is required" % r)
    return opts, extra


def main():
    opts, extra = parse(sys.argv[1:])
    vm_id, exe = opts["--id"], opts["--exec-file"]
    if not re.fullmatch(r"[A-Za-z0-9-]{1,64}", vm_id):
        fail("Invalid instance ID: %s" % vm_id)
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        fail("Failed to canonicalize path %s: not an executable file" % exe)
    name = os.path.basename(exe)
    if "firecracker" not in name:
        fail("Invalid filename. The filename of `--exec-file` option must contain"
             " \"firecracker\": %s" % name)
    for flag in ("--uid", "--gid"):
        if not re.fullmatch(r"[0-9]+", opts[flag]) or int(opts[flag]) >= 2 ** 32:
            fail("Invalid %s: %s" % (flag[2:], opts[flag]))
    version = opts.get("--cgroup-version", "1")
    if version not in ("1", "2"):
        fail("Invalid cgroup version: %s" % version)
    for c in opts["--cgroup"]:
        if not re.fullmatch(r"[a-z_]+\.[a-z_.]+=.+", c):
            fail("Invalid format for cgroups: %s" % c)
    for r in opts["--resource-limit"]:
        if not re.fullmatch(r"(fsize|no-file)=[0-9]+", r):
            fail("Invalid resource argument: %s" % r)
    base = opts.get("--chroot-base-dir", "/srv/jailer")
    if not os.path.isabs(base):
        fail("The chroot base directory must be an absolute path: %s" % base)
    if int(opts["--uid"]) != os.geteuid() or int(opts["--gid"]) != os.getegid():
        fail("this fake cannot switch to uid %s gid %s" % (opts["--uid"], opts["--gid"]))
    root = os.path.join(base, name, vm_id, "root")
    os.makedirs(root, exist_ok=True)
    os.chdir(root)
    if os.environ.get("FAKE_JAILER_LOG"):
        with open(os.environ["FAKE_JAILER_LOG"], "a") as f:
            f.write(json.dumps({"pid": os.getpid(), "argv": sys.argv[1:], "chroot": root,
                                "cgroups": opts["--cgroup"]}) + "\n")
    now = str(int(time.time() * 1e6))
    os.execv(exe, [exe, "--id", vm_id, "--start-time-us", now, "--start-time-cpu-us", "0",
                   "--parent-cpu-time-us", "0"] + extra)


if __name__ == "__main__":
    main()
