# tests/server/npm.sh - the npm clients of the server tests (sourced after
# lib.sh and plan)
#
# npm_clients: install the pinned clients of tests/server/npm
# (package.json and package-lock.json, `npm ci`) once into
# $top_builddir/tests/server/npm-clients and set NODE_MODULES; reinstalled when the
# lock file changes.  Exits 77 (skip, naming why) when node or npm is
# missing or the registry cannot be reached.
npm_clients() {
    npm_src="$top_srcdir/tests/server/npm"
    npm_dir="$top_builddir/tests/server/npm-clients"
    NODE_MODULES="$npm_dir/node_modules"
    command -v node >/dev/null 2>&1 || { echo "1..0 # SKIP node is not installed"; exit 0; }
    command -v npm >/dev/null 2>&1 || { echo "1..0 # SKIP npm is not installed"; exit 0; }
    if [ -d "$NODE_MODULES" ] && cmp -s "$npm_src/package-lock.json" "$npm_dir/package-lock.json"; then
        return 0
    fi
    mkdir -p "$npm_dir" || exit 99
    cp "$npm_src/package.json" "$npm_src/package-lock.json" "$npm_dir/" || exit 99
    if ! (cd "$npm_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) \
        >"$tmp/npm.log" 2>&1; then
        rm -rf "$NODE_MODULES"
        echo "1..0 # SKIP npm ci of tests/server/npm failed (is the registry reachable?): $(tail -n 3 "$tmp/npm.log" | tr '\n' ' ')"
        exit 0
    fi
}
