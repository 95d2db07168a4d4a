#!/bin/sh
# contrib/quickstart.sh - set PolySandbox up on a fresh Debian 12 machine:
# install the build dependencies, build, install under /usr/local, and run
# a first program on the local provider (no daemon, no credentials), and
# the same from Python with the installed package.
#
#   ./contrib/quickstart.sh            everything
#   ./contrib/quickstart.sh --deps     only install the Debian packages
set -eu

cd "$(dirname "$0")/.."

if [ "$(id -u)" -eq 0 ]; then SUDO=; else SUDO=sudo; fi

PACKAGES="build-essential autoconf automake libtool libltdl-dev pkg-config \
libcurl4-openssl-dev libjansson-dev libinih-dev libsodium-dev libseccomp-dev \
libarchive-dev docker.io debootstrap \
libwebsockets-dev libyaml-dev libssl-dev \
python3 bubblewrap zlib1g-dev libmicrohttpd-dev nettle-dev"
# A registry of its own on loopback for tests/docker/pull.sh (the docker
# provider pulling missing images), bcrypt htpasswd for its authentication.
PACKAGES="$PACKAGES docker-registry apache2-utils curl"
# tests/image/pull.sh: the token service in front of that registry signs
# its tokens with Python's cryptography.
PACKAGES="$PACKAGES python3-cryptography"
# tests/python: the Python package's suite is pytest with pytest-asyncio.
PACKAGES="$PACKAGES python3-pytest python3-pytest-asyncio"
# The Python package's cffi backend (python/cffi_build.py), built against
# the library's header: cffi and Python.h.
PACKAGES="$PACKAGES python3-cffi python3-dev"
# tests/python/pip-install.sh: `pip install ./python` into a venv, offline.
PACKAGES="$PACKAGES python3-pip python3-venv"
# Podman 4.3 and what it needs (conmon, containers-common; runc comes with
# docker.io): tests/podman runs the docker provider on its compatible API.
PACKAGES="$PACKAGES podman conmon"
# Rootless Podman (tests/podman/rootless.sh): subordinate ids, user-mode
# networking, overlay through FUSE on older kernels.  slirp4netns is also
# the local provider's network for templates with network = egress
# (tests/templates/network.sh).
PACKAGES="$PACKAGES uidmap slirp4netns fuse-overlayfs"
# The Kubernetes fake (tests/fakes/kube.py) and the clients that prove it
# (tests/kube): its CA made with openssl, Debian's Python client.  kubectl,
# node and npm come with the machine's image (Debian has no kubectl recent
# enough); npm's @kubernetes/client-node is installed by the test from its
# lock file.  A client that is missing makes its test a skip.
PACKAGES="$PACKAGES openssl python3-kubernetes python3-yaml"
# The reference server tests/bench/server.sh measures polysandboxd against
# (FastAPI under uvicorn, as PolySandbox's first sketch was).
PACKAGES="$PACKAGES python3-fastapi python3-uvicorn"
# clang and its libFuzzer and sanitizer runtimes: the fuzz targets of
# tests/fuzz (configure --enable-fuzzing CC=clang-14; .ci/run runs them).
PACKAGES="$PACKAGES clang-14 libclang-rt-14-dev"
# The static-analysis pass of .ci/run (contrib/cppcheck.sh).
PACKAGES="$PACKAGES cppcheck"
# The style check of .ci/run (contrib/check-style.sh): clang-format, and
# perl for the plain-text rules (perl is Essential on Debian anyway).
PACKAGES="$PACKAGES clang-format-14"
# The modal provider: protobuf-c and its compiler (Modal speaks gRPC); its
# test fake: a gRPC server from grpcio, its messages made by protoc.
PACKAGES="$PACKAGES libprotobuf-c-dev protobuf-c-compiler python3-grpcio protobuf-compiler"
# The browser of tests/web (polysandboxd's page), driven headless by
# puppeteer-core from npm.  node and npm (from the machine's image, as
# above) also let make bundle the page's code editor (CodeMirror, pinned
# by core/server/web/editor/package-lock.json; configure --enable-editor).
PACKAGES="$PACKAGES chromium"
# The runtimes of the language templates (etc/templates.d), which the
# local provider takes from the host; tests/templates runs a hello world
# and a compile error in each (a missing one is a skip).
PACKAGES="$PACKAGES g++ golang rustc default-jdk-headless ruby php-cli perl lua5.4 \
nodejs node-typescript r-base-core"
# The test libraries MultiPL-E's Perl and Lua tests load (Test::Deep,
# luaunit; tests/eval/multipl-e-langs.sh), about 150 KB together.
PACKAGES="$PACKAGES libtest-deep-perl lua-unit"
# The python-data template's libraries (etc/templates.d/python-data.ini;
# tests/templates/python-data.sh draws a plot that comes back as a PNG).
PACKAGES="$PACKAGES python3-numpy python3-pandas python3-matplotlib"

# The microvm provider (tests/microvm): QEMU's microvm machine, the guest
# kernel (Debian's cloud kernel, also its modules), and what
# polysandbox-microvm-image packs the guest's initrd with (busybox: the
# guest's /bin/sh and commands); mkfs.erofs makes a pulled image's
# read-only disk (tests/microvm/oci.sh).
PACKAGES="$PACKAGES qemu-system-x86 linux-image-cloud-amd64 cpio kmod busybox erofs-utils"

echo "quickstart: installing Debian packages: $PACKAGES"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq $PACKAGES >/dev/null
[ "${1:-}" = "--deps" ] && exit 0

echo "quickstart: building"
[ -x configure ] || autoreconf -fi
# Debian's python3 (not one first on PATH, such as pyenv's): make install
# puts the Python package where it looks, /usr/local/lib/python3.X/dist-packages.
[ -f Makefile ] || ./configure PYTHON=/usr/bin/python3 ${CONFIGURE_FLAGS:-}
make -j"$(nproc)"

echo "quickstart: installing under $(sed -n 's/^prefix = //p' Makefile)"
$SUDO make install >/dev/null
$SUDO ldconfig

echo "quickstart: running examples/hello.py on the local provider"
polysandbox run examples/hello.py

echo "quickstart: the Python package, from Debian's python3"
/usr/bin/python3 -c 'import polysandbox as psb; print(psb.run("echo hi").stdout, end="")' ||
    echo "quickstart: python3 does not find the package: see python/README.md (Install and test)"
