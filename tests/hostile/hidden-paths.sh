#!/bin/sh
# tests/hostile/hidden-paths.sh - no path of the orchestrator's own in a
# sandbox, whatever the prefix (TAP)
#
# A local sandbox shows the host's /usr.  Installed under the default
# prefix, PolySandbox keeps its configuration (with the key credentials
# are sealed to), its state and its modules below /usr
# (/usr/local/etc/polysandbox, /usr/local/var/lib/polysandbox,
# /usr/local/lib/polysandbox/providers); under /usr its modules.  For
# this build (the configured prefix) and a /usr installation, each of
# those directories, the configuration directory in use and the provider
# directory in use is made (in
# overlays over /usr, /etc and /var in a private mount namespace: the
# real ones are never touched) holding a marker file, and a sandbox tries
# to read each marker: in-process, through a python zygote and through
# polysandbox-locald.  A marker in a directory of ours it may see proves
# the probe sees what is there.  Needs root (mounts).
#
# The /usr installation is this build run with the configuration in
# /etc/polysandbox, its state_dir /var/lib/polysandbox and its modules
# from /usr/lib/polysandbox/providers: what a sandbox hides is what the
# core reports as configured (test-config.c checks the built-in
# directories are among them).  With POLYSANDBOX_TEST_USR_BUILD=1 it is
# instead a second build of this tree's distribution configured with
# --prefix=/usr --sysconfdir=/etc --localstatedir=/var, whose built-in
# directories are those (some minutes on two cores: not the default).

: "${top_srcdir:?top_srcdir is not set (run through make check)}"
. "$top_srcdir/tests/hostile/lib.sh"

