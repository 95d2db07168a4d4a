#!/bin/sh
# tests/image/kit.sh - the conformance kit passes for the local provider
# inside a pulled Debian image.  The image is the debootstrap root of
# Debian bookworm with python3 that the docker tests build and cache
# (docker_rootfs, tests/docker/lib.sh: once per machine, no Docker
# needed), plus a layer with a marker; tests/image/push.py pushes it to
# Debian's docker-registry on loopback, `polysandbox image pull` fetches
# it, and a template names it as image.local (the python template too, so
# the kit's zygote test forks from the image's python3).  The kit then
# runs with --template, so every sandbox it makes runs in that root; its
# TAP lines follow this test's own, renumbered.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/docker/lib.sh"
. "$top_srcdir/tests/image/lib.sh"

unready() { image_unready "image kit" "$@"; }
image_require "image kit"
command -v docker-registry >/dev/null 2>&1 ||
    unready "no docker-registry (apt-get install docker-registry)"
command -v curl >/dev/null 2>&1 || unready "no curl"
[ "$(uname -m)" = x86_64 ] || { echo "1..0 # SKIP image kit: the cached Debian root is amd64"; exit 0; }
# Building the root needs debootstrap and root once; a cached one needs neither.
docker_rootfs python3 python3 ||
    unready "no cached Debian root and debootstrap could not build one (apt-get install debootstrap, as root)"

cleanup() {
    registry_stop_all
    rm -rf "$tmp"
}
trap cleanup EXIT
export POLYSANDBOX_STATE_DIR="$tmp/state"
POLYSANDBOX_LOCAL_DAEMON=${POLYSANDBOX_LOCAL_DAEMON:-off}
export POLYSANDBOX_LOCAL_DAEMON

registry_start open "$tmp/reg"
[ -n "${REGISTRY_open_PORT:-}" ] || { echo "Bail out! no registry"; exit 1; }
R=127.0.0.1:$REGISTRY_open_PORT
IMAGE=$R/polysandbox-test/debian:bookworm
marker="marker-$$-$(date +%s%N)"
ROOTFS_TAR=$DOCKER_ROOTFS MARKER=$marker python3 "$top_srcdir/tests/image/push.py" "$R" \
    tarball polysandbox-test/debian bookworm >/dev/null 2>"$tmp/push.log" ||
    { sed 's/^/# push: /' "$tmp/push.log"; echo "Bail out! could not push the Debian image"; exit 1; }

conf=$tmp/conf
mkdir -p "$conf/templates.d" "$conf/providers.d"
cp "$top_srcdir/tests/config/polysandbox.ini" "$conf/"
cp "$top_srcdir/tests/config/providers.d/local.ini" "$conf/providers.d/"
cat >"$conf/templates.d/debian.ini" <<INI
[template]
extensions = .debsh
run = /bin/sh main.debsh
image.local = $IMAGE
INI
# The python template in the image too, so the kit's zygote test forks
# python runs from a warm interpreter of the image's python3.
sed "/^\[template\]/a image.local = $IMAGE" "$top_srcdir/etc/templates.d/python.ini" \
    >"$conf/templates.d/python.ini"

cli image pull -q "$IMAGE"
check "the Debian image pulled from the registry on loopback" is_rc 0
pulled=$tap_n

echo 'cat /marker; . /etc/os-release; echo "$VERSION_CODENAME"; python3 -c "print(6 * 7)"' \
    >"$tmp/probe.debsh"
cli --config-dir "$conf" run -t 60s "$tmp/probe.debsh"
check "the template's runs are in the image: its marker, bookworm and its python3" \
    eval 'is_rc 0 && out_has "$marker" && out_has bookworm && out_has 42'
echo 'import sys; print(open("/marker").read().strip(), sys.executable)' >"$tmp/probe.py"
cli --config-dir "$conf" run -t 60s "$tmp/probe.py"
check "the python template's runs (its zygote's) are in the image too: its marker" \
    eval 'is_rc 0 && out_has "$marker"'

# kit LABEL: the kit in the image, its numbers after ours and its names
# prefixed with LABEL; its plan line dropped (ours is at the end).
usable=false
[ "$tap_failed" -eq 0 ] && [ "$pulled" -eq 1 ] && usable=true
kit() {
    if $usable; then
        "$top_builddir/polysandbox-conformance" --config-dir "$conf" --template debian local \
            >"$tmp/kit.tap" 2>"$tmp/kit.err"
        kit_rc=$?
    else
        echo "the image is not usable: the kit is not run" >"$tmp/kit.err"
        kit_rc=1
        : >"$tmp/kit.tap"
    fi
    awk -v base="$tap_n" -v label="$1" '
        /^1\.\.[0-9]+/ { next }
        /^(not )?ok [0-9]+/ {
            neg = ($1 == "not"); n = neg ? $3 : $2
            sub(/^(not )?ok [0-9]+/, "")
            # " - name [# SKIP why]" -> "ok N - LABEL: name [# SKIP why]"
            print (neg ? "not ok " : "ok ") (base + n) " - " label ":" substr($0, 3)
            kits++; next
        }
        { print }
        END { print "# kit tests: " kits+0 > "/dev/stderr" }' "$tmp/kit.tap" 2>"$tmp/kit.count"
    kit_n=$(sed -n 's/^# kit tests: //p' "$tmp/kit.count")
    tap_n=$((tap_n + kit_n))
    sed 's/^/# kit stderr: /' "$tmp/kit.err" | head -20
    check "$1: the kit ran in the image and exited 0 (no test failed)" \
        eval '[ "$kit_rc" -eq 0 ] && [ "$kit_n" -gt 0 ]'
}
kit kit
# The same through polysandbox-locald (the default path for root), as
# tests/conformance/local-locald.kit: strict, a state of its own.
if [ "$(id -u)" = 0 ] && [ -x "$top_builddir/plugins/local/polysandbox-locald" ]; then
    (
        POLYSANDBOX_LOCAL_DAEMON=auto POLYSANDBOX_LOCALD_STRICT=1 POLYSANDBOX_LOCALD_IDLE=3
        POLYSANDBOX_LOCALD="$top_builddir/plugins/local/polysandbox-locald"
        export POLYSANDBOX_LOCAL_DAEMON POLYSANDBOX_LOCALD_STRICT POLYSANDBOX_LOCALD_IDLE \
            POLYSANDBOX_LOCALD
        kit kit-locald
        echo "$tap_n $tap_failed" >"$tmp/locald.counts"
    )
    read -r tap_n tap_failed <"$tmp/locald.counts" ||
        { echo "Bail out! the kit through polysandbox-locald did not finish"; exit 1; }
fi
plan "$tap_n"
done_testing
