# tests/kube/lib.sh - the Kubernetes fake, its CA and credentials (sourced)
#
# Expects top_srcdir and top_builddir (AM_TESTS_ENVIRONMENT).  make_pki
# makes a CA, the server's certificate (127.0.0.1) and an admin client
# certificate (O=system:masters) with openssl; start_fake runs
# tests/fakes/kube.py over HTTPS on a free port of 127.0.0.1 and writes a
# kubeconfig for it ($KUBECONFIG: contexts "fake" with a bearer token,
# "fake-cert" with the client certificate).  The fake and everything it
# ran are killed when the script exits, whatever happens.

: "${top_builddir:?top_builddir is not set (run through make check)}"
: "${top_srcdir:?top_srcdir is not set (run through make check)}"
PS="$top_builddir/polysandbox"
# Debian's python3 (python3-kubernetes, python3-yaml), not a pyenv shim.
if [ -z "${PYTHON:-}" ] && [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=${PYTHON:-python3}; fi
FAKE="$top_srcdir/tests/fakes/kube.py"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-kube-test.XXXXXX") || exit 99
fake_pid=

stop_fake() {
    if [ -n "$fake_pid" ]; then
        kill "$fake_pid" 2>/dev/null
        wait "$fake_pid" 2>/dev/null
        fake_pid=
    fi
}
trap 'stop_fake; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP

export HOME="$tmp/home"          # kubectl's discovery cache, npm's files
export KUBECONFIG="$tmp/kubeconfig"
export PYTHONDONTWRITEBYTECODE=1   # no __pycache__ in the source tree
export KUBE_ADMIN_TOKEN=admin-token-0123456789abcdef
mkdir -p "$HOME"

# skip_all REASON: the whole script is skipped (TAP plan 0).
skip_all() {
    echo "1..0 # SKIP $1"
    exit 0
}

command -v openssl >/dev/null 2>&1 || skip_all "openssl is not installed"

# make_pki: $tmp/pki/{ca,server,admin}.{crt,key}
make_pki() {
    d="$tmp/pki"
    mkdir -p "$d"
    ossl() { openssl "$@" >/dev/null 2>&1 || { echo "Bail out! openssl $1 failed"; exit 99; }; }
    key() { ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out "$d/$1.key"; }
    key ca
    ossl req -x509 -new -key "$d/ca.key" -out "$d/ca.crt" -days 2 -subj /CN=kube-fake-ca
    key server
    ossl req -new -key "$d/server.key" -out "$d/server.csr" -subj /CN=kube-apiserver
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$d/server.ext"
    ossl x509 -req -in "$d/server.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
        -out "$d/server.crt" -days 2 -extfile "$d/server.ext"
    key admin
    ossl req -new -key "$d/admin.key" -out "$d/admin.csr" -subj "/O=system:masters/CN=kube-admin"
    printf 'extendedKeyUsage=clientAuth\n' >"$d/client.ext"
    ossl x509 -req -in "$d/admin.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
        -out "$d/admin.crt" -days 2 -extfile "$d/client.ext"
}

# start_fake [FAKE OPTIONS...]: start the fake, write the kubeconfig.
# Extra lines of the static token file may be given in $KUBE_TOKENS.
start_fake() {
    stop_fake
    [ -f "$tmp/pki/ca.crt" ] || make_pki
    rm -f "$tmp/port"
    mkdir -p "$tmp/fake"
    {
        echo "$KUBE_ADMIN_TOKEN,kube-admin,1,\"system:masters\""
        [ -n "${KUBE_TOKENS:-}" ] && printf '%s\n' "$KUBE_TOKENS"
    } >"$tmp/tokens.csv"
    "$PY" "$FAKE" --state-dir "$tmp/fake" --port-file "$tmp/port" \
        --tls-cert "$tmp/pki/server.crt" --tls-key "$tmp/pki/server.key" \
        --client-ca "$tmp/pki/ca.crt" --token-file "$tmp/tokens.csv" --verbose "$@" \
        >"$tmp/fake.out" 2>"$tmp/fake.err" &
    fake_pid=$!
    i=0
    while [ ! -s "$tmp/port" ]; do
        i=$((i + 1))
        if ! kill -0 "$fake_pid" 2>/dev/null; then
            wait "$fake_pid"
            st=$?
            fake_pid=
            [ "$st" -eq 77 ] && skip_all "$(tail -n1 "$tmp/fake.err")"
            echo "Bail out! the Kubernetes fake did not start"
            sed 's/^/# fake: /' "$tmp/fake.err"
            exit 99
        fi
        if [ "$i" -gt 400 ]; then
            echo "Bail out! the Kubernetes fake did not start in 20 s"
            exit 99
        fi
        sleep 0.05
    done
    port=$(cat "$tmp/port")
    server="https://127.0.0.1:$port"
    while ! grep -q READY "$tmp/fake.out"; do sleep 0.05; done
    cat >"$KUBECONFIG" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster:
    server: $server
    certificate-authority: $tmp/pki/ca.crt
users:
- name: admin
  user:
    token: $KUBE_ADMIN_TOKEN
- name: cert-admin
  user:
    client-certificate: $tmp/pki/admin.crt
    client-key: $tmp/pki/admin.key
contexts:
- name: fake
  context: {cluster: fake, user: admin, namespace: default}
- name: fake-cert
  context: {cluster: fake, user: cert-admin, namespace: default}
current-context: fake
EOF
}

# fake_call METHOD PATH [JSON]: the fake's /_fake endpoints (or the API
# as admin); the answer is left in $tmp/fake_answer.
fake_call() {
    "$PY" - "$port" "$tmp/pki/ca.crt" "$1" "$2" "${3:-}" >"$tmp/fake_answer" <<'EOF'
import http.client, os, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[2])
c = http.client.HTTPSConnection("127.0.0.1", int(sys.argv[1]), timeout=60, context=ctx)
c.request(sys.argv[3], sys.argv[4], sys.argv[5].encode() or None,
          {"Content-Type": "application/json",
           "Authorization": "Bearer " + os.environ["KUBE_ADMIN_TOKEN"]})
r = c.getresponse()
sys.stdout.write(r.read().decode())
sys.exit(0 if 200 <= r.status < 300 else 1)
EOF
}
faults() { fake_call POST /_fake/faults "$1"; }
no_faults() { fake_call POST /_fake/reset; }
# fake_state PYTHON-EXPR: evaluate EXPR with s = GET /_fake/state.
fake_state() {
    fake_call GET /_fake/state || return 1
    "$PY" -c 'import json, sys
s = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$tmp/fake_answer" "$1"
}

