#!/bin/sh
# tests/kube/client-node.sh - the Kubernetes fake through npm's
# @kubernetes/client-node, installed with `npm ci` from the pinned
# tests/kube/node/package-lock.json into $KUBE_NPM_DIR (default: the build
# tree's tests/kube/npm, kept between runs while the lock file is the same).
# Skipped, with the reason, when node or npm is missing or the npm registry
# cannot be reached; tests/kube/client-node.mjs prints the TAP.
. "$top_srcdir/tests/kube/lib.sh"
command -v node >/dev/null 2>&1 || skip_all "node is not installed"
command -v npm >/dev/null 2>&1 || skip_all "npm is not installed"

dir=${KUBE_NPM_DIR:-$top_builddir/tests/kube/npm}
mkdir -p "$dir" || exit 99
lock="$top_srcdir/tests/kube/node/package-lock.json"
if ! cmp -s "$lock" "$dir/package-lock.json" || [ ! -d "$dir/node_modules/@kubernetes/client-node" ]; then
    cp "$top_srcdir/tests/kube/node/package.json" "$lock" "$dir/" && chmod u+w "$dir"/package*.json || exit 99
    if ! (cd "$dir" && timeout -k 5 300 npm ci --no-audit --no-fund --cache "$dir/.npm-cache" \
            >"$tmp/npm.out" 2>&1); then
        if ! timeout 30 npm ping --cache "$dir/.npm-cache" >/dev/null 2>&1; then
            rm -f "$dir/package-lock.json"
            skip_all "the npm registry cannot be reached to install @kubernetes/client-node"
        fi
        echo "Bail out! npm ci of @kubernetes/client-node failed"
        sed 's/^/# npm: /' "$tmp/npm.out" | tail -20
        exit 99
    fi
fi
cp "$top_srcdir/tests/kube/client-node.mjs" "$dir/client-node.mjs" && chmod u+w "$dir/client-node.mjs" || exit 99
start_fake
(cd "$dir" && timeout -k 5 180 node client-node.mjs)
