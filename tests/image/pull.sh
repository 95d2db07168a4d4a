#!/bin/sh
# tests/image/pull.sh - polysandbox image pull, list and rm against real
# registries on loopback: Debian's docker-registry (tests/docker/registry.sh)
# open, with basic authentication ([registry HOST] username and a password
# sealed with polysandbox secret seal), and with token authentication
# behind tests/image/tokend.py (asked anonymously, and with that user
# name and password), on one storage.  Images are made and pushed by tests/image/push.py (no daemon):
# files, whiteouts and an opaque directory across two layers (plain and
# gzip), setuid bits, a device node, a FIFO, an OCI index; a blob tampered
# with on the registry's disk; layers with "../", a write through an
# absolute link, a hard link through it.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/image/lib.sh"

unready() { image_unready "image pull" "$@"; }
image_require "image pull"
command -v docker-registry >/dev/null 2>&1 ||
    unready "no docker-registry (apt-get install docker-registry)"
command -v curl >/dev/null 2>&1 || unready "no curl"
command -v htpasswd >/dev/null 2>&1 || unready "no htpasswd (apt-get install apache2-utils)"
command -v openssl >/dev/null 2>&1 || unready "no openssl"
python3 -c 'import cryptography' 2>/dev/null ||
    unready "no python3-cryptography (apt-get install python3-cryptography)"
# The index's entry for this machine is its linux/amd64 one.
[ "$(uname -m)" = x86_64 ] || { echo "1..0 # SKIP image pull: the test images are amd64"; exit 0; }

