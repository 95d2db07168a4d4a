#!/bin/sh
# tests/docker/pull.sh - the docker provider pulls missing images, from a
# real registry on loopback: Debian's docker-registry (distribution 2.8),
# started here on 127.0.0.1 at free ports with a private configuration and
# storage (tests/docker/registry.sh), one open and one with htpasswd
# (bcrypt) authentication on the same storage, and stopped at the end.
# The test image is pushed to it, its tag removed from the daemon, then:
# pull = missing (from four threads of one process, and from three
# processes), never, always; an image absent from the registry; the
# authenticated registry without, with wrong and with sealed credentials
# (which never show in any output); a registry that never answers (the
# pull deadline); bad settings.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/docker/lib.sh"
. "$top_srcdir/tests/docker/registry.sh"
docker_ready; r=$?
# A skip was printed as TAP ("1..0 # SKIP ..."): that is a clean exit.
[ "$r" -eq 77 ] && exit 0
[ "$r" -eq 0 ] || exit "$r"
D=$DOCKER
PC=$top_builddir/tests/docker/test-docker-pullcreate

pull_unready() { registry_unready pull "$@"; }
command -v docker-registry >/dev/null 2>&1 ||
    pull_unready "no docker-registry (apt-get install docker-registry)"
command -v htpasswd >/dev/null 2>&1 || pull_unready "no htpasswd (apt-get install apache2-utils)"
command -v python3 >/dev/null 2>&1 || pull_unready "no python3"
command -v curl >/dev/null 2>&1 || pull_unready "no curl"

USER_NAME=pulltester
PASSWORD="pw-$$-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
stall_pid=
images=
cleanup() {
    registry_stop_all
    [ -n "$stall_pid" ] && kill "$stall_pid" 2>/dev/null
    for i in $images; do "$D" rmi "$i" >/dev/null 2>&1; done
    # A pull also leaves REPO@sha256:... of an image still tagged otherwise.
    [ -n "${REGISTRY_open_PORT:-}" ] &&
        "$D" images --digests --format '{{.Repository}}@{{.Digest}}' 2>/dev/null |
        grep -E "^127\.0\.0\.1:(${REGISTRY_open_PORT}|${REGISTRY_auth_PORT:-x})/.*@sha256:" |
        while read -r ref; do "$D" rmi "$ref" >/dev/null 2>&1; done
    rm -rf "$tmp"
}
trap cleanup EXIT

# pc IMAGE THREADS [OVERRIDES]: sandboxes of IMAGE from THREADS threads
# of one process (tests/docker/pullcreate.c), each running print(6*7).
# PC_ENV: NAME=VALUE words for that one run (reset after it).
PC_ENV=
pc() {
    env $PC_ENV "$PC" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    PC_ENV=
    cat "$tmp/out" "$tmp/err" >>"$tmp/all-output"
}
# each_ok N: all N threads printed 42.
each_ok() { [ "$(grep -c ': ok 42$' "$tmp/out")" -eq "$1" ] && is_rc 0; }
# fails CODE TEXT...: thread 1 failed with sbx_status CODE and a message
# holding every TEXT.
fails() {
    code=$1
    shift
    grep -q "^thread 1: error $code " "$tmp/out" || return 1
    for t in "$@"; do grep -q -F -- "$t" "$tmp/out" || return 1; done
}
on_daemon() { "$D" image inspect "$1" >/dev/null 2>&1; }
# Docker pushes to loopback registries over plain HTTP by default; Podman
# (tests/podman/pull.sh) is told so by its registries.conf, which its
# compatible push does not read.
engine_push() {
    if [ "${DOCKER_ENGINE:-docker}" = podman ]; then
        podman --remote --url "unix://$DOCKER_SOCK" push --tls-verify=false "$1"
    else
        "$D" push "$1"
    fi
}
if [ "${DOCKER_ENGINE:-docker}" = podman ] &&
    ! podman --remote --url "unix://$DOCKER_SOCK" info --format '{{json .Registries}}' 2>/dev/null |
        grep -q '127\.0\.0\.1'; then
    pull_unready "the Podman service on $DOCKER_SOCK was started without the registries.conf of tests/podman/lib.sh (loopback registries over HTTP): stop it and run again"
fi

plan 28

htpasswd -Bbc "$tmp/htpasswd" "$USER_NAME" "$PASSWORD" >/dev/null 2>&1
registry_start open "$tmp/reg" && registry_start auth "$tmp/reg" "$tmp/htpasswd"
check "two registries on loopback (open, and htpasswd with bcrypt) on one storage" \
    eval '[ -n "${REGISTRY_open_PORT:-}" ] && [ -n "${REGISTRY_auth_PORT:-}" ]'
[ -n "${REGISTRY_auth_PORT:-}" ] || { echo "Bail out! no registry"; exit 1; }

