#!/usr/bin/env python3
# tests/image/push.py - push hand-made images to a registry for
# tests/image/pull.sh, through the registry's own upload API (no daemon):
# each image's layers are tar archives built here, so that a test can
# carry whiteouts, setuid bits, device nodes, "../" names and links.
#
#   push.py HOST:PORT KIND REPO TAG [KIND REPO TAG]...
#
# prints each manifest's digest (an index's own for index), one a line.
#
# KIND: base (two layers: files, a setuid program, a device node, a FIFO,
# then whiteouts and an opaque directory), index (base behind an OCI
# index of linux/arm64, linux/amd64, windows/amd64, linux/arm/v6 and
# linux/arm/v7 entries: base for linux/amd64 and linux/arm/v7), dotdot (a
# layer with "../escape"), abslink (a link to an absolute directory, then a
# file through it), hardout (a hard link through that link to a file
# outside), unique (one gzip layer of a fresh random file), rootfs (the
# program $IMGCAT as bin/imgcat, etc/os-release and marker holding
# $MARKER: a root a sandbox can run in), tarball (the tar file
# $ROOTFS_TAR as it is, gzip'd when its name ends in .gz, then a layer
# with marker holding $MARKER: tests/image/kit.sh's Debian root).
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile
import urllib.request

REG = sys.argv[1]


def req(method, url, data=None, headers=None):
    r = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    with urllib.request.urlopen(r) as resp:
        return resp.status, dict(resp.headers)


def blob(repo, data):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    _, h = req("POST", f"http://{REG}/v2/{repo}/blobs/uploads/")
    loc = h["Location"]
    if loc.startswith("/"):
        loc = f"http://{REG}{loc}"
    sep = "&" if "?" in loc else "?"
    req("PUT", f"{loc}{sep}digest={digest}", data,
        {"Content-Type": "application/octet-stream"})
    return {"digest": digest, "size": len(data)}


def tar(entries):
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w", format=tarfile.GNU_FORMAT) as t:
        for e in entries:
            name, kind = e[0], e[1]
            ti = tarfile.TarInfo(name)
            ti.mtime = 1700000000
            data = None
            if kind == "dir":
                ti.type, ti.mode = tarfile.DIRTYPE, e[2] if len(e) > 2 else 0o755
            elif kind == "file":
                data = e[2].encode()
                ti.size, ti.mode = len(data), e[3] if len(e) > 3 else 0o644
            elif kind == "copy":
                with open(e[2], "rb") as f:
                    data = f.read()
                ti.size, ti.mode = len(data), 0o755
            elif kind == "link":
                ti.type, ti.linkname = tarfile.SYMTYPE, e[2]
            elif kind == "hard":
                ti.type, ti.linkname = tarfile.LNKTYPE, e[2]
            elif kind == "chr":
                ti.type, ti.devmajor, ti.devminor, ti.mode = tarfile.CHRTYPE, 1, 3, 0o666
            elif kind == "fifo":
                ti.type = tarfile.FIFOTYPE
            t.addfile(ti, io.BytesIO(data) if data is not None else None)
    return bio.getvalue()


LAYERS = {
    "base": [
        [("etc", "dir"), ("etc/hello.txt", "file", "hello from layer 1\n"),
         ("data", "dir"), ("data/a", "file", "a\n"), ("data/b", "file", "b\n"),
         ("opq", "dir"), ("opq/old", "file", "old\n"),
         ("bin", "dir"), ("bin/tool", "file", "#!/bin/sh\n", 0o4755),
         ("ro", "dir", 0o555), ("ro/file", "file", "in a read-only dir\n", 0o444),
         ("etc/hello-again", "hard", "etc/hello.txt"),
         ("etcl", "link", "/etc"),
         ("dev", "dir"), ("dev/null", "chr"), ("fifo", "fifo")],
        [("data/.wh.a", "file", ""),
         ("opq", "dir"), ("opq/.wh..wh..opq", "file", ""), ("opq/new", "file", "new\n"),
         ("etc/layer2.txt", "file", "from layer 2\n")],
    ],
    "dotdot": [[("ok.txt", "file", "fine\n"), ("../escape.txt", "file", "escaped\n")]],
    "abslink": [[("out", "link", os.environ.get("OUTSIDE", "/tmp"))],
                [("out/pwned.txt", "file", "written through a link\n")]],
    "hardout": [[("out", "link", os.environ.get("OUTSIDE", "/tmp")),
                 ("h", "hard", "out/secret")]],
    "unique": [[("unique.txt", "file", os.urandom(16).hex() + "\n")]],
    "tarball": [[("marker", "file", os.environ.get("MARKER", "marker") + "\n")]],
}
if os.environ.get("IMGCAT"):
    LAYERS["rootfs"] = [[("bin", "dir"), ("bin/imgcat", "copy", os.environ["IMGCAT"]),
                         ("etc", "dir"), ("etc/os-release", "file", "ID=polysandbox-test\n"),
                         ("marker", "file", os.environ.get("MARKER", "marker") + "\n")]]

