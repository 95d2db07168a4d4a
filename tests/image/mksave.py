#!/usr/bin/env python3
"""tests/image/mksave.py - image tarballs for tests/image/import.sh

    mksave.py KIND OUT [KIND OUT]...

(one python for all: it starts slowly on a loaded machine).  Prints
"KIND DIGEST" for the OCI kinds (the manifest's digest).  KIND is one of:
  rootfs     a plain tar of one file, hello.txt (for docker import)
  rootfs2    the same of another file, other.txt
  save       docker save as Docker before 25 writes it: manifest.json
             (RepoTags polysandbox-test/saved:v1), the config HEX.json,
             ID/layer.tar per layer (the second layer a symbolic link to
             ../ID/layer.tar of another directory, as docker save writes a
             layer it already wrote), layer 2 whites out a file of layer 1
  oci        an OCI image layout, gzip layers, the index annotated with
             io.containerd.image.name polysandbox-test/oci:v1
  ociindex   oci whose index.json names an image index (as docker save
             writes with the containerd store): linux/arm64 (absent) and
             linux/amd64
  ociplat    an OCI layout naming an image index of linux/amd64 (the image
             of oci), linux/arm/v7 and linux/arm64/v8 (both the other image)
             and a build attestation (unknown/unknown); prints both
             manifests' digests
  multisave  save of two images: polysandbox-test/saved:v1 and :v2 (the
             image of save) and polysandbox-test/other:v1 (layer 1 shared,
             then a layer of etc/other.txt)
  multioci   an OCI layout of the two, as docker save since 25 writes one
             entry per tag: polysandbox-test/oci:v1 and :latest (the image
             of oci), polysandbox-test/ocib:v1 (the other); prints both
             manifests' digests
  ocinoname  multioci whose third entry has no name annotation
  ocidup     multioci whose third entry is named polysandbox-test/oci:v1
  tamper     save with one byte of a layer changed (same size)
  dotdot     save with a member "../escape.txt" beside the others
  layerdotdot  save whose layer holds "../escape.txt"
  savearm64  save of an image whose config says linux/arm64
  ociarm64   oci of an image whose config says linux/arm64 (no index)

Made here, with tarfile and hashlib only, so that nothing of the program
under test decides what the tarball holds.
"""
import gzip
import hashlib
import io
import json
import sys
import tarfile


def tar_of(files):
    """A tar (bytes) of [(name, bytes or None for a directory)]."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, data in files:
            add(t, name, data)
    return buf.getvalue()


def sha(b):
    return hashlib.sha256(b).hexdigest()


def add(t, name, data=None, link=None):
    info = tarfile.TarInfo(name)
    info.mtime = 1700000000
    if link is not None:
        info.type = tarfile.SYMTYPE
        info.linkname = link
        t.addfile(info)
    elif data is None:
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
        t.addfile(info)
    else:
        info.size = len(data)
        info.mode = 0o644
        t.addfile(info, io.BytesIO(data))


LAYER1 = [("etc", None), ("etc/hello.txt", b"hello from a saved image\n"),
          ("data", None), ("data/gone", b"whited out by layer 2\n")]
LAYER2 = [("data", None), ("data/.wh.gone", b""), ("etc/layer2.txt", b"from layer 2\n")]
OTHER = [("etc", None), ("etc/other.txt", b"from the other image\n")]


def save(out, kind):
    l1 = tar_of(LAYER1 + ([("../escape.txt", b"escaped\n")] if kind == "layerdotdot" else []))
    l2 = tar_of(LAYER2)
    diff_ids = ["sha256:" + sha(l1), "sha256:" + sha(l2)]
    if kind == "tamper":
        b = bytearray(l1)
        b[l1.index(b"hello from")] ^= 1     # in a file's data: same size
        l1 = bytes(b)
    config = json.dumps({"architecture": "arm64" if kind == "savearm64" else "amd64",
                         "os": "linux", "config": {"Cmd": ["/bin/sh"]},
                         "rootfs": {"type": "layers", "diff_ids": diff_ids}}).encode()
    cid = sha(config)
    id1, id2 = "a" * 64, "b" * 64
    manifest = json.dumps([{"Config": cid + ".json", "RepoTags": ["polysandbox-test/saved:v1"],
                            "Layers": [id1 + "/layer.tar", id2 + "/layer.tar"]}]).encode()
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as t:
        add(t, id1)
        add(t, id1 + "/layer.tar", l1)
        add(t, "c" * 64)
        add(t, "c" * 64 + "/layer.tar", l2)
        add(t, id2)
        # docker save writes a layer once and links the others to it.
        add(t, id2 + "/layer.tar", link="../" + "c" * 64 + "/layer.tar")
        add(t, cid + ".json", config)
        if kind == "dotdot":
            add(t, "../escape.txt", b"escaped\n")
        add(t, "manifest.json", manifest)
        add(t, "repositories", json.dumps({"polysandbox-test/saved": {"v1": id2}}).encode())


def config_of(layers, arch="amd64"):
    return json.dumps({"architecture": arch, "os": "linux",
                       "rootfs": {"type": "layers",
                                  "diff_ids": ["sha256:" + sha(x) for x in layers]}}).encode()


def multisave(out):
    """docker save before 25 of two images sharing a layer."""
    l1, l2, l3 = tar_of(LAYER1), tar_of(LAYER2), tar_of(OTHER)
    members, manifest = {}, []
    for tags, layers in ((["polysandbox-test/saved:v1", "polysandbox-test/saved:v2"], [l1, l2]),
                         (["polysandbox-test/other:v1"], [l1, l3])):
        config = config_of(layers)
        members[sha(config) + ".json"] = config
        for layer in layers:
            members[sha(layer) + "/layer.tar"] = layer
        manifest.append({"Config": sha(config) + ".json", "RepoTags": tags,
                         "Layers": [sha(x) + "/layer.tar" for x in layers]})
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as t:
        for name in sorted(members):
            if "/" in name:
                add(t, name.split("/")[0])
            add(t, name, members[name])
        add(t, "manifest.json", json.dumps(manifest).encode())


def oci_image(blobs, layer_files, nested=False, arch="amd64"):
    """An image's blobs into blobs; its descriptor for index.json, and
    its manifest's digest."""
    def blob(b):
        blobs[sha(b)] = b
        return {"digest": "sha256:" + sha(b), "size": len(b)}

    tars = [tar_of(f) for f in layer_files]
    layers = []
    for layer in tars:
        d = blob(gzip.compress(layer, mtime=0))
        d["mediaType"] = "application/vnd.oci.image.layer.v1.tar+gzip"
        layers.append(d)
    cd = blob(config_of(tars, arch))
    cd["mediaType"] = "application/vnd.oci.image.config.v1+json"
    manifest = json.dumps({"schemaVersion": 2,
                           "mediaType": "application/vnd.oci.image.manifest.v1+json",
                           "config": cd, "layers": layers}).encode()
    md = blob(manifest)
    md["mediaType"] = "application/vnd.oci.image.manifest.v1+json"
    top = md
    if nested:
        other = {"mediaType": md["mediaType"], "digest": "sha256:" + "e" * 64, "size": 100,
                 "platform": {"os": "linux", "architecture": "arm64"}}
        md["platform"] = {"os": "linux", "architecture": "amd64"}
        inner = json.dumps({"schemaVersion": 2,
                            "mediaType": "application/vnd.oci.image.index.v1+json",
                            "manifests": [other, md]}).encode()
        top = blob(inner)
        top["mediaType"] = "application/vnd.oci.image.index.v1+json"
    return top, "sha256:" + sha(manifest)


