#!/bin/sh
# tests/cli/enable.sh - `providers` tells, for each disabled provider, the
# file that enables it (its own ini, else providers.d/NAME.ini in the
# configuration directory read) and the credential keys its module
# declares, in text and in --json; a module that cannot be read leaves
# the provider disabled, its credentials unknown.
. "$top_srcdir/tests/cli/lib.sh"

for m in e2b daytona; do
    if [ ! -f "$top_builddir/plugins/$m/.libs/$m.so" ]; then
        echo "1..0 # SKIP the $m provider is not built"
        exit 0
    fi
done

plan 8

# e2b: a module and no ini; daytona: its shipped ini (enabled = false);
# bogus: a NAME.so that is no provider at all.
mkdir -p "$tmp/cfg/providers.d" "$tmp/mods" &&
    cp -RL "$top_srcdir/tests/config/." "$tmp/cfg/" &&
    cp "$top_srcdir/plugins/daytona/daytona.ini" "$tmp/cfg/providers.d/" &&
    printf 'not an ELF file\n' >"$tmp/mods/bogus.so" || exit 99
POLYSANDBOX_PROVIDER_PATH="$top_builddir/plugins/local/.libs:$top_builddir/plugins/e2b/.libs:$top_builddir/plugins/daytona/.libs:$tmp/mods"
export POLYSANDBOX_PROVIDER_PATH

cli --config-dir "$tmp/cfg" providers
check "e2b without an ini: the providers.d/e2b.ini of the configuration directory" \
    eval 'is_rc 0 && out_has "enable: set '\''enabled = true'\'' under [provider] in $tmp/cfg/providers.d/e2b.ini"'
check "e2b: its credential api_key, as env:E2B_API_KEY" \
    out_has "credential: api_key under [settings] there, e.g. api_key = env:E2B_API_KEY"
check "daytona: its own ini and its credential" \
    eval 'out_has "enable: set '\''enabled = true'\'' under [provider] in $tmp/cfg/providers.d/daytona.ini" &&
          out_has "e.g. api_key = env:DAYTONA_API_KEY" && out_has "polysandbox secret seal"'
check "a module that cannot be read: credentials unknown" out_has "credentials: unknown"

cli --config-dir "$tmp/cfg" providers --json
# json_check's expressions read the directory from CFG.
CFG=$tmp/cfg
export CFG
check "--json: e2b's file and credential under enable, still disabled" \
    json_check '([(p["state"], p["reason"], p["enable"]) for p in j if p["name"] == "e2b"] ==
                [("disabled", None, {"files": [__import__("os").environ["CFG"] + "/providers.d/e2b.ini"],
                  "credentials": [{"key": "api_key", "env": "E2B_API_KEY"}]})])'
check "--json: daytona's own ini and credential" \
    json_check '([p["enable"] for p in j if p["name"] == "daytona"] ==
                [{"files": [__import__("os").environ["CFG"] + "/providers.d/daytona.ini"],
                  "credentials": [{"key": "api_key", "env": "DAYTONA_API_KEY"}]}])'
check "--json: the unreadable module stays disabled, credentials null; a ready one has no enable" \
    json_check '([(p["state"], p["enable"]["credentials"]) for p in j if p["name"] == "bogus"] ==
                [("disabled", None)] and
                [p["enable"] for p in j if p["name"] == "local"] == [None])'

# The directory POLYSANDBOX_CONFIG_DIR names is the one searched.
POLYSANDBOX_CONFIG_DIR=$tmp/cfg
export POLYSANDBOX_CONFIG_DIR
cli providers --json
check "POLYSANDBOX_CONFIG_DIR: its providers.d/e2b.ini" \
    json_check '([p["enable"]["files"] for p in j if p["name"] == "e2b"] ==
                [[__import__("os").environ["CFG"] + "/providers.d/e2b.ini"]])'

done_testing