IMG=127.0.0.1:$REGISTRY_open_PORT/polysandbox-test/pull:v1
AIMG=127.0.0.1:$REGISTRY_auth_PORT/polysandbox-test/pull:v1
images="$IMG $AIMG"
"$D" tag "$DOCKER_TEST_IMAGE" "$IMG" && engine_push "$IMG" >"$tmp/push.log" 2>&1
check "the test image pushed to 127.0.0.1:$REGISTRY_open_PORT" eval \
    'curl -sf "http://127.0.0.1:$REGISTRY_open_PORT/v2/polysandbox-test/pull/tags/list" | grep -q v1'
"$D" rmi "$IMG" >/dev/null
check "and its tag removed from the daemon" eval '! on_daemon "$IMG"'

# ---- pull = never: today's clear error ----
pc "$IMG" 1 provider.docker.pull=never
check "pull = never: not found (6), naming the image and the setting" \
    fails 6 "'$IMG'" "pull = never" "docker pull"
check "pull = never pulled nothing" eval '! on_daemon "$IMG"'

# ---- pull = missing (the default), four creates at once in one process ----
PC_ENV="POLYSANDBOX_LOG=info"
pc "$IMG" 4
check "pull = missing (default): four concurrent creates of the missing image all run code" \
    each_ok 4
echo "# pulls started for the four creates: $(grep -c 'pulling image' "$tmp/err") (they share one in flight)"
check "the image is on the daemon now" on_daemon "$IMG"

# ---- three processes at once ----
"$D" rmi "$IMG" >/dev/null
pids=
for i in 1 2 3; do
    "$PS" run --provider docker --image "$IMG" -- python3 -c 'print(6*7)' \
        >"$tmp/p$i.out" 2>"$tmp/p$i.err" &
    pids="$pids $!"
done
for p in $pids; do wait "$p"; done
cat "$tmp"/p?.out "$tmp"/p?.err >>"$tmp/all-output"
check "three processes pulling the same missing image at once all run code" \
    [ "$(cat "$tmp"/p?.out | grep -c '^42$')" -eq 3 ]

# ---- an image the registry does not have ----
NOPE=127.0.0.1:$REGISTRY_open_PORT/polysandbox-test/absent:v9
pc "$NOPE" 1
check "an image absent from the registry: not found (6), naming it and the registry's words" \
    fails 6 "'$NOPE'" "manifest unknown"
pc "127.0.0.1:$REGISTRY_open_PORT/Bad/Name" 1
check "a malformed image name: invalid (2), naming it, before the daemon sees it" \
    fails 2 "Bad/Name" "repository path"

# ---- pull = always: the registry's newer image replaces the daemon's ----
# The registry gets image B (a label more) under the tag; the daemon's tag
# goes back to the original image A.
cid=$("$D" create "$IMG" true) &&
    "$D" commit --change 'LABEL io.polysandbox.test.pull=newer' "$cid" "$IMG" >/dev/null &&
    engine_push "$IMG" >>"$tmp/push.log" 2>&1 && "$D" rm "$cid" >/dev/null &&
    "$D" tag "$DOCKER_TEST_IMAGE" "$IMG"
newer() { "$D" image inspect -f '{{.Config.Labels}}' "$IMG" 2>/dev/null | grep -q 'pull:newer'; }
check "set-up: the registry has a newer image under the tag than the daemon" eval '! newer'
pc "$IMG" 1
check "pull = missing keeps the daemon's image (no pull when present)" eval 'each_ok 1 && ! newer'
pc "$IMG" 2 provider.docker.pull=always
check "pull = always re-pulls: the daemon now has the registry's newer image" \
    eval 'each_ok 2 && newer'

# ---- the registry with authentication ----
pc "$AIMG" 1
# Docker says "no basic auth credentials", Podman "authentication required".
check "no credentials: refused (9, auth), naming the image and the registry's words" \
    fails 9 "'$AIMG'" "auth"
PC_ENV="RA=$USER_NAME:wrong-$PASSWORD"
pc "$AIMG" 1 provider.docker.registry_auth=env:RA \
    "provider.docker.registry_auth_host=127.0.0.1:$REGISTRY_auth_PORT"
check "wrong credentials: refused (9, auth)" fails 9 "'$AIMG'" "authentication required"

# Sealed credentials in a configuration directory of the test's.
conf=$tmp/conf
cp -RL "$top_srcdir/tests/config" "$conf" && chmod -R u+w "$conf" &&
    sed "s|^socket = .*|socket = unix://$DOCKER_SOCK|" \
        "$top_srcdir/tests/config/providers.d/docker.ini" >"$conf/providers.d/docker.ini"