def named(name):
    return {"io.containerd.image.name": name,
            "org.opencontainers.image.ref.name": name.rsplit(":", 1)[1]}


def oci_layout(out, blobs, entries):
    index = json.dumps({"schemaVersion": 2, "manifests": entries}).encode()
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as t:
        add(t, "oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
        add(t, "index.json", index)
        add(t, "blobs")
        add(t, "blobs/sha256")
        for h, b in blobs.items():
            add(t, "blobs/sha256/" + h, b)


def oci(out, nested=False, arch="amd64"):
    blobs = {}
    top, digest = oci_image(blobs, [LAYER1, LAYER2], nested, arch)
    oci_layout(out, blobs, [dict(top, annotations=named("polysandbox-test/oci:v1"))])
    return digest


def oci_multi(out, kind):
    blobs = {}
    a, da = oci_image(blobs, [LAYER1, LAYER2])
    b, db = oci_image(blobs, [LAYER1, OTHER])
    third = {"multioci": named("polysandbox-test/ocib:v1"), "ocinoname": None,
             "ocidup": named("polysandbox-test/oci:v1")}[kind]
    entries = [dict(a, annotations=named("polysandbox-test/oci:v1")),
               dict(a, annotations=named("polysandbox-test/oci:latest")),
               dict(b, annotations=third) if third else b]
    oci_layout(out, blobs, entries)
    return da + " " + db


def oci_platforms(out):
    """One name, several platforms: an index of linux/amd64, linux/arm/v7,
    linux/arm64/v8 and an attestation, as buildx writes one."""
    blobs = {}
    a, da = oci_image(blobs, [LAYER1, LAYER2])
    b, db = oci_image(blobs, [LAYER1, OTHER])
    entries = [dict(a, platform={"os": "linux", "architecture": "amd64"}),
               dict(b, platform={"os": "linux", "architecture": "arm", "variant": "v7"}),
               dict(b, platform={"os": "linux", "architecture": "arm64", "variant": "v8"}),
               dict(b, platform={"os": "unknown", "architecture": "unknown"})]
    inner = json.dumps({"schemaVersion": 2,
                        "mediaType": "application/vnd.oci.image.index.v1+json",
                        "manifests": entries}).encode()
    blobs[sha(inner)] = inner
    top = {"mediaType": "application/vnd.oci.image.index.v1+json",
           "digest": "sha256:" + sha(inner), "size": len(inner),
           "annotations": named("polysandbox-test/plat:v1")}
    oci_layout(out, blobs, [top])
    return da + " " + db


def main():
    args = sys.argv[1:]
    for kind, out in zip(args[0::2], args[1::2]):
        if kind == "ociplat":
            print(kind, oci_platforms(out))
        elif kind in ("oci", "ociindex", "ociarm64"):
            print(kind, oci(out, kind == "ociindex", "arm64" if kind == "ociarm64" else "amd64"))
        elif kind in ("multioci", "ocinoname", "ocidup"):
            print(kind, oci_multi(out, kind))
        elif kind == "multisave":
            multisave(out)
        elif kind in ("rootfs", "rootfs2"):
            with open(out, "wb") as f:
                f.write(tar_of([("hello.txt", b"hello from docker save\n")] if kind == "rootfs"
                               else [("other.txt", b"the second docker image\n")]))
        else:
            save(out, kind)


main()