if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP needs root (overlay mounts)"; exit 0; fi
command -v unshare >/dev/null 2>&1 || { echo "1..0 # SKIP unshare is missing"; exit 0; }
hostile_need hidden-paths
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-hidden-paths.XXXXXX") || exit 99
cleanup() {
    for f in "$tmp"/*.locald; do
        [ -f "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null
    done
    rm -rf "$tmp"
}
trap cleanup EXIT
if ! unshare -m --propagation private sh -c \
    "mkdir -p $tmp/t/u $tmp/t/w && mount -t overlay overlay -o lowerdir=/usr,upperdir=$tmp/t/u,workdir=$tmp/t/w /usr" \
    2>"$tmp/ov.err"; then
    echo "1..0 # SKIP no overlay mounts here: $(cat "$tmp/ov.err")"
    exit 0
fi

# configured BUILD VAR: a directory as BUILD was configured (its Makefile).
configured() {
    sed -n "s|^$2 = ||p" "$1/Makefile" | head -n 1
}
# dirs_of BUILD: its sysconfdir, state and provider directories, expanded.
dirs_of() {
    prefix=$(configured "$1" prefix)
    exec_prefix=$(configured "$1" exec_prefix | sed "s|\${prefix}|$prefix|")
    sysconfdir=$(configured "$1" sysconfdir | sed "s|\${prefix}|$prefix|")
    localstatedir=$(configured "$1" localstatedir | sed "s|\${prefix}|$prefix|")
    libdir=$(configured "$1" libdir | sed "s|\${exec_prefix}|$exec_prefix|")
    echo "$sysconfdir/polysandbox $localstatedir/lib/polysandbox $libdir/polysandbox/providers"
}

# The inside of one check (run under unshare -m): overlays over /usr,
# /etc and /var; our directories made with a marker each; runs that try
# to read them.  Prints one line per run: the markers seen.
cat >"$tmp/inside.sh" <<'EOF'
build=$1 tag=$2 prefix=$3 ours=$4 conf=$5 pdir=$6 state=$7
for d in /usr /etc /var; do
    mkdir -p "$tmp/$tag/up$d" "$tmp/$tag/wk$d" &&
        mount -t overlay overlay -o "lowerdir=$d,upperdir=$tmp/$tag/up$d,workdir=$tmp/$tag/wk$d" "$d" ||
        { echo "overlay on $d failed"; exit 1; }
done
seen=$prefix/share/psbx-hidden-test/visible
mkdir -p "$conf" "$pdir" "$seen" && cp -RL "$POLYSANDBOX_CONFIG_DIR"/. "$conf"/ &&
    cp "$build/plugins/local/.libs/local.so" "$build/plugins/local/local-zygote.so" "$pdir"/ ||
    { echo "setting up $conf and $pdir failed"; exit 1; }
if [ -n "$state" ]; then
    sed -i "s|^\[core\]\$|[core]\nstate_dir = $state|" "$conf/polysandbox.ini" &&
        grep -q "^state_dir = $state\$" "$conf/polysandbox.ini" ||
        { echo "setting state_dir in $conf failed"; exit 1; }
fi
all="$ours $conf $pdir"
for d in $all $seen; do
    mkdir -p "$d" && echo marker >"$d/marker.txt" || { echo "marker in $d failed"; exit 1; }
done
export POLYSANDBOX_CONFIG_DIR="$conf" POLYSANDBOX_PROVIDER_PATH="$pdir"
export POLYSANDBOX_LOCALD="$build/plugins/local/polysandbox-locald" POLYSANDBOX_LOCALD_IDLE=5
unset POLYSANDBOX_STATE_DIR # root's default: the state directory as configured
probe="for d in $all $seen; do [ -e \$d/marker.txt ] && echo \"seen \$d\"; done; echo end"
pyprobe="import os
for d in '$all $seen'.split():
    if os.path.exists(d + '/marker.txt'):
        print('seen', d)
print('end')"
for mode in in-process zygote daemon; do
    case $mode in
    in-process) out=$(POLYSANDBOX_LOCAL_DAEMON=off "$build/polysandbox" run -- sh -c "$probe" 2>&1) ;;
    zygote) out=$(POLYSANDBOX_LOCAL_DAEMON=off POLYSANDBOX_LOG=debug "$build/polysandbox" run \
        --lang python -c "$pyprobe" 2>"$tmp/$tag.zyg.err") ;;
    daemon) out=$(POLYSANDBOX_LOCAL_DAEMON=auto POLYSANDBOX_LOCALD_STRICT=1 POLYSANDBOX_LOG=debug \
        "$build/polysandbox" run -- sh -c "$probe" 2>"$tmp/$tag.ld.err")
        set -- $ours
        rd=$(readlink "$2/local/run-dir" 2>/dev/null)
        cp "$rd/locald.lock" "$tmp/$tag.locald" 2>/dev/null ;;
    esac
    echo "$mode:" $out
done
EOF

# check BUILD TAG NAME [OURS PREFIX]: the three runs of BUILD in a
# namespace of their own; OURS (its built-in directories unless given)
# are the configuration, state and provider directories in use when
# given, else test ones are, below PREFIX (BUILD's unless given).
check() {
    build=$1 tag=$2 name=$3
    ours=${4:-$(dirs_of "$build")}
    prefix=${5:-$(configured "$build" prefix)}
    if [ -n "$4" ]; then
        set -- $ours
        conf=$1 state=$2 pdir=$3
    else
        conf=$prefix/share/psbx-hidden-test/conf pdir=$prefix/lib/psbx-hidden-test/providers state=
    fi
    tmp=$tmp unshare -m --propagation private sh "$tmp/inside.sh" "$build" "$tag" "$prefix" \
        "$ours" "$conf" "$pdir" "$state" >"$tmp/$tag.out" 2>&1
    for mode in in-process zygote daemon; do
        line=$(grep "^$mode:" "$tmp/$tag.out")
        vis="$prefix/share/psbx-hidden-test/visible"
        # Each way was the way asked for: a zygote started, the daemon served.
        case $mode in
        zygote) ! grep -q "no zygote" "$tmp/$tag.zyg.err" ;;
        daemon) grep -q "a sandbox polysandbox-locald prepared" "$tmp/$tag.ld.err" ;;
        esac
        way=$?
        if [ "$line" = "$mode: seen $vis end" ] && [ "$way" = 0 ]; then
            ok "$name build, $mode: none of $ours, the configuration and provider directories in use is readable"
        else
            not_ok "$name build, $mode: what a sandbox reads (only $vis may be seen)" \
                "${line:-no run} (the way asked for: $way)" "$(cat "$tmp/$tag.out")" \
                "$(tail -n 5 "$tmp/$tag.zyg.err" "$tmp/$tag.ld.err" 2>/dev/null)"
        fi
    done
}

echo "1..6"
# A sandbox shows the host's /usr, nothing else of the host's trees that
# hold a prefix: this build's directories can only show below /usr (the
# default /usr/local).  Elsewhere (make distcheck's _inst) there is
# nothing to hide, nor a marker a sandbox could see to prove its probe.
this_prefix=$(configured "$top_builddir" prefix)
case $this_prefix in
/usr | /usr/*)
    check "$top_builddir" this "this ($this_prefix)" ;;
*)
    for mode in in-process zygote daemon; do
        skip "this ($this_prefix) build, $mode" "its prefix is not below /usr, which is all of a prefix a sandbox shows"
    done ;;
esac

# The /usr installation: configured so, or (POLYSANDBOX_TEST_USR_BUILD=1)
# built so from this tree's distribution.
if [ "${POLYSANDBOX_TEST_USR_BUILD:-0}" != 1 ]; then
    check "$top_builddir" usr "a /usr (this build configured so)" \
        "/etc/polysandbox /var/lib/polysandbox /usr/lib/polysandbox/providers" /usr
    exit 0
fi
usrb="$tmp/usr-build"
mkdir -p "$usrb" &&
    make -C "$top_builddir" distdir distdir="$tmp/src" >"$tmp/build.log" 2>&1 &&
    (cd "$usrb" && "$tmp/src/configure" --prefix=/usr --sysconfdir=/etc --localstatedir=/var \
        CFLAGS="-O0 -g0" && make -j2 plugins/local/local-zygote-py.h &&
        make -j2 polysandbox plugins/local/local.la plugins/local/polysandbox-locald \
            plugins/local/local-zygote.so) >>"$tmp/build.log" 2>&1
if [ -x "$usrb/polysandbox" ] && [ -f "$usrb/plugins/local/.libs/local.so" ]; then
    check "$usrb" usr "the /usr"
else
    for mode in in-process zygote daemon; do
        not_ok "the /usr build, $mode: it did not build" "$(tail -n 20 "$tmp/build.log")"
    done
fi
