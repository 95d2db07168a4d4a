#!/bin/sh
# tests/hostile/locald-serves.sh - what polysandbox-locald serves besides
# the skeleton root with network none (TAP)
#
# Its prepared sandboxes are keyed by limits, network and root: an image
# root (a template's or --image's directory, as the daemon saw it when it
# read its top level) and network = host (where the settings allow it,
# in the client's own network namespace) are served too.  Each case is
# checked to have gone through the daemon (its debug line, never a silent
# fallback) and to answer as the same run in-process; an image whose top
# level changed gets a sandbox with the new one; a client in another
# network namespace runs network = host in-process; an unprivileged
# caller runs in-process (no daemon is started for it).  Needs root.

: "${top_srcdir:?top_srcdir is not set (run through make check)}"
. "$top_srcdir/tests/hostile/lib.sh"

if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP the daemon serves root only"; exit 0; fi
DAEMON_BIN="$top_builddir/plugins/local/polysandbox-locald"
hostile_need locald-serves "$DAEMON_BIN"
POLYSANDBOX_LOCALD_IDLE=30 # it is ended at the end
locald_on
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-locald-serves.XXXXXX") || exit 99
cfg="$tmp/config"
cleanup() {
    for p in $(daemons); do kill -TERM "$p" 2>/dev/null; done
    rm -rf "$tmp" "$POLYSANDBOX_STATE_DIR"
}
trap cleanup EXIT

# Our configuration, with network = host permitted.
mkdir -p "$cfg" && cp -R "$POLYSANDBOX_CONFIG_DIR"/. "$cfg/" || exit 99
printf '\n[settings]\nnetwork = allow-host\n' >>"$cfg/providers.d/local.ini"
POLYSANDBOX_CONFIG_DIR=$cfg
export POLYSANDBOX_CONFIG_DIR

# An image: the host's /bin/sh and its libraries, and a marker.
rootfs="$tmp/rootfs"
mkdir -p "$rootfs/bin" "$rootfs/etc" && cp /bin/sh "$rootfs/bin/sh" &&
    echo "image-one" >"$rootfs/etc/marker" &&
    for lib in $(ldd /bin/sh 2>/dev/null | grep -o '/[^ ]*'); do
        mkdir -p "$rootfs$(dirname "$lib")" && cp "$lib" "$rootfs$lib" || break
    done
chmod -R a+rX "$tmp"

echo "1..7"

# both NAME OPTIONS... -- COMMAND...: the run with the daemon ($tmp/NAME.auto.*)
# and in-process ($tmp/NAME.off.*); what each answered in $tmp/NAME.MODE.txt.
both() {
    name=$1; shift
    for mode in off auto; do
        # shellcheck disable=SC2086 # SANENV is a word list
        POLYSANDBOX_LOG=debug POLYSANDBOX_LOCAL_DAEMON=$mode "$PS" run --json $SANENV "$@" \
            </dev/null >"$tmp/$name.$mode.json" 2>"$tmp/$name.$mode.err"
        python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(j.get("status"), j.get("exit_code"), j.get("signal"), repr(j.get("stdout")), repr(j.get("stderr")))' \
            "$tmp/$name.$mode.json" >"$tmp/$name.$mode.txt" 2>&1
    done
}
served() { grep -q "a sandbox polysandbox-locald prepared" "$tmp/$1.auto.err" &&
    ! grep -q "a sandbox polysandbox-locald prepared" "$tmp/$1.off.err"; }
same() { cmp -s "$tmp/$1.auto.txt" "$tmp/$1.off.txt"; }
says() { echo "auto: $(cat "$tmp/$1.auto.txt") $(tail -c 300 "$tmp/$1.auto.err")"; echo "off: $(cat "$tmp/$1.off.txt")"; }

view='read m </etc/marker; echo "$m"; ls /; test -e /usr/bin/python3 && echo host-usr; echo >/etc/x 2>/dev/null || echo ro; echo >/work/x && echo >/tmp/x && echo rw; id -u; wc -l </proc/self/mountinfo'
both image -t 10s --image "$rootfs" -- /bin/sh -c "$view"
if served image && same image && grep -q "image-one" "$tmp/image.auto.txt"; then
    ok "an image root goes through the daemon and answers as in-process"
