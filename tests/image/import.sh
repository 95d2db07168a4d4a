#!/bin/sh
# tests/image/import.sh - polysandbox image import and prune: a tarball
# written by `docker save` of two tiny images (when a Docker daemon
# answers or can be started), whole and, piped in, one of them by NAME;
# tarballs made by tests/image/mksave.py in both
# forms (docker save's manifest.json with a linked layer and a whiteout;
# an OCI layout, gzip layers, piped through gzip too, and one naming an
# image index); several images in one tarball in both forms (all, one by
# NAME, none named so, one without a name, a name given twice), read from
# standard input too; a tampered layer,
# a member "../escape.txt", a layer holding "../escape.txt"; prune after
# a refused import and a killed one, and prune while an import is half
# way (it must wait for it: the store's lock).  A FIFO feeds the tarball,
# so that the import is stopped at a known point without any sleep.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/docker/lib.sh"
. "$top_srcdir/tests/image/lib.sh"

image_require "image import"
command -v python3 >/dev/null 2>&1 || image_unready "image import" "no python3"
export POLYSANDBOX_STATE_DIR="$tmp/state"
store=$tmp/state/images
TAG=polysandbox-test/import-tiny:$$
TAG2=polysandbox-test/import-other:$$
docker_tagged=
import_pid=
cleanup() {
    [ -n "$import_pid" ] && kill "$import_pid" 2>/dev/null
    [ -n "$docker_tagged" ] && "$DOCKER" rmi "$TAG" "$TAG2" >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT

plan 37
for k in rootfs rootfs2 save oci ociindex ociplat multisave multioci ocinoname ocidup tamper dotdot \
    layerdotdot savearm64 ociarm64; do
    set -- "$@" "$k" "$tmp/$k.tar"
done
python3 "$top_srcdir/tests/image/mksave.py" "$@" >"$tmp/digests" ||
    { echo "Bail out! tests/image/mksave.py failed"; exit 1; }
OCI=$(sed -n 's/^oci //p' "$tmp/digests")
OCIB=$(sed -n 's/^multioci //p' "$tmp/digests" | cut -d" " -f2)
PLATA=$(sed -n 's/^ociplat //p' "$tmp/digests" | cut -d" " -f1)
PLATB=$(sed -n 's/^ociplat //p' "$tmp/digests" | cut -d" " -f2)

# ---- docker save of two tiny images ----
if docker_start_daemon >"$tmp/docker.log" 2>&1; then
    "$DOCKER" import "$tmp/rootfs.tar" "$TAG" >/dev/null 2>"$tmp/docker.err" &&
        "$DOCKER" import "$tmp/rootfs2.tar" "$TAG2" >/dev/null 2>>"$tmp/docker.err" &&
        docker_tagged=1
    "$DOCKER" save -o "$tmp/docker.tar" "$TAG" "$TAG2" 2>>"$tmp/docker.err"
    cli image import "$tmp/docker.tar"
    check "a docker save tarball of two images: both imported, each under its tag" \
        eval 'is_rc 0 && [ "$(wc -l <"$tmp/out")" -eq 2 ] &&
              out_has "docker.io/$TAG sha256:" && out_has "docker.io/$TAG2 sha256:" &&
              [ "$("$PS" image list | grep -c -F -e "docker.io/$TAG " -e "docker.io/$TAG2 ")" -eq 2 ]' ||
        cat "$tmp/err" "$tmp/docker.err" >&2
    droot=$("$PS" image list | grep -F "docker.io/$TAG " | cut -d" " -f3)
    droot2=$("$PS" image list | grep -F "docker.io/$TAG2 " | cut -d" " -f3)
    check "each root holds its own image's file" \
        eval '[ "$(cat "$droot/hello.txt")" = "hello from docker save" ] &&
              [ "$(cat "$droot2/other.txt")" = "the second docker image" ] &&
              [ ! -e "$droot/other.txt" ] && [ ! -e "$droot2/hello.txt" ]'
    "$DOCKER" save "$TAG" "$TAG2" 2>>"$tmp/docker.err" |
        "$PS" -o core.image_dir="$tmp/picked" image import - "$TAG2" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    check "docker save piped into import - NAME: only the image of that name" \
        eval 'is_rc 0 && [ "$(cut -d" " -f1 "$tmp/out")" = "docker.io/$TAG2" ] &&
              [ "$(ls "$tmp/picked/roots")" = "$(basename "$droot2")" ]' || cat "$tmp/err" >&2
    cli image rm "docker.io/$TAG" "docker.io/$TAG2"
else
    sed 's/^/# /' "$tmp/docker.log"
    ok "a docker save tarball of two images # SKIP no Docker daemon: $(tail -n1 "$tmp/docker.log")"
    ok "each root # SKIP no Docker daemon"
    ok "docker save piped into import - NAME # SKIP no Docker daemon"
fi

# ---- docker save's form, made here ----
cli image import "$tmp/save.tar"
check "docker save form: imported under its RepoTags, printing reference and digest" \
    eval 'is_rc 0 && grep -q "^docker.io/polysandbox-test/saved:v1 sha256:[0-9a-f]\{64\}$" "$tmp/out"'
SAVED=$(cut -d" " -f2 "$tmp/out")
sroot=$store/roots/${SAVED#sha256:}
check "both layers unpacked (the second through docker save's link), its whiteout applied" \
    eval '[ "$(cat "$sroot/etc/hello.txt")" = "hello from a saved image" ] &&
          [ "$(cat "$sroot/etc/layer2.txt")" = "from layer 2" ] && [ -d "$sroot/data" ] &&
          [ ! -e "$sroot/data/gone" ] && [ -z "$(find "$sroot" -name ".wh.*")" ]'
check "every blob it stored matches its digest; no temporary is left" eval '
    for f in "$store"/blobs/sha256/*; do
        [ "$(sha256sum "$f" | cut -d" " -f1)" = "${f##*/}" ] || exit 1; done
    [ -z "$(find "$store" -name "*.tmp-*")" ]'
cli image import "$tmp/save.tar" team/renamed:v2
check "with NAME: recorded as that name, the same image" \
    rc_and_out 0 "docker.io/team/renamed:v2 $SAVED"

# ---- an OCI layout, gzip'd as a whole, on standard input ----
gzip "$tmp/oci.tar"
cat "$tmp/oci.tar.gz" | "$PS" image import - >"$tmp/out" 2>"$tmp/err"
rc=$?
check "OCI layout (gzip layers, gzip'd, piped in as -): its manifest digest, its annotated name" \
    rc_and_out 0 "docker.io/polysandbox-test/oci:v1 $OCI"
if [ "$(uname -m)" = x86_64 ]; then
    cli image import "$tmp/ociindex.tar" team/multi:v1
    check "an OCI layout naming an image index: its linux/amd64 entry, the same image" \
        rc_and_out 0 "docker.io/team/multi:v1 $OCI"
    cli image rm team/multi:v1
else
    ok "an OCI layout naming an image index # SKIP its image is linux/amd64"
fi
cli image list --json
check "image list shows the imported references with their roots" json_check \
    '[i["ref"] for i in j] == ["docker.io/polysandbox-test/oci:v1", "docker.io/polysandbox-test/saved:v1", "docker.io/team/renamed:v2"] and j[0]["root"].endswith("'"${OCI#sha256:}"'")'

# ---- an image of another platform than the one wanted (a store of its own) ----
P="-o core.image_dir=$tmp/plat"
for k in savearm64 ociarm64; do
    cli $P image import "$tmp/$k.tar" team/$k:v1
    check "$k: a linux/arm64 image only, on linux/amd64: 2, naming both and --platform" \
        rc_and_err 2 "is a linux/arm64 image only, not linux/amd64; ask for it with --platform linux/arm64"
done
check "... before storing anything" eval '[ -z "$(ls "$tmp/plat/roots" 2>/dev/null)" ]'
cli $P image import --platform linux/arm64 "$tmp/ociarm64.tar" team/ociarm64:v1
check "... and taken when that platform is asked for" \
    eval 'is_rc 0 && "$PS" $P image list | grep -q "team/ociarm64:v1"'

blobs_before=$(ls "$store/blobs/sha256" | sort)

# ---- hostile tarballs ----
cli image import "$tmp/tamper.tar" team/tamper:v1
check "a layer changed after its diff_id was written is refused (65), naming it" \
    eval 'rc_and_err 65 "does not match its digest" && err_has "layer.tar"'
cli image import "$tmp/dotdot.tar" team/dotdot:v1
check "a tarball member '../escape.txt' is refused (3), naming it" \
    rc_and_err 3 "the member '../escape.txt' is absolute or holds '..'"
check "neither stored anything: the same blobs, no reference, nothing escaped" \
    eval '[ "$(ls "$store/blobs/sha256" | sort)" = "$blobs_before" ] &&
          ! "$PS" image list | grep -q -e tamper -e dotdot &&
          [ -z "$(find "$tmp" -name escape.txt)" ]'
cli image import "$tmp/layerdotdot.tar" team/layerdotdot:v1
check "a layer entry '../escape.txt' is refused (3) by the layer code pull uses" \
    eval 'rc_and_err 3 "layer 1" && err_has "'"'../escape.txt'"' is absolute or holds" &&
          [ -z "$(find "$tmp" -name escape.txt)" ]'
cli image import "$tmp/absent.tar"
check "a FILE that is not there: 2, naming it" rc_and_err 2 "absent.tar"
cat "$tmp/tamper.tar" | "$PS" image import - team/tamper:v1 >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a tampered tarball piped in: 65, naming standard input; no temporary left" \
    eval 'rc_and_err 65 "import '"'standard input'"'" && err_has "does not match its digest" &&
          [ -z "$(find "$store" -name "*.tmp-*")" ]'

# ---- prune ----
# An import stopped half way: the FIFO gives it the first layer's header
# and part of its data, then nothing until written again.
half_import() {
    rm -f "$tmp/fifo" && mkfifo "$tmp/fifo"
    "$PS" image import "$tmp/fifo" "$1" >"$tmp/bg.out" 2>"$tmp/bg.err" &
    import_pid=$!
    exec 3>"$tmp/fifo"
    head -c 2048 "$tmp/save.tar" >&3
    i=0     # bounds a hang only
    while [ -z "$(find "$store/blobs/sha256" -name "import.tmp-*")" ] && [ $i -lt 1200 ]; do
        sleep 0.05
        i=$((i + 1))
    done
}
half_import team/killed:v1
kill -9 "$import_pid"; wait "$import_pid" 2>/dev/null; import_pid=
exec 3>&-
check "an import killed half way leaves its temporary" \
    eval '[ -n "$(find "$store/blobs/sha256" -name "import.tmp-*")" ]'
cli image rm polysandbox-test/saved:v1 team/renamed:v2
cli image prune
# Left: the refused layerdotdot import's verified blobs (config, two
# layers, its manifest) and the killed import's temporary.
check "prune frees what no reference needs and says so" \
    eval 'is_rc 0 && grep -q "^freed 4 blobs and 0 roots, [1-9][0-9]* bytes$" "$tmp/out" &&
          [ -z "$(find "$store" -name "*.tmp-*")" ]' || cat "$tmp/out" "$tmp/err" >&2
check "and keeps every blob and the root of the listed image" eval '
    [ "$(ls "$store/blobs/sha256" | wc -l)" -eq 4 ] &&
    [ -d "$store/roots/${OCI#sha256:}/etc" ] && [ "$(ls "$store/roots")" = "${OCI#sha256:}" ] &&
    "$PS" image prune -q && [ "$(ls "$store/blobs/sha256" | wc -l)" -eq 4 ]'

# A prune started while an import holds the store waits for it: the
# import's temporaries (swept by prune otherwise) become its blobs.
half_import team/during:v1
"$PS" image prune >"$tmp/prune.out" 2>"$tmp/prune.err" &
prune_pid=$!
tail -c +2049 "$tmp/save.tar" >&3
exec 3>&-
wait "$import_pid"; irc=$?; import_pid=
wait "$prune_pid"; prc=$?
check "prune during an import: both succeed, the imported image whole" \
    eval '[ "$irc" -eq 0 ] && [ "$prc" -eq 0 ] &&
          "$PS" image list | grep -q "^docker.io/team/during:v1 $SAVED " &&
          [ "$(cat "$store/roots/${SAVED#sha256:}/etc/hello.txt")" = "hello from a saved image" ] &&
          [ "$(ls "$store/blobs/sha256" | wc -l)" -eq 8 ]' ||
    cat "$tmp/bg.err" "$tmp/prune.out" "$tmp/prune.err" >&2

# ---- several images in one tarball (a store of their own) ----
multi=$tmp/multi
mcli() { cli -o core.image_dir="$multi" "$@"; }
mcli image import "$tmp/multisave.tar"
check "docker save form of two images, three tags: every tag imported, two images" \
    eval 'is_rc 0 && [ "$(cut -d" " -f1 "$tmp/out" | tr "\n" " ")" = "docker.io/polysandbox-test/saved:v1 docker.io/polysandbox-test/saved:v2 docker.io/polysandbox-test/other:v1 " ] &&
          [ "$(cut -d" " -f2 "$tmp/out" | sort -u | wc -l)" -eq 2 ] && [ "$(ls "$multi/roots" | wc -l)" -eq 2 ]' ||
    cat "$tmp/out" "$tmp/err" >&2
oroot=$(grep "^docker.io/polysandbox-test/other:v1 " "$tmp/out" | cut -d" " -f2)
oroot=$multi/roots/${oroot#sha256:}
check "the other image: its shared first layer and its own, not the first image's second" \
    eval '[ "$(cat "$oroot/etc/other.txt")" = "from the other image" ] &&
          [ "$(cat "$oroot/etc/hello.txt")" = "hello from a saved image" ] &&
          [ -e "$oroot/data/gone" ] && [ ! -e "$oroot/etc/layer2.txt" ]'
rm -rf "$multi"
cli_in "$tmp/multioci.tar" -o core.image_dir="$multi" image import - polysandbox-test/ocib:v1
check "OCI layout of several, NAME given, from standard input: only the image so named" \
    eval 'rc_and_out 0 "docker.io/polysandbox-test/ocib:v1 $OCIB" &&
          [ "$(ls "$multi/roots")" = "${OCIB#sha256:}" ]'
mcli image import "$tmp/multioci.tar"
check "OCI layout, three entries naming two manifests: three references, two roots" \
    eval 'is_rc 0 && [ "$(sort "$tmp/out" | tr "\n" " ")" = "docker.io/polysandbox-test/oci:latest $OCI docker.io/polysandbox-test/oci:v1 $OCI docker.io/polysandbox-test/ocib:v1 $OCIB " ] &&
          [ "$(ls "$multi/roots" | wc -l)" -eq 2 ]' || cat "$tmp/out" "$tmp/err" >&2
mcli image import "$tmp/multisave.tar" team/absent:v1
check "NAME naming none of several images: 2, listing their names, nothing recorded" \
    eval 'rc_and_err 2 "holds 2 images, none named '"'docker.io/team/absent:v1'"'" &&
          err_has "docker.io/polysandbox-test/saved:v1, docker.io/polysandbox-test/saved:v2, docker.io/polysandbox-test/other:v1" &&
          ! "$PS" -o core.image_dir="$multi" image list | grep -q -e absent -e saved'
mcli image import "$tmp/ocinoname.tar"
check "several images, one without a name, no NAME: 2, naming its entry and the others" \
    eval 'rc_and_err 2 "entry 3 has no name" && err_has "docker.io/polysandbox-test/oci:latest"'
mcli image import "$tmp/ocidup.tar"
check "one name given to two images: refused (65), naming both entries" \
    rc_and_err 65 "'docker.io/polysandbox-test/oci:v1' names two images (entries 1 and 3)"

# ---- the platform of a multi-platform image (a store of its own) ----
plat=$tmp/plat
pcli() { cli -o core.image_dir="$plat" "$@"; }
pcli image import --platform linux/arm/v7 "$tmp/ociplat.tar"
check "--platform linux/arm/v7: the index's arm/v7 entry, its own root"     eval 'rc_and_out 0 "docker.io/polysandbox-test/plat:v1 $PLATB" &&
          [ "$(cat "$plat/roots/${PLATB#sha256:}/etc/other.txt")" = "from the other image" ]'
pcli image import "$tmp/ociplat.tar" team/plat:arm --platform=linux/aarch64
check "--platform after the FILE, linux/aarch64: the arm64/v8 entry (names normalised)"     rc_and_out 0 "docker.io/team/plat:arm $PLATB"
pcli -o core.image_platform=linux/amd64 image import "$tmp/ociplat.tar" team/plat:amd
check "-o core.image_platform=linux/amd64: the amd64 entry"     rc_and_out 0 "docker.io/team/plat:amd $PLATA"
pcli -o core.image_platform=linux/amd64 image import --platform linux/arm "$tmp/ociplat.tar" \
    team/plat:armv7
check "--platform wins over [core] image_platform; linux/arm is linux/arm/v7" \
    rc_and_out 0 "docker.io/team/plat:armv7 $PLATB"
pcli image import --platform linux/s390x "$tmp/ociplat.tar" team/plat:none
check "a platform the index lacks: 2, listing the platforms it has (no attestation)" \
    eval 'rc_and_err 2 "has no linux/s390x image (it has: linux/amd64, linux/arm/v7, linux/arm64/v8)" &&
          ! err_has unknown && ! "$PS" -o core.image_dir="$plat" image list | grep -q ":none "'
pcli image import --platform linux "$tmp/ociplat.tar"
check "a malformed --platform: 125, naming it and the form" \
    eval 'rc_and_err 125 "bad value '"'linux'"' for image_platform" && err_has "OS/ARCH[/VARIANT]"'
done_testing
