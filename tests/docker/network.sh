#!/bin/sh
# tests/docker/network.sh - a template's network on the docker provider:
# network = egress is the daemon's default bridge (an interface beside
# lo), none is no network at all, and a run asking egress of a template
# without it is refused.  Nothing is connected to: the bridge's far side
# is no loopback address.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/docker/lib.sh"
docker_ready; r=$?
[ "$r" -eq 77 ] && exit 0   # the skip was printed as TAP
[ "$r" -eq 0 ] || exit "$r"
D=/usr/bin/docker
[ -x "$D" ] || D=docker
plan 4

conf="$tmp/conf"
mkdir -p "$conf/templates.d"
cp -r "$top_srcdir/tests/config/polysandbox.ini" "$top_srcdir/tests/config/providers.d" "$conf/"
cp "$top_srcdir/etc/templates.d/python.ini" "$conf/templates.d/"
sed -e 's/^extensions.*/extensions = .pynet\nnetwork = egress/' \
    "$top_srcdir/etc/templates.d/python.ini" >"$conf/templates.d/pynet.ini"
PS_CONF="--config-dir $conf"
ifaces="import os; print(' '.join(sorted(os.listdir('/sys/class/net'))))"

cli $PS_CONF create --provider docker --template pynet --label run=$$
id=$(out)
check "network = egress: the container is on the default bridge" sh -c \
    "$D inspect -f '{{.HostConfig.NetworkMode}}' '$id' | grep -qx bridge"
cli $PS_CONF exec --provider docker "$id" -- python3 -c "$ifaces"
check "network = egress: an interface beside lo" eval 'is_rc 0 && out_has eth0'
cli $PS_CONF destroy --provider docker "$id"

cli $PS_CONF run --provider docker --template python -- python3 -c "$ifaces"
check "network none: lo alone" rc_and_out 0 lo

cli $PS_CONF run --provider docker --template python --network egress -- true
check "--network egress of a template without it: refused" eval \
    '! is_rc 0 && err_has "cannot widen"'

done_testing