MT_TAR = "application/vnd.docker.image.rootfs.diff.tar"
MT_GZ = "application/vnd.docker.image.rootfs.diff.tar.gzip"


def tarball_layer(repo):
    """The layer of kind tarball: $ROOTFS_TAR's bytes, and its diff id."""
    path = os.environ["ROOTFS_TAR"]
    with open(path, "rb") as f:
        data = f.read()
    gz = path.endswith(".gz")
    raw = gzip.decompress(data) if gz else data
    d = blob(repo, data)
    d["mediaType"] = MT_GZ if gz else MT_TAR
    return d, "sha256:" + hashlib.sha256(raw).hexdigest()


def push_image(repo, tag, kind, arch="amd64"):
    layers, diff_ids = [], []
    if kind == "tarball":
        d, diff_id = tarball_layer(repo)
        layers.append(d)
        diff_ids.append(diff_id)
    for i, entries in enumerate(LAYERS[kind]):
        raw = tar(entries)
        diff_ids.append("sha256:" + hashlib.sha256(raw).hexdigest())
        # Both forms of layer: the first plain, the next gzip'd.
        data = raw if i % 2 == 0 else gzip.compress(raw, mtime=0)
        d = blob(repo, data)
        d["mediaType"] = MT_TAR if i % 2 == 0 else MT_GZ
        layers.append(d)
    cfg = json.dumps({"architecture": arch, "os": "linux", "config": {},
                      "rootfs": {"type": "layers", "diff_ids": diff_ids}}).encode()
    c = blob(repo, cfg)
    c["mediaType"] = "application/vnd.docker.container.image.v1+json"
    m = json.dumps({"schemaVersion": 2,
                    "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
                    "config": c, "layers": layers}).encode()
    req("PUT", f"http://{REG}/v2/{repo}/manifests/{tag}", m,
        {"Content-Type": "application/vnd.docker.distribution.manifest.v2+json"})
    return "sha256:" + hashlib.sha256(m).hexdigest(), len(m)


def main():
    # One process for every image: python3 starts slowly on a loaded machine.
    args = sys.argv[2:]
    for i in range(0, len(args) - 2, 3):
        print(push_one(*args[i:i + 3]), flush=True)


def push_one(kind, repo, tag):
    if kind == "arm64":  # base, for linux/arm64 only (no index)
        return push_image(repo, tag, "base", "arm64")[0]
    if kind != "index":
        return push_image(repo, tag, kind)[0]
    digest, size = push_image(repo, tag + "-amd64", "base")
    # linux/amd64 is this machine's (the test skips on others), and
    # linux/arm/v7 is base too; the other entries are an image without
    # etc/hello.txt, so picking one of them shows in the root.
    bogus, osize = push_image(repo, tag + "-other", "unique")
    mt = "application/vnd.docker.distribution.manifest.v2+json"
    idx = json.dumps({"schemaVersion": 2,
                      "mediaType": "application/vnd.oci.image.index.v1+json",
                      "manifests": [
                          {"mediaType": mt, "digest": bogus, "size": osize,
                           "platform": {"architecture": "arm64", "os": "linux"}},
                          {"mediaType": mt, "digest": digest, "size": size,
                           "platform": {"architecture": "amd64", "os": "linux"}},
                          {"mediaType": mt, "digest": bogus, "size": osize,
                           "platform": {"architecture": "amd64", "os": "windows"}},
                          {"mediaType": mt, "digest": bogus, "size": osize,
                           "platform": {"architecture": "arm", "os": "linux",
                                        "variant": "v6"}},
                          {"mediaType": mt, "digest": digest, "size": size,
                           "platform": {"architecture": "arm", "os": "linux",
                                        "variant": "v7"}}]}).encode()
    req("PUT", f"http://{REG}/v2/{repo}/manifests/{tag}", idx,
        {"Content-Type": "application/vnd.oci.image.index.v1+json"})
    return "sha256:" + hashlib.sha256(idx).hexdigest()


main()