else not_ok "an image root through the daemon" "$(says image)"; fi

# A new top-level entry of the image: the daemon's sandbox shows it too.
mkdir "$rootfs/newdir" && chmod a+rx "$rootfs/newdir"
both image2 -t 10s --image "$rootfs" -- /bin/sh -c 'cd / && echo *'
if served image2 && same image2 && grep -q newdir "$tmp/image2.auto.txt"; then
    ok "an image whose top level changed: the daemon's sandbox shows the new one"
else not_ok "an image whose top level changed" "$(says image2)"; fi

both imagefail -t 10s --image "$rootfs" -- /bin/sh -c 'exit 7'
if served imagefail && same imagefail && grep -q "^nonzero_exit 7 " "$tmp/imagefail.auto.txt"; then
    ok "an image root's exit code through the daemon"
else not_ok "an image root's exit code through the daemon" "$(says imagefail)"; fi

# network = host: the host's interfaces (a new namespace would show
# only lo), the same as in-process.
ifs='tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | sort'
both host -t 10s --network host -- sh -c "$ifs"
hostifs=$(sh -c "$ifs")
if served host && same host && [ "$(jget "$tmp/host.auto.json" stdout)" = "$hostifs" ]; then
    ok "network = host goes through the daemon: the host's interfaces, as in-process"
else not_ok "network = host through the daemon" "host: $hostifs" "$(says host)"; fi

# network none next to it: its own namespace (keys do not mix).
both none -t 10s -- sh -c "$ifs"
if served none && same none && [ "$(jget "$tmp/none.auto.json" stdout)" = lo ]; then
    ok "network none next to host: only lo, through the daemon"
else not_ok "network none next to host" "$(says none)"; fi

# A client in another network namespace: network = host runs in-process
# (in its namespace), never in the daemon's.
if command -v unshare >/dev/null 2>&1 && unshare -n true 2>/dev/null; then
    POLYSANDBOX_LOG=debug unshare -n "$PS" run --json --network host -t 10s -- \
        sh -c "$ifs" </dev/null >"$tmp/ns.json" 2>"$tmp/ns.err"
    if [ "$(jget "$tmp/ns.json" stdout)" = lo ] && ! grep -q "polysandbox-locald prepared" "$tmp/ns.err"; then
        ok "network = host from another network namespace: in-process, in that namespace"
    else not_ok "network = host from another network namespace" "$(cat "$tmp/ns.json" "$tmp/ns.err" | head -c 600)"; fi
else
    skip "network = host from another network namespace" "unshare -n is not available"
fi

# An unprivileged caller (nobody): in-process, with daemon = auto too; no
# daemon of its state directory is started; the same answer as with off.
if command -v setpriv >/dev/null 2>&1; then
    un="$tmp/nobody"
    mkdir -p "$un" && chown 65534:65534 "$un"
    unrun() { # MODE: the run as nobody, JSON on stdout
        setpriv --reuid=65534 --regid=65534 --clear-groups env POLYSANDBOX_STATE_DIR="$un/state" \
            POLYSANDBOX_LOG=debug POLYSANDBOX_LOCAL_DAEMON="$1" \
            "$PS" -o core.unenforced_limits=allow run --json -t 10s -- \
            sh -c 'id -u; ls /; echo x >/work/f && cat /work/f' </dev/null 2>"$un/$1.err"
    }
    a=$(unrun auto | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["status"], repr(j["stdout"]))' 2>&1)
    o=$(unrun off | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["status"], repr(j["stdout"]))' 2>&1)
    left=$(pgrep -f "polysandbox-locald --state-dir $un/state" || true)
    if [ "$a" = "$o" ] && [ "${a%% *}" = ok ] && [ -z "$left" ] &&
        ! grep -q "polysandbox-locald prepared" "$un/auto.err"; then
        ok "an unprivileged caller runs in-process with daemon = auto, answering as with off"
    else not_ok "an unprivileged caller with daemon = auto" "auto: $a" "off: $o" "daemons: $left" "$(tail -c 300 "$un/auto.err")"; fi
else
    skip "an unprivileged caller with daemon = auto" "no setpriv"
fi