# kc ARGS...: kubectl on the fake, bounded in time; stdout in $tmp/out,
# stderr in $tmp/err, status in $rc.
kc() {
    timeout -k 5 60 kubectl "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
# kc_in FILE ARGS...: the same with stdin from FILE.
kc_in() {
    f=$1
    shift
    timeout -k 5 60 kubectl "$@" <"$f" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

# ---- the kubernetes provider on the fake ----

# This tree's providers first (the test environment's path), never the
# ones make install left in the built-in directory.
export POLYSANDBOX_PROVIDER_PATH="$top_builddir/plugins/kubernetes/.libs${POLYSANDBOX_PROVIDER_PATH:+:$POLYSANDBOX_PROVIDER_PATH}"
export POLYSANDBOX_CONFIG_DIR="$tmp/config"
export POLYSANDBOX_STATE_DIR="$tmp/state"
KUBE_NS=sandboxes
KUBE_SBX_TOKEN=polysandbox-token-0123456789abcdef
# The token the provider uses, in the fake's static token file: a user
# whose only rights are the Role below (the README's least RBAC).
KUBE_TOKENS="$KUBE_SBX_TOKEN,polysandbox,2,"

# kube_objects JSON-ARRAY: create each object (as the admin), in order.
kube_objects() {
    "$PY" - "$port" "$tmp/pki/ca.crt" "$1" <<'PYEOF'
import http.client, json, os, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[2])
for o in json.loads(sys.argv[3]):
    av, kind, md = o["apiVersion"], o["kind"], o["metadata"]
    base = "/api/v1" if av == "v1" else "/apis/" + av
    plural = {"Namespace": "namespaces", "Role": "roles", "RoleBinding": "rolebindings",
              "ResourceQuota": "resourcequotas", "NetworkPolicy": "networkpolicies",
              "RuntimeClass": "runtimeclasses", "ClusterRole": "clusterroles",
              "ClusterRoleBinding": "clusterrolebindings", "Pod": "pods",
              "ServiceAccount": "serviceaccounts"}[kind]
    path = base + ("/namespaces/%s/" % md["namespace"] if "namespace" in md else "/") + plural
    c = http.client.HTTPSConnection("127.0.0.1", int(sys.argv[1]), timeout=60, context=ctx)
    c.request("POST", path, json.dumps(o).encode(),
              {"Content-Type": "application/json",
               "Authorization": "Bearer " + os.environ["KUBE_ADMIN_TOKEN"]})
    r = c.getresponse()
    body = r.read().decode()
    if r.status not in (200, 201, 409):
        sys.exit("%s %s: %d %s" % (kind, md.get("name"), r.status, body))
PYEOF
}

# The namespace of the sandboxes (Pod Security "restricted" enforced) and
# the provider's Role (least RBAC).
kube_rbac() {
    kube_objects '[
 {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "'"$KUBE_NS"'",
  "labels": {"pod-security.kubernetes.io/enforce": "restricted"}}},
 {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
  "metadata": {"name": "polysandbox", "namespace": "'"$KUBE_NS"'"},
  "rules": [
   {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch", "create", "delete"]},
   {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create"]},
   {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"], "verbs": ["get", "create"]}]},
 {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
  "metadata": {"name": "polysandbox", "namespace": "'"$KUBE_NS"'"},
  "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "polysandbox"},
  "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "polysandbox"}]}]'
}

# agent-sandbox mode: the Role's rights on the CRDs too.
kube_agent_rbac() {
    kube_objects '[
 {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
  "metadata": {"name": "polysandbox-agent", "namespace": "'"$KUBE_NS"'"},
  "rules": [
   {"apiGroups": ["extensions.agents.x-k8s.io"], "resources": ["sandboxclaims"], "verbs": ["get", "list", "watch", "create", "delete"]},
   {"apiGroups": ["extensions.agents.x-k8s.io"], "resources": ["sandboxtemplates", "sandboxwarmpools"], "verbs": ["get", "create"]},
   {"apiGroups": ["agents.x-k8s.io"], "resources": ["sandboxes"], "verbs": ["get"]}]},
 {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
  "metadata": {"name": "polysandbox-agent", "namespace": "'"$KUBE_NS"'"},
  "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "polysandbox-agent"},
  "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "polysandbox"}]}]'
}

# write_config: a private configuration whose default provider is
# kubernetes, through a kubeconfig of the limited user (or $KUBE_KC); extra
# [settings] lines in $KUBE_SETTINGS, extra sections after them in
# $KUBE_EXTRA_INI.
write_config() {
    cat >"$tmp/sbx.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster:
    server: $server
    certificate-authority-data: $(base64 -w0 "$tmp/pki/ca.crt")
users:
- name: polysandbox
  user:
    token: ${KUBE_CONFIG_TOKEN:-$KUBE_SBX_TOKEN}
contexts:
- name: sandboxes
  context: {cluster: fake, user: polysandbox, namespace: $KUBE_NS}
current-context: sandboxes
EOF
    mkdir -p "$tmp/config/providers.d"
    sed 's/^default_provider = .*/default_provider = kubernetes/' \
        "$top_srcdir/tests/config/polysandbox.ini" >"$tmp/config/polysandbox.ini"
    rm -rf "$tmp/config/templates.d"
    cp -RL "$top_srcdir/tests/config/templates.d" "$tmp/config/templates.d"
    chmod -R u+w "$tmp/config/templates.d"
    cat >"$tmp/config/providers.d/kubernetes.ini" <<EOF
[provider]
enabled = true
# A pod has no process limit of its own: pids goes unenforced (refused
# unless allowed; KUBE_UNENFORCED=refuse to see it refused).
unenforced_limits = ${KUBE_UNENFORCED:-pids}
[settings]
kubeconfig = ${KUBE_KC:-$tmp/sbx.kubeconfig}
ready_timeout = ${KUBE_READY:-60s}
${KUBE_SETTINGS:-}
${KUBE_EXTRA_INI:-}
EOF
}

# start_provider_fake [FAKE OPTIONS...]: the fake, the Role, the configuration.
start_provider_fake() {
    start_fake "$@"
    kube_rbac || { echo "Bail out! cannot make the namespace and Role"; exit 99; }
    write_config
}

# pods_left: how many pods the fake still has in $KUBE_NS.
pods_left() {
    fake_call GET /_fake/state >/dev/null 2>&1
    "$PY" -c 'import json, sys
s = json.load(open(sys.argv[1]))
print(len([p for p in s["pods"] if p["namespace"] == sys.argv[2]]))' "$tmp/fake_answer" "$KUBE_NS"
}

CLI_TIMEOUT=120
. "$top_srcdir/tests/lib/tap.sh"
