# tests/sdk/lib.sh - the vendors' own SDKs, pinned by tests/sdk/package.json
# and package-lock.json, installed with `npm ci` into a cache directory
# when missing (sourced; POSIX sh).
#
# sdk_install DIR: makes DIR (inside the test's own temporary directory)
# hold the drivers of tests/sdk/ beside a node_modules/ with the pinned
# SDKs (run them as `node DIR/NAME.mjs`), or prints a TAP skip naming
# the reason and exits 0 when node or npm is missing or too old, or the npm
# registry cannot be reached.  Any other failure of npm ci bails out.
#
# The cache is $POLYSANDBOX_SDK_CACHE, else $XDG_CACHE_HOME/polysandbox/sdk
# (~/.cache/...), one directory per package-lock.json (named by its hash),
# so a changed lock installs anew and parallel tests share one install.
#
# Another folder's pinned packages install the same way: set SDK_SRC to
# the folder (its package.json, package-lock.json and *.mjs drivers;
# tests/web does) before sourcing.  tap.mjs is copied beside the drivers.

: "${top_srcdir:?top_srcdir is not set (run through make check)}"
SDK_SRC=${SDK_SRC:-"$top_srcdir/tests/sdk"}

sdk_skip() {
    echo "1..0 # SKIP $1"
    exit 0
}

sdk_install() {
    : "${1:?sdk_install: no directory}"
    command -v node >/dev/null 2>&1 || sdk_skip "node is not installed (the vendors' SDKs need it)"
    command -v npm >/dev/null 2>&1 || sdk_skip "npm is not installed (it installs the vendors' SDKs)"
    # e2b's engines: node >= 20.18.1 (21 excepted)
    node -e 'const [a, b, c] = process.versions.node.split(".").map(Number)
             process.exit(a > 21 || (a === 20 && (b > 18 || (b === 18 && c >= 1))) ? 0 : 1)' ||
        sdk_skip "node $(node --version) is too old for the SDKs (20.18.1 or later, not 21, is needed)"
    command -v sha256sum >/dev/null 2>&1 || sdk_skip "sha256sum is missing"
    command -v flock >/dev/null 2>&1 || sdk_skip "flock is missing (util-linux)"
    sum=$(cat "$SDK_SRC/package.json" "$SDK_SRC/package-lock.json" | sha256sum | cut -c1-16)
    cache=${POLYSANDBOX_SDK_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/polysandbox/sdk}
    mkdir -p "$cache" || sdk_skip "cannot make the SDK cache directory $cache"
    SDK_DIR="$cache/$sum"
    (
        flock 9 || exit 3
        [ -f "$SDK_DIR/.installed" ] && exit 0
        rm -rf "$SDK_DIR.new"
        mkdir -p "$SDK_DIR.new" || exit 3
        cp "$SDK_SRC/package.json" "$SDK_SRC/package-lock.json" "$SDK_DIR.new/" || exit 3
        # Scripts off: nothing the SDKs install needs one to run.
        (cd "$SDK_DIR.new" && timeout 600 npm ci --ignore-scripts --no-audit --no-fund \
             --loglevel=error) >"$cache/npm-$sum.log" 2>&1
        r=$?
        [ $r -eq 124 ] && echo "npm ci timed out after 600 s (network)" >>"$cache/npm-$sum.log"
        if [ $r -ne 0 ]; then
            rm -rf "$SDK_DIR.new"
            exit 4
        fi
        rm -rf "$SDK_DIR" && mv "$SDK_DIR.new" "$SDK_DIR" && touch "$SDK_DIR/.installed"
    ) 9>"$cache/.lock"
    case $? in
    0) ;;
    4)
        log="$cache/npm-$sum.log"
        if grep -qiE 'ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|network|socket hang up' "$log" ||
            ! grep -q . "$log"; then
            sdk_skip "the npm registry cannot be reached to install the SDKs ($(grep -m1 -iE 'err|code' "$log" | tr -d '\r' | cut -c1-120))"
        fi
        echo "Bail out! npm ci of tests/sdk/package-lock.json failed (log: $log)"
        sed 's/^/# npm: /' "$log" | tail -20
        exit 1
        ;;
    *)
        echo "Bail out! cannot install the SDKs into $SDK_DIR"
        exit 1
        ;;
    esac
    # The drivers import their SDK from node_modules beside them: copy them
    # next to it (they are small), fresh each run.
    mkdir -p "$1" && cp "$SDK_SRC"/*.mjs "$1/" && cp "$top_srcdir/tests/sdk/tap.mjs" "$1/" &&
        ln -sfn "$SDK_DIR/node_modules" "$1/node_modules" ||
        exit 99
}
