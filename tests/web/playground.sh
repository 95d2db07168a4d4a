#!/bin/sh
# tests/web/playground.sh - the Playground of polysandboxd's page (GET /)
# in a real browser: Debian's chromium, headless, driven by puppeteer-core
# (pinned by tests/web/package-lock.json, installed with npm ci into the
# cache tests/sdk/lib.sh keeps) against a polysandboxd from the build tree
# on a free loopback port with a token, the local provider and evalnop
# (tests/eval's fake, a second provider whose answers differ) and the
# template "art" whose run keeps its artifacts (srv_art_config), and a
# second one with [server] web = false, whose / must be a 404.  The code
# editor is checked when the build has its bundle, and the textarea in
# its place always (editor-none.js served instead of it).  The checks
# are in tests/web/playground.mjs; the screenshots go to
# $top_builddir/tests/web/screenshots/.  Skips, naming why, without
# chromium, node or the npm registry.
. "$top_srcdir/tests/server/lib.sh"
. "$top_srcdir/tests/server/jobs-lib.sh"

CHROMIUM=$(command -v chromium || command -v chromium-browser) ||
    { echo "1..0 # SKIP chromium is not installed (Debian: apt-get install chromium)"; exit 0; }
SDK_SRC="$top_srcdir/tests/web"
. "$top_srcdir/tests/sdk/lib.sh"
sdk_install "$tmp/web"

# the template "art", whose run keeps its artifacts, for the page's list
srv_art_config

token=web-playground-token-0123456789
printf '%s\n' "$token" >"$tmp/tokens"
chmod 600 "$tmp/tokens"
# A second server with the page switched off ([server] web = false),
# checked by plain HTTP; its log is moved aside (the server keeps
# writing to it) so that srv_start's log is the first one's.
if ! srv_start --set server.web=false; then
    echo "1..1"
    echo "not ok 1 - polysandboxd starts with server.web=false"
    sed 's/^/# /' "$tmp/server.log"
    exit 1
fi
noweb_pid=$srv_pid noweb_base=$base
mv "$tmp/server.log" "$tmp/noweb.log" || exit 99
if ! srv_start --token-file "$tmp/tokens"; then
    echo "1..1"
    echo "not ok 1 - polysandboxd starts"
    sed 's/^/# /' "$tmp/server.log"
    exit 1
fi
mkdir -p "$tmp/profile" "$tmp/downloads" || exit 99
PS_EDITOR_NONE="$top_srcdir/core/server/web/editor-none.js" PS_BASE=$base PS_NOWEB_BASE=$noweb_base PS_TOKEN=$token CHROMIUM=$CHROMIUM PROFILE="$tmp/profile" DOWNLOADS="$tmp/downloads" \
    SHOTS="$top_builddir/tests/web/screenshots" \
    timeout -k 5 120 node "$tmp/web/playground.mjs"
rc=$?
kill -TERM "$noweb_pid" && wait "$noweb_pid"
if grep -q -E 'runtime error:|AddressSanitizer|LeakSanitizer' "$tmp/noweb.log"; then
    sed 's/^/# noweb server: /' "$tmp/noweb.log" | head -40
    echo "Bail out! a sanitizer reported in the log of the server with web = false"
    exit 1
fi
[ $rc = 0 ] || sed 's/^/# server: /' "$tmp/server.log" | tail -30
exit $rc