token_pid=
cleanup() {
    registry_stop_all
    [ -n "$token_pid" ] && kill "$token_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
export POLYSANDBOX_STATE_DIR="$tmp/state"
store=$tmp/state/images

plan 44

# ---- registries: open, and token-authenticated on the same storage ----
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/key.pem" -out "$tmp/cert.pem" \
    -days 2 -subj /CN=polysandbox-test-token >/dev/null 2>&1
python3 "$top_srcdir/tests/image/tokend.py" "$tmp/key.pem" "$tmp/cert.pem" \
    polysandbox-test-issuer "$tmp" >"$tmp/token.port" 2>"$tmp/token.log" &
token_pid=$!
i=0
# Bounds a hang only: python3 with cryptography starts slowly on a loaded machine.
while [ ! -s "$tmp/token.port" ] && [ $i -lt 600 ] && kill -0 "$token_pid" 2>/dev/null; do
    sleep 0.1
    i=$((i + 1))
done
[ -s "$tmp/token.port" ] || sed 's/^/# token service: /' "$tmp/token.log"
htpasswd -Bbc "$tmp/htpasswd" someone "pw-$$" >/dev/null 2>&1
registry_start open "$tmp/reg" && registry_start basic "$tmp/reg" "$tmp/htpasswd" &&
    REGISTRY_TOKEN_REALM="http://127.0.0.1:$(cat "$tmp/token.port")/token" \
    REGISTRY_TOKEN_BUNDLE="$tmp/cert.pem" registry_start tok "$tmp/reg"
check "three registries on loopback (open, basic auth, token auth) and a token service" \
    eval '[ -n "${REGISTRY_open_PORT:-}" ] && [ -n "${REGISTRY_basic_PORT:-}" ] &&
          [ -n "${REGISTRY_tok_PORT:-}" ] && [ -s "$tmp/token.port" ]'
[ -n "${REGISTRY_tok_PORT:-}" ] || { echo "Bail out! no registry"; exit 1; }
R=127.0.0.1:$REGISTRY_open_PORT
T=127.0.0.1:$REGISTRY_tok_PORT
mkdir -p "$tmp/outside" && echo secret >"$tmp/outside/secret"
export OUTSIDE="$tmp/outside"
python3 "$top_srcdir/tests/image/push.py" "$R" base polysandbox-test/base v1 \
    index polysandbox-test/base multi dotdot polysandbox-test/dotdot v1 \
    abslink polysandbox-test/abslink v1 hardout polysandbox-test/hardout v1 \
    unique polysandbox-test/tamper v1 arm64 polysandbox-test/arm64 v1 \
    >"$tmp/digests" 2>"$tmp/push.log"
BASE=$(sed -n 1p "$tmp/digests")
check "the seven test images pushed" eval '[ "$(grep -c "^sha256:" "$tmp/digests")" -eq 7 ]' ||
    cat "$tmp/push.log" >&2

# ---- a pull, its files ----
cli image pull "$R/polysandbox-test/base:v1"
check "pull of a two-layer image prints the reference and its manifest digest" \
    rc_and_out 0 "$R/polysandbox-test/base:v1 $BASE"
root=$store/roots/${BASE#sha256:}
check "its files are in the root (both layers, plain and gzip)" \
    eval '[ "$(cat "$root/etc/hello.txt")" = "hello from layer 1" ] &&
          [ "$(cat "$root/etc/layer2.txt")" = "from layer 2" ] && [ "$(cat "$root/data/b")" = b ]'
check "a whiteout (.wh.a) removed data/a of the layer below" eval '[ ! -e "$root/data/a" ]'
check "an opaque directory dropped opq/old below and kept opq/new of its layer" \
    eval '[ ! -e "$root/opq/old" ] && [ "$(cat "$root/opq/new")" = new ]'
check "no device node, no FIFO, no whiteout file in the root" \
    eval '[ ! -e "$root/dev/null" ] && [ ! -e "$root/fifo" ] && [ -d "$root/dev" ] &&
          [ -z "$(find "$root" -name ".wh.*")" ]'
check "the setuid bit is dropped, the program stays executable" \
    eval '[ ! -u "$root/bin/tool" ] && [ -x "$root/bin/tool" ]'
check "a hard link is a link to the same file; a link to /etc stays a link" \
    eval '[ "$root/etc/hello-again" -ef "$root/etc/hello.txt" ] &&
          [ "$(readlink "$root/etcl")" = /etc ]'
check "every blob is stored under its digest and matches it" eval '
    n=0; for f in "$store"/blobs/sha256/*; do
        [ "$(sha256sum "$f" | cut -d" " -f1)" = "${f##*/}" ] || exit 1; n=$((n + 1)); done
    [ "$n" -eq 4 ]'
base_blobs=$(ls "$store/blobs/sha256")

# ---- an OCI index picks linux/amd64 ----
cli image pull "$R/polysandbox-test/base:multi"
check "an OCI index: the linux/amd64 manifest, the same image as :v1 (one root)" \
    rc_and_out 0 "$R/polysandbox-test/base:multi $BASE"
cli image list --json
check "image list --json: both references, one root" json_check \
    '[i["ref"] for i in j] == ["'"$R"'/polysandbox-test/base:multi", "'"$R"'/polysandbox-test/base:v1"] and len({i["root"] for i in j}) == 1 and j[0]["root"] == "'"$root"'"'
cli image list
check "image list: reference, digest, root per line" \
    out_has "$R/polysandbox-test/base:v1 $BASE $root"

# ---- the platform an index's entry is picked for (before the tamper below
# spoils the blob the other entries share with it) ----
P5="-o core.image_dir=$tmp/images5"
cli $P5 image pull --platform linux/arm/v7 "$R/polysandbox-test/base:multi"
check "--platform linux/arm/v7: the index's arm/v7 entry (base)" \
    rc_and_out 0 "$R/polysandbox-test/base:multi $BASE"
cli $P5 -o core.image_platform=linux/arm/v6 image pull "$R/polysandbox-test/base:multi"
other=$(cut -d" " -f2 "$tmp/out")
check "[core] image_platform = linux/arm/v6: its entry, another image (no etc/hello.txt)" \
    eval 'is_rc 0 && [ "$other" != "$BASE" ] && [ -e "$tmp/images5/roots/${other#sha256:}/unique.txt" ] &&
          [ ! -e "$tmp/images5/roots/${other#sha256:}/etc/hello.txt" ]'
cli $P5 image pull --platform linux/s390x "$R/polysandbox-test/base:multi"
check "a platform the index lacks: 2, listing the ones it has" \
    rc_and_err 2 "has no linux/s390x image (it has: linux/arm64, linux/amd64, windows/amd64, linux/arm/v6, linux/arm/v7)"

# a single-platform image (no index): its config's platform must be ours
P6="-o core.image_dir=$tmp/images6"
cli $P6 image pull "$R/polysandbox-test/arm64:v1"
check "a linux/arm64-only image on linux/amd64: 2, naming both and --platform" \
    eval 'rc_and_err 2 "is a linux/arm64 image only, not linux/amd64; ask for it with --platform linux/arm64" &&
          [ -z "$(ls "$tmp/images6/roots" 2>/dev/null)" ]'
cli $P6 image pull --platform linux/arm64 "$R/polysandbox-test/arm64:v1"
check "... and pulled when that platform is asked for" \
    eval 'is_rc 0 && grep -q "^$R/polysandbox-test/arm64:v1 sha256:" "$tmp/out"'

# ---- hostile content ----
blobdir=$tmp/reg/storage/docker/registry/v2/blobs/sha256
layer=$(curl -sf -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' \
    "http://$R/v2/polysandbox-test/tamper/manifests/v1" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["layers"][0]["digest"][7:])')
data=$blobdir/$(echo "$layer" | cut -c1-2)/$layer/data
# Same size, one byte changed, so only the digest can tell.
python3 -c 'import sys; p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[-1] ^= 1; open(p, "wb").write(b)' "$data"
cli image pull "$R/polysandbox-test/tamper:v1"
check "a blob changed on the registry's disk is refused (65), naming its digest" \
    eval 'rc_and_err 65 "sha256:$layer does not match its digest"'
check "and nothing of it is kept (no blob, no root, no reference)" \
    eval '[ ! -e "$store/blobs/sha256/$layer" ] && ! ls "$store/roots" | grep -qv "^${BASE#sha256:}$" &&
          ! "$PS" image list | grep -q tamper'
cli image pull "$R/polysandbox-test/dotdot:v1"
check "a layer entry '../escape.txt' is refused (3), naming it" \
    rc_and_err 3 "'../escape.txt' is absolute or holds '..'"
check "nothing escaped and no root was left" \
    eval '[ -z "$(find "$tmp" -name escape.txt)" ] && [ "$(ls "$store/roots" | wc -l)" -eq 1 ]'
cli image pull "$R/polysandbox-test/abslink:v1"
check "a file written through a link to an absolute directory is refused (3)" \
    eval 'is_rc 3 && err_has "out/pwned.txt" && [ ! -e "$OUTSIDE/pwned.txt" ]'
cli image pull "$R/polysandbox-test/hardout:v1"
check "a hard link through that link to a file outside is refused, nothing linked" \
    eval '! is_rc 0 && [ "$(stat -c %h "$OUTSIDE/secret")" -eq 1 ]'

# ---- token authentication ----
code=$(curl -s -o /dev/null -w '%{http_code}' "http://$T/v2/polysandbox-test/base/manifests/v1")
check "the token registry refuses a request without a token (401)" [ "$code" = 401 ]
cli image pull "$T/polysandbox-test/base:v1"
check "pull through the registry's token service (Bearer from WWW-Authenticate)" \
    eval 'rc_and_out 0 "$T/polysandbox-test/base:v1 $BASE" &&
          grep -q "^repository:polysandbox-test/base:pull$" "$tmp/tokens"'

# ---- basic authentication: [registry HOST] with a sealed password ----
B=127.0.0.1:$REGISTRY_basic_PORT
cli image pull "$B/polysandbox-test/base:v1"
check "a registry asking for a user name and password, none given: 125, saying where to" \
    rc_and_err 125 "give them as username and password in [registry $B] of polysandbox.ini"
conf=$tmp/conf
mkdir -p "$conf"
cp "$top_srcdir/tests/config/polysandbox.ini" "$conf/"
"$PS" --config-dir "$conf" secret init >/dev/null 2>"$tmp/seal.err"
sealed=$(printf 'pw-%s' $$ | "$PS" --config-dir "$conf" secret seal 2>>"$tmp/seal.err")
wrong=$(printf 'wrong-%s' $$ | "$PS" --config-dir "$conf" secret seal 2>>"$tmp/seal.err")
printf '[registry %s]\nusername = someone\npassword = %s\n' "$B" "$sealed" >>"$conf/polysandbox.ini"
printf '[registry %s]\nusername = someone\npassword = %s\n' "$T" "$sealed" >>"$conf/polysandbox.ini"
cli --config-dir "$conf" -o core.image_dir="$tmp/images4" image pull "$B/polysandbox-test/base:v1"
check "[registry HOST] username and a sealed password: pulled with Basic authentication" \
    rc_and_out 0 "$B/polysandbox-test/base:v1 $BASE" || cat "$tmp/err" "$tmp/seal.err" >&2
cli --config-dir "$conf" -o core.image_dir="$tmp/images4" image pull "$T/polysandbox-test/base:v1"
check "a token registry with [registry HOST]: the token asked for with that user and password" \
    eval 'rc_and_out 0 "$T/polysandbox-test/base:v1 $BASE" &&
          [ "$(tail -n1 "$tmp/token-auth")" = "someone:pw-$$" ]'
cli --config-dir "$conf" secret check --json
check "secret check opens both registries' sealed passwords" json_check \
    'j["ok"] and sorted((c["provider"], c["key"], c["source"]) for c in j["credentials"]) == sorted([("registry '"$B"'", "password", "sealed"), ("registry '"$T"'", "password", "sealed")])'
sed -i "s|^password = $sealed\$|password = $wrong|" "$conf/polysandbox.ini"
cli --config-dir "$conf" -o core.image_dir="$tmp/images4" image pull "$B/polysandbox-test/base:v1"
check "a wrong password: 125, refused, naming the file and line, never the password" \
    eval 'rc_and_err 125 "refused the user name and password of [registry $B] ($conf/polysandbox.ini:" &&
          ! grep -q -e "pw-$$" -e "wrong-$$" "$tmp/err"'
sed -i "s|^password = $wrong\$|password = env:PS_TEST_UNSET_$$|" "$conf/polysandbox.ini"
cli --config-dir "$conf" -o core.image_dir="$tmp/images4" image pull "$B/polysandbox-test/base:v1"
check "a password env:NAME of a variable not set: an error naming it and the file" \
    eval '! is_rc 0 && err_has "PS_TEST_UNSET_$$ is not set" && err_has "$conf/polysandbox.ini:"'
cli --config-dir "$conf" secret check
check "and secret check says it cannot be opened, naming the registry" \
    eval '! is_rc 0 && out_has "FAILED   registry $B.password (env)"'

# ---- -o registry.HOST.KEY: the host has dots, the key is after the last ----
export PS_TEST_PW="pw-$$"
cli -o "registry.$B.username=someone" -o "registry.$B.password=env:PS_TEST_PW" \
    -o core.image_dir="$tmp/images5" image pull "$B/polysandbox-test/base:v1"
check "-o registry.HOST.username and .password (HOST 127.0.0.1:PORT): pulled with them" \
    rc_and_out 0 "$B/polysandbox-test/base:v1 $BASE" || cat "$tmp/err" >&2
cli -o "registry.$B.pasword=env:PS_TEST_PW" image pull "$B/polysandbox-test/base:v1"
check "-o registry.HOST.KEY of an unknown key: 125, naming it, the host and the command line" \
    rc_and_err 125 "command line: unknown key 'pasword' in [registry $B]"

# ---- bad references and absent images ----
cli image pull "$R/Bad/Name"
check "a malformed reference: usage error (2), naming it and the rule" \
    eval 'rc_and_err 2 "Bad/Name" && err_has "lower-case"'
cli image pull "$R/polysandbox-test/absent:v1"
check "an image the registry does not have: 2, with the registry's words" \
    eval 'rc_and_err 2 "absent:v1" && err_has "manifest unknown"'
cli image pull "127.0.0.1:1/polysandbox-test/base:v1"
check "a registry that is not there: 125, naming it" \
    rc_and_err 125 "127.0.0.1:1"

# ---- [core] image_dir ----
cli -o core.image_dir="$tmp/images2" image pull "$R/polysandbox-test/base:v1"
check "-o core.image_dir: the image is kept there" \
    eval 'is_rc 0 && [ "$(cat "$tmp/images2/roots/${BASE#sha256:}/etc/hello.txt")" = "hello from layer 1" ] &&
          [ "$(POLYSANDBOX_IMAGE_DIR="$tmp/images2" "$PS" image list | cut -d" " -f1)" = "$R/polysandbox-test/base:v1" ]'
cli -o core.image_dir=relative image list
check "a relative image_dir is a configuration error naming the key" \
    eval '[ "$rc" -ne 0 ] && err_has "image_dir '"'"'relative'"'"' must be an absolute directory"'

# ---- two pulls of one image at once ----
for i in 1 2; do
    POLYSANDBOX_IMAGE_DIR="$tmp/images3" "$PS" image pull -q "$R/polysandbox-test/base:multi" \
        >"$tmp/c$i.out" 2>"$tmp/c$i.err" &
    eval "cpid$i=\$!"
done
wait "$cpid1"; c1=$?
wait "$cpid2"; c2=$?
check "two processes pulling one image at once: both succeed, one whole root, no temporary left" \
    eval '[ "$c1" -eq 0 ] && [ "$c2" -eq 0 ] &&
          [ "$(cat "$tmp/images3/roots/${BASE#sha256:}/opq/new")" = new ] &&
          [ -z "$(find "$tmp/images3" -name "*.tmp-*")" ]' || cat "$tmp"/c?.err >&2

# ---- rm ----
cli image rm "$R/polysandbox-test/base:v1"
check "rm of one of three references to an image keeps its root" \
    eval 'is_rc 0 && [ -d "$root" ] && ! "$PS" image list | grep -q -F "$R/polysandbox-test/base:v1 "'
cli image rm "$R/polysandbox-test/base:multi" "$T/polysandbox-test/base:v1"
# (The refused pulls above keep their verified blobs, as a failed pull does.)
check "rm of the last references removes the root and every blob of the image" \
    eval 'is_rc 0 && [ ! -e "$root" ] && [ -n "$base_blobs" ] &&
          ! (cd "$store/blobs/sha256" && ls $base_blobs 2>/dev/null | grep -q .) &&
          [ -z "$("$PS" image list)" ]'
cli image rm "$R/polysandbox-test/base:v1"
check "rm of a reference never pulled: 2, naming it" \
    rc_and_err 2 "was never pulled"
done_testing
