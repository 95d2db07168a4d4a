#!/bin/sh
# tests/image/run.sh - the local provider runs in a pulled image's root:
# `run --image NAME` and a template's image.local, with the image's files
# and not the host's; an image never pulled is refused (2), naming it and
# saying how to pull it; `templates` says whether it is pulled.  The image
# (tests/image/push.py rootfs) holds the static tests/image/imgcat, an
# /etc/os-release and a marker; it is pushed to Debian's docker-registry
# on loopback (tests/docker/registry.sh).
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/image/lib.sh"

unready() { image_unready "image run" "$@"; }
image_require "image run"
command -v docker-registry >/dev/null 2>&1 ||
    unready "no docker-registry (apt-get install docker-registry)"
command -v curl >/dev/null 2>&1 || unready "no curl"
[ "$(uname -m)" = x86_64 ] || { echo "1..0 # SKIP image run: the test images are amd64"; exit 0; }
image_test_setup

plan 10

image_test_root
check "the test image (a static program, os-release, a marker) pulled" is_rc 0

# ---- run --image NAME ----
cli run -t 30s --image "$R/polysandbox-test/root:v1" -- /bin/imgcat /marker /etc/os-release \
    /usr/bin/env
check "run --image NAME on local: the image's marker and os-release, not the host's /usr" \
    eval 'is_rc 0 && out_has "$marker" && out_has "ID=polysandbox-test" &&
          out_has "absent /usr/bin/env" && ! out_has "ID=debian"' || cat "$tmp/err" >&2
cli run -t 30s --image "$R/polysandbox-test/root@$(cat "$tmp/digests")" -- /bin/imgcat /marker
check "run --image NAME@DIGEST of the image pulled by its tag: the same root" \
    rc_and_out 0 "$marker"

# ---- an image never pulled ----
cli run -t 30s --image "$R/polysandbox-test/never:v1" -- /bin/imgcat /marker
check "run --image of an image never pulled: 2, naming it and 'polysandbox image pull NAME'" \
    eval 'rc_and_err 2 "--image $R/polysandbox-test/never:v1" &&
          err_has "polysandbox image pull $R/polysandbox-test/never:v1" && ! out_has "$marker"'
cli create --image "$R/polysandbox-test/never:v1"
check "create --image of an image never pulled: refused the same (2), no sandbox" \
    eval 'rc_and_err 2 "is not pulled" && [ ! -s "$tmp/out" ]'
cli run -t 30s --image "$R/Bad/Name" -- /bin/imgcat /marker
check "run --image with a malformed name: 2, naming it" rc_and_err 2 "Bad/Name"

# ---- a template's image.local ----
conf="$tmp/conf"
mkdir -p "$conf/templates.d" "$conf/providers.d"
cp "$top_srcdir/tests/config/polysandbox.ini" "$conf/"
cp "$top_srcdir/tests/config/providers.d/local.ini" "$conf/providers.d/"
cat >"$conf/templates.d/imgcat.ini" <<INI
[template]
extensions = .imgcat
run = /bin/imgcat /marker main.imgcat
image.local = $R/polysandbox-test/root:v1
image.docker = debian:12-slim
INI
sed "s|root:v1|never:v1|" "$conf/templates.d/imgcat.ini" >"$conf/templates.d/imgnever.ini"
sed -i "s|^extensions = .imgcat|extensions = .imgnever|" "$conf/templates.d/imgnever.ini"
echo "from the file" >"$tmp/x.imgcat"
cli --config-dir "$conf" run -t 30s "$tmp/x.imgcat"
check "a template's image.local: its run command runs in the pulled image, with the file" \
    eval 'is_rc 0 && out_has "$marker" && out_has "from the file"' || cat "$tmp/err" >&2
cli --config-dir "$conf" templates --json
check "templates: image.local pulled is usable, one never pulled is not and says pull it" \
    json_check '{t["name"]: t["providers"]["local"]["usable"] for t in j if t["name"].startswith("img")} == {"imgcat": True, "imgnever": False} and [t["providers"]["local"]["reason"] for t in j if t["name"] == "imgnever"][0].endswith("run polysandbox image pull '"$R"'/polysandbox-test/never:v1")'
printf '[template]\nextensions = .bad\nrun = true\nimage.Local = x\n' >"$conf/templates.d/bad.ini"
cli --config-dir "$conf" templates
check "a bad image.PROVIDER key: a configuration error naming the file and the key" \
    eval '! is_rc 0 && err_has "bad.ini:4" && err_has "image.Local"'
rm "$conf/templates.d/bad.ini"
echo "x" >"$tmp/x.imgnever"
cli --config-dir "$conf" run -t 30s "$tmp/x.imgnever"
check "run FILE of a template whose image.local is not pulled: 2, saying how to pull it" \
    rc_and_err 2 "polysandbox image pull $R/polysandbox-test/never:v1"
done_testing
