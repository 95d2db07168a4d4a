#!/bin/sh
# tests/lazy/lazy.sh - the polysandbox command loads a provider only when
# it needs it: a run on one provider opens no other module, `providers`
# still reports every one with its reason, a fallback is loaded when the
# run needs it.  tests/lazy/marker.so appends "open" and "init" to
# $SBX_TEST_LOAD_LOG when it is mapped and initialised.
. "$top_srcdir/tests/cli/lib.sh"

plan 19

marker="$top_builddir/tests/lazy/.libs/marker.so"
log="$tmp/load.log"
SBX_TEST_LOAD_LOG=$log
export SBX_TEST_LOAD_LOG
conf="$tmp/conf"
mkdir -p "$conf/providers.d" || exit 99
printf '[core]\ndefault_provider = local\n' >"$conf/polysandbox.ini"
printf '[provider]\nenabled = true\npriority = 100\n' >"$conf/providers.d/local.ini"
# marker, enabled, whose init fails (a broken provider) unless fail = no.
marker_conf() {
    printf '[provider]\nenabled = true\npriority = 10\nmodule = %s\n[settings]\nfail = %s\n' \
        "$marker" "$1" >"$conf/providers.d/marker.ini"
}
marker_conf yes
lines() { [ -f "$log" ] && grep -c "^$1\$" "$log" || echo 0; }
no_log() { [ ! -e "$log" ]; }

POLYSANDBOX_CONFIG_DIR=$conf cli run --provider local -- /bin/true
check "run --provider local succeeds with a broken marker enabled" is_rc 0
check "... and does not open marker.so" no_log
POLYSANDBOX_CONFIG_DIR=$conf cli run -- /bin/true
check "run on the default provider does not open marker.so either" \
    eval 'is_rc 0 && no_log'

POLYSANDBOX_CONFIG_DIR=$conf cli providers
check "providers lists the broken marker as unavailable, with its reason" \
    eval 'is_rc 0 && out_has "reason: $marker: init failed: told to fail by its settings"'
check "... having loaded it for that (one open, one init)" \
    eval '[ "$(lines open)" = 1 ] && [ "$(lines init)" = 1 ]'
POLYSANDBOX_CONFIG_DIR=$conf cli providers --json
check "providers --json: marker unavailable, code and reason" \
    json_check 'any(p["name"] == "marker" and p["state"] == "unavailable" and "told to fail" in p["reason"] for p in j)'

rm -f "$log"
POLYSANDBOX_CONFIG_DIR=$conf cli run --provider marker -- /bin/true
first=$(err)
check "run --provider marker fails, saying why" \
    eval '! is_rc 0 && err_has "provider '"'marker'"' is unavailable" && err_has "init failed: told to fail by its settings"'
POLYSANDBOX_CONFIG_DIR=$conf cli run --provider marker -- /bin/true
check "... the same message every time" eval '[ "$(err)" = "$first" ]'

# The default fails to load: the [core] fallback is loaded and runs it.
printf '[core]\ndefault_provider = marker\nfallback = local\n' >"$conf/polysandbox.ini"
rm -f "$log"
POLYSANDBOX_CONFIG_DIR=$conf cli run --json -- /bin/true
check "the default marker fails init, the run falls back to local" \
    eval 'is_rc 0 && json_check "j[\"provider\"] == \"local\"" && [ "$(lines init)" = 1 ]'

# A working marker as the fallback is opened only when the default fails.
marker_conf no
printf '[core]\ndefault_provider = local\nfallback = marker\n' >"$conf/polysandbox.ini"
rm -f "$log"
POLYSANDBOX_CONFIG_DIR=$conf cli run -- /bin/true
check "a fallback is not opened while the default provider works" eval 'is_rc 0 && no_log'

# eval runs samples on 2 threads at once: the broken marker is not loaded
# for runs on local; named, it is refused up front with its reason.
ln -s "$top_srcdir/etc/templates.d" "$conf/templates.d" || exit 99
marker_conf yes
printf '[core]\ndefault_provider = local\n' >"$conf/polysandbox.ini"
rm -f "$log"
ds="$top_srcdir/tests/eval/data/generic.jsonl"
POLYSANDBOX_CONFIG_DIR=$conf cli eval --dataset "$ds" --canonical -j 2 --json
check "eval -j 2 on local with the broken marker enabled: all pass" \
    eval 'is_rc 0 && json_check "j[\"counts\"][\"passed\"] == j[\"done\"] > 0 and j[\"counts\"][\"sandbox_error\"] == 0"'
check "... and marker.so was not opened" no_log
POLYSANDBOX_CONFIG_DIR=$conf cli eval --dataset "$ds" --canonical -j 2 --provider marker,local
check "eval --provider marker,local: refused up front, with marker's reason" \
    eval '! is_rc 0 && err_has "provider '"'marker'"' is unavailable" && err_has "told to fail by its settings"'

# A provider enabled without a module: the reason says so, loaded or not.
printf '[provider]\nenabled = true\n' >"$conf/providers.d/nomodule.ini"
POLYSANDBOX_CONFIG_DIR=$conf cli run --provider nomodule -- /bin/true
check "run --provider nomodule: unavailable, no module" \
    eval '! is_rc 0 && err_has "no nomodule.so in"'
POLYSANDBOX_CONFIG_DIR=$conf cli providers
check "providers: nomodule unavailable, its module named" \
    eval 'is_rc 0 && out_has "no nomodule.so in"'

# The configuration of make check: docker (when built) is not opened by a
# run on local, only by what lists it.  LD_DEBUG=files shows every module
# the dynamic linker opens.
docker="$top_builddir/plugins/docker/.libs/docker.so"
if [ -f "$docker" ]; then
    LD_DEBUG=files cli run -- /bin/true
    check "tests/config: run does not open docker.so" \
        eval 'is_rc 0 && err_has "local.so" && ! err_has "docker.so"'
    LD_DEBUG=files cli run --provider local -- /bin/true
    check "tests/config: run --provider local does not open docker.so" \
        eval 'is_rc 0 && ! err_has "docker.so"'
    LD_DEBUG=files cli providers
    check "tests/config: providers opens docker.so to report it" \
        eval 'is_rc 0 && err_has "docker.so"'
    LD_DEBUG=files cli doctor
    check "tests/config: doctor opens docker.so to check it" err_has "docker.so"
else
    for i in 1 2 3 4; do
        tap_n=$((tap_n + 1))
        echo "ok $tap_n # SKIP docker.so is not built"
    done
fi

done_testing
