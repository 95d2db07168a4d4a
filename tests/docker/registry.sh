# tests/docker/registry.sh - a private Docker registry on loopback for the
# pull tests (sourced after tests/docker/lib.sh)
#
# registry_start NAME DIR [HTPASSWD]: runs Debian's docker-registry
# (distribution 2.8) on 127.0.0.1 at a free port, with a configuration and
# a storage directory under DIR (shared by the registries a test starts
# on the same DIR), basic authentication when HTPASSWD (a bcrypt htpasswd
# file) is given, or token authentication when REGISTRY_TOKEN_REALM (the
# token service's URL) and REGISTRY_TOKEN_BUNDLE (the certificate it signs
# with) are set (service polysandbox-test, issuer polysandbox-test-issuer:
# tests/image/tokend.py); sets REGISTRY_<NAME>_PORT.  Stopped by registry_stop_all
# (call it from the test's EXIT trap).  Returns 77 with a reason when the
# package is missing.

registry_pids=

# registry_unready TEST REASON...: what TEST needs is missing: a skip (TAP
# "1..0 # SKIP"), or under CI=true a failure (contrib/quickstart.sh
# installs everything); exits either way.
registry_unready() {
    tag=$1
    shift
    echo "# $tag: $*" >&2
    if [ "${CI:-}" = true ]; then
        echo "Bail out! $tag: $* (CI=true: contrib/quickstart.sh installs it)"
        exit 1
    fi
    # TAP's skip: a clean exit (a status of 77 would be an error to the driver).
    echo "1..0 # SKIP $tag: $*"
    exit 0
}

registry_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

registry_start() {
    name=$1 dir=$2 htpasswd=${3:-}
    command -v docker-registry >/dev/null 2>&1 ||
        { echo "# no docker-registry (apt-get install docker-registry)" >&2; return 77; }
    mkdir -p "$dir/storage" || return 1
    port=$(registry_free_port) || return 1
    conf=$dir/$name.yml
    {
        echo "version: 0.1"
        echo "log: {level: info}"
        echo "storage:"
        echo "  filesystem: {rootdirectory: $dir/storage}"
        echo "  delete: {enabled: true}"
        echo "http:"
        echo "  addr: 127.0.0.1:$port"
        echo "  secret: polysandbox-test-$name"
        if [ -n "$htpasswd" ]; then
            echo "auth:"
            echo "  htpasswd: {realm: polysandbox-test, path: $htpasswd}"
        elif [ -n "${REGISTRY_TOKEN_REALM:-}" ]; then
            echo "auth:"
            echo "  token: {realm: \"$REGISTRY_TOKEN_REALM\", service: polysandbox-test,"
            echo "          issuer: polysandbox-test-issuer, rootcertbundle: $REGISTRY_TOKEN_BUNDLE}"
        fi
    } >"$conf" || return 1
    docker-registry serve "$conf" >"$dir/$name.log" 2>&1 </dev/null &
    registry_pids="$registry_pids $!"
    eval "REGISTRY_${name}_PORT=$port"
    # Up when /v2/ answers (200 open, 401 with authentication).
    i=0
    while [ $i -lt 100 ]; do
        code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/v2/" 2>/dev/null)
        case $code in 200 | 401) return 0 ;; esac
        sleep 0.2
        i=$((i + 1))
    done
    echo "# registry $name did not come up on 127.0.0.1:$port:" >&2
    sed 's/^/#   /' "$dir/$name.log" | tail -n 20 >&2
    return 1
}

registry_stop_all() {
    for pid in $registry_pids; do
        kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    done
    registry_pids=
}