"$PS" --config-dir "$conf" secret init >/dev/null 2>&1
printf '%s:%s' "$USER_NAME" "$PASSWORD" >"$tmp/cred"
sealed=$("$PS" --config-dir "$conf" secret seal <"$tmp/cred" 2>>"$tmp/all-output")
rm -f "$tmp/cred"
check "credentials sealed (sealed:v1:...)" eval 'case $sealed in sealed:v1:*) true ;; *) false ;; esac'
printf 'registry_auth_host = 127.0.0.1:%s\nregistry_auth = %s\n' "$REGISTRY_auth_PORT" "$sealed" \
    >>"$conf/providers.d/docker.ini"
PC_ENV="POLYSANDBOX_CONFIG_DIR=$conf POLYSANDBOX_LOG=debug"
pc "$AIMG" 2
check "sealed credentials: two concurrent creates pull from the authenticated registry" each_ok 2
check "the log says the credentials were sent, not what they are" \
    grep -q "with registry_auth" "$tmp/err"
"$D" rmi "$AIMG" >/dev/null
export POLYSANDBOX_LOG=debug
cli --config-dir "$conf" run --provider docker --image "$AIMG" -- \
    python3 -c 'print(6*7)'
unset POLYSANDBOX_LOG
cat "$tmp/out" "$tmp/err" >>"$tmp/all-output"
check "the same through the command" rc_and_out 0 42
cli --config-dir "$conf" doctor --provider docker
cat "$tmp/out" "$tmp/err" >>"$tmp/all-output"
check "doctor: the pull policy, and that registry_auth is set, not its value" \
    out_has "pull = missing, pull_timeout 300 s, registry_auth for 127.0.0.1:$REGISTRY_auth_PORT (set, not shown)"
# The header's value too: base64url of the JSON the daemon gets.
hdr=$(python3 -c 'import base64, json, sys
print(base64.urlsafe_b64encode(json.dumps({"username": sys.argv[1], "password": sys.argv[2], "serveraddress": sys.argv[3]}, separators=(",", ":")).encode()).decode())' \
    "$USER_NAME" "$PASSWORD" "127.0.0.1:$REGISTRY_auth_PORT")
check "the password (and the X-Registry-Auth value) is in no output of any run" \
    eval '! grep -q -F -e "$PASSWORD" -e "$hdr" "$tmp/all-output"'
# The credentials go only to the registry they are for.
PC_ENV="RA=$USER_NAME:$PASSWORD POLYSANDBOX_LOG=info"
pc "$NOPE" 1 provider.docker.registry_auth=env:RA \
    provider.docker.registry_auth_host=registry.invalid:5000
check "credentials for another registry are not sent (the log says no registry_auth)" \
    eval 'fails 6 "$NOPE" && ! grep -q "with registry_auth" "$tmp/err"'

# ---- a registry that accepts connections and never answers ----
python3 "$top_srcdir/tests/docker/stall.py" >"$tmp/stall.port" &
stall_pid=$!
i=0
while [ ! -s "$tmp/stall.port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
SIMG=127.0.0.1:$(cat "$tmp/stall.port")/polysandbox-test/stalled:v1
pc "$SIMG" 1 provider.docker.pull_timeout=3s retry.attempts=1
check "a registry that never answers: the pull deadline (10, timeout), naming the image" \
    fails 10 "'$SIMG'" "pull_timeout (3 s"

# ---- settings (the provider made required, or it would only be hidden) ----
strict=$tmp/strict
cp -RL "$conf" "$strict" && sed -i 's/^optional = true/optional = false/' "$strict/providers.d/docker.ini"
PC_ENV="POLYSANDBOX_CONFIG_DIR=$strict"
pc "$IMG" 1 provider.docker.pull=sometimes
check "pull = sometimes: the provider is unavailable, naming the key and the choices" \
    fails 7 "pull = 'sometimes'" "missing, always or never"
PC_ENV="POLYSANDBOX_CONFIG_DIR=$strict"
pc "$IMG" 1 provider.docker.pull_timeout=0
check "pull_timeout = 0: the provider is unavailable, naming the key and the bounds" \
    fails 7 "command line: pull_timeout = '0': must be from 1s to 24h"
PC_ENV="POLYSANDBOX_CONFIG_DIR=$strict"
pc "$IMG" 1 provider.docker.cpus=0
check "cpus = 0: unavailable, naming the key and what is accepted" \
    fails 7 "command line: cpus = '0': a number of CPUs from 0.01 to 1024"
PC_ENV="POLYSANDBOX_CONFIG_DIR=$strict"
pc "$IMG" 1 provider.docker.exec_mode=fast
check "exec_mode = fast: unavailable, naming the choices" \
    fails 7 "exec_mode = 'fast': use attach or api"
PC_ENV="POLYSANDBOX_CONFIG_DIR=$strict"
pc "$IMG" 1 provider.docker.registry_auth_host=
check "registry_auth without registry_auth_host: unavailable, naming both" \
    fails 7 "registry_auth is set but registry_auth_host is not"
done_testing
