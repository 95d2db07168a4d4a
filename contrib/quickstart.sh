#!/bin/sh
# contrib/quickstart.sh - set PolySandbox up on a fresh Debian 12 machine:
# install the build dependencies, build, install under /usr/local, and run
# a first program on the local provider (no daemon, no credentials).
#
#   ./contrib/quickstart.sh            everything
#   ./contrib/quickstart.sh --deps     only install the Debian packages
set -eu

cd "$(dirname "$0")/.."

if [ "$(id -u)" -eq 0 ]; then SUDO=; else SUDO=sudo; fi

PACKAGES="build-essential autoconf automake libtool libltdl-dev pkg-config \
libcurl4-openssl-dev libjansson-dev libinih-dev libsodium-dev libseccomp-dev \
libarchive-dev docker.io debootstrap \
python3 bubblewrap zlib1g-dev libmicrohttpd-dev nettle-dev"
# A registry of its own on loopback for tests/docker/pull.sh (the docker
# provider pulling missing images), bcrypt htpasswd for its authentication.
PACKAGES="$PACKAGES docker-registry apache2-utils curl"
# Podman 4.3 and what it needs (conmon, containers-common; runc comes with
# docker.io): tests/podman runs the docker provider on its compatible API.
PACKAGES="$PACKAGES podman conmon"
# Rootless Podman (tests/podman/rootless.sh): subordinate ids, user-mode
# networking, overlay through FUSE on older kernels.
PACKAGES="$PACKAGES uidmap slirp4netns fuse-overlayfs"
# clang and its libFuzzer and sanitizer runtimes: the fuzz targets of
# tests/fuzz (configure --enable-fuzzing CC=clang-14; .ci/run runs them).
PACKAGES="$PACKAGES clang-14 libclang-rt-14-dev"
# The modal provider: protobuf-c and its compiler (Modal speaks gRPC); its
# test fake: a gRPC server from grpcio, its messages made by protoc.
PACKAGES="$PACKAGES libprotobuf-c-dev protobuf-c-compiler python3-grpcio protobuf-compiler"

echo "quickstart: installing Debian packages: $PACKAGES"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq $PACKAGES >/dev/null
[ "${1:-}" = "--deps" ] && exit 0

echo "quickstart: building"
[ -x configure ] || autoreconf -fi
[ -f Makefile ] || ./configure ${CONFIGURE_FLAGS:-}
make -j"$(nproc)"

echo "quickstart: installing under $(sed -n 's/^prefix = //p' Makefile)"
$SUDO make install >/dev/null
$SUDO ldconfig

echo "quickstart: running examples/hello.py on the local provider"
polysandbox run examples/hello.py
