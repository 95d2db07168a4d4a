#!/bin/sh
# tests/kube/provider.sh - the kubernetes provider through the polysandbox
# command, against the Kubernetes fake: run, the pod it makes (security
# context, limits, labels, time-to-live, network policy), a persistent
# sandbox, files, labels and list, gc, images and runtime classes, and
# every way of reaching the cluster (kubeconfig token, client certificate
# data, exec credential plugin with expiry, in-cluster service account,
# server and sealed token, RBAC refusals).
. "$top_srcdir/tests/kube/lib.sh"
plan 58
start_provider_fake

# pod_check ID PYTHON-EXPR: evaluate EXPR with p = the pod's JSON.
pod_check() {
    fake_call GET "/api/v1/namespaces/$KUBE_NS/pods/$1" || return 1
    "$PY" -c 'import json, sys, time
p = json.load(open(sys.argv[1]))
c = p["spec"]["containers"][0]
md = p["metadata"]
sys.exit(0 if eval(sys.argv[2]) else 1)' "$tmp/fake_answer" "$2"
}
# state_check PYTHON-EXPR: with s = the fake's state.
state_check() { fake_state "$1"; }

cli providers
check "providers: kubernetes is ready" sh -c "grep -E '^kubernetes +ready' '$tmp/out' >/dev/null"

cli -q run -- sh -c 'echo hello; echo oops >&2; exit 3'  # -q: no note of the unenforced pids limit
check "run: stdout, exit status 3" rc_and_out 3 hello
check "run: stderr apart, the trailers stripped" sh -c "[ \"\$(cat '$tmp/err')\" = oops ]"

cli run --json -- sh -c 'printf "a\\000b\\036sbx:0:x:0\\n"; kill -TERM $$'
check "run --json: signal TERM (perl tells it from exit 143), binary stdout kept, a forged trailer is output" \
    json_check 'j["status"] == "signal" and j["signal"] == 15 and j["stdout"] == "a\0b\x1esbx:0:x:0\n" and j["provider"] == "kubernetes"'

printf 'line1\nline2\n' >"$tmp/in"
cli_in "$tmp/in" run -i -- sh -c 'cat; echo done'
check "run: stdin delivered to EOF" rc_and_out 0 "$(printf 'line1\nline2\ndone')"
cli run -- cat
check "run: without stdin, cat sees EOF at once" rc_and_out 0 ""

cli run -e GREETING=hi -- sh -c 'echo "$GREETING ${KUBE_ADMIN_TOKEN-unset} $HOME"'
check "run -e: environment set, ours not leaked, HOME the work directory" rc_and_out 0 "hi unset /workspace"
cli run -- no-such-command-in-path
check "run of a command not in PATH: 127" is_rc 127

cli run --json -t 1s -- sh -c 'trap "" TERM; setsid sleep 30 & sleep 30'
check "run -t 1s: status timeout, exit 124" \
    sh -c "[ $rc -eq 124 ] && grep -q '\"status\":\"timeout\"' '$tmp/out'"
no_pods() { [ "$(pods_left)" = 0 ]; }
check "after the run no pod is left" no_pods

# A pod has no process limit of its own: pids goes unenforced, refused
# unless allowed (lib.sh allows pids), before any pod is made, and said.
cli run --json -- true
check "allowed (= pids): --json names pids alone, and why" \
    json_check 'j["status"] == "ok" and j["unenforced_limits"] == ["pids"] and "podPidsLimit" in j["unenforced_reason"]'
posts() { grep -c "POST /api/v1/namespaces/$KUBE_NS/pods" "$tmp/fake.err"; }
p0=$(posts)
cli -o provider.kubernetes.unenforced_limits=memory run -- true
check "unenforced_limits = memory: refused, naming pids and podPidsLimit; no pod asked for" \
    eval 'rc_and_err 125 "pids (128)" && err_has "podPidsLimit" && ! err_has "memory (" && [ "$(posts)" = "$p0" ]'

cli run --json --output-limit 1K -- sh -c 'yes | head -c 100000'
check "run --output-limit 1K: status output_limit, 1 KiB kept" \
    json_check 'j["status"] == "output_limit" and len(j["stdout"]) == 1024 and j["stdout_truncated"]'

"$PY" -c 'print("echo " + "x" * 120000 + " | wc -c")' >"$tmp/long"
cli run -- sh -c "$(cat "$tmp/long")"
check "a 120 kB command line (the program goes on stdin, not in the URL)" rc_and_out 0 120001

# ---- a persistent sandbox and its pod ----
cli create --label team=blue --label 'note=two words, é' --ttl 120s -e KEPT=yes
id=$(cat "$tmp/out")
check "create: prints the pod's name" sh -c "[ $rc -eq 0 ] && expr '$id' : 'sbx-[0-9a-f]*$' >/dev/null"
check "pod: restartPolicy Never, no service account token, no service links, host namespaces off" \
    pod_check "$id" 'p["spec"]["restartPolicy"] == "Never" and p["spec"]["automountServiceAccountToken"] is False and p["spec"]["enableServiceLinks"] is False and not p["spec"]["hostNetwork"] and not p["spec"]["hostPID"] and not p["spec"]["hostIPC"]'
check "pod: non-root user, RuntimeDefault seccomp; no privilege escalation, read-only root, no capabilities" \
    pod_check "$id" 'p["spec"]["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}, "runAsUser": 65534, "runAsGroup": 65534, "fsGroup": 65534, "runAsNonRoot": True} and c["securityContext"] == {"allowPrivilegeEscalation": False, "privileged": False, "readOnlyRootFilesystem": True, "capabilities": {"drop": ["ALL"]}}'
check "pod: memory request = limit = the sandbox's, emptyDirs of the disk limit" \
    pod_check "$id" 'c["resources"]["limits"]["memory"] == c["resources"]["requests"]["memory"] == "512Mi" and c["resources"]["limits"]["cpu"] == "1" and [v["emptyDir"]["sizeLimit"] for v in p["spec"]["volumes"]] == ["256Mi", "256Mi"]'
check "pod: activeDeadlineSeconds and polysandbox.io/expires from the TTL" \
    pod_check "$id" 'p["spec"]["activeDeadlineSeconds"] == 120 and abs(int(md["labels"]["polysandbox.io/expires"]) - time.time() - 120) < 30'
check "pod: labels encoded (an invalid value hashed), exact in the annotation, owner label" \
    pod_check "$id" 'md["labels"]["label.polysandbox.io/team"] == "blue" and md["labels"]["label.polysandbox.io/note"].startswith("x-") and json.loads(md["annotations"]["polysandbox.io/labels"])["note"] == "two words, é" and md["labels"]["polysandbox.io/owner"].startswith("x-") and md["labels"]["app.kubernetes.io/managed-by"] == "polysandbox"'
check "pod: network none: labelled for the provider's NetworkPolicy" \
    pod_check "$id" 'md["labels"]["polysandbox.io/network"] == "none"'
fake_call GET "/apis/networking.k8s.io/v1/namespaces/$KUBE_NS/networkpolicies/polysandbox-deny-egress"
check "the NetworkPolicy the provider made denies all ingress and egress of those pods" \
    "$PY" -c 'import json, sys
n = json.load(open(sys.argv[1]))["spec"]
sys.exit(0 if n == {"podSelector": {"matchLabels": {"polysandbox.io/network": "none"}}, "policyTypes": ["Ingress", "Egress"]} else 1)' "$tmp/fake_answer"
check "the fake enforced it: the pod has a network of its own" \
    state_check "[x['own_network'] for x in s['pods'] if x['name'] == '$id'] == [True]"

cli exec "$id" -- sh -c 'echo state > kept.txt; mkdir -p sub; touch /cannot 2>/dev/null || echo ro'
check "exec 1: writes in the work directory; the root is read-only" rc_and_out 0 ro
cli exec "$id" -- sh -c 'cat kept.txt; echo "$KEPT"; id -u'
check "exec 2: the file, the create-time environment, uid 65534" rc_and_out 0 "$(printf 'state\nyes\n65534')"
cli exec --cwd sub "$id" -- pwd
check "exec --cwd sub" rc_and_out 0 /workspace/sub

head -c 300000 /dev/urandom >"$tmp/blob"
cli upload "$id" "$tmp/blob" dir/blob.bin
check "upload of 300 kB into a new directory (tar over exec)" is_rc 0
cli exec "$id" -- sh -c 'wc -c < dir/blob.bin'
check "exec sees the uploaded size" rc_and_out 0 300000
cli download "$id" dir/blob.bin "$tmp/back"
check "download gives back every byte" sh -c "[ $rc -eq 0 ] && cmp -s '$tmp/blob' '$tmp/back'"
cli download "$id" no-such-file "$tmp/none"
check "download of a missing file fails, naming it" \
    sh -c "[ $rc -ne 0 ] && grep -q 'no such file' '$tmp/err'"
cli exec "$id" -- sh -c 'ln -s /etc/passwd link && ln -s /etc dir2'
cli download "$id" link "$tmp/link"
check "download through a link the sandbox made is refused" \
    sh -c "[ $rc -ne 0 ] && grep -q 'link' '$tmp/err' && [ ! -s '$tmp/link' ]"
cli upload "$id" "$tmp/blob" dir2/x
check "upload through a linked directory is refused" sh -c "[ $rc -ne 0 ] && grep -q \"'dir2' is a link\" '$tmp/err'"

cli list --json
check "list: the sandbox with its exact labels" \
    json_check "any(x['id'] == '$id' and x['labels'].get('team') == 'blue' and x['labels'].get('note') == 'two words, é' for x in j)"

cli destroy "$id"
check "destroy" is_rc 0
check "destroy: the pod is gone" no_pods
cli exec "$id" -- true
check "exec after destroy: no such sandbox (exit 2)" rc_and_err 2 "no sandbox pod"

# ---- gc: a pod past its polysandbox.expires ----
cli create --ttl 2s --label gc=me
id=$(cat "$tmp/out")
sleep 3
cli gc --provider kubernetes --json
check "gc reaps a sandbox past its time-to-live (by its labels)" \
    sh -c "[ $rc -eq 0 ] && grep -q '$id' '$tmp/out'"
check "gc: its pod is gone" no_pods

# ---- images, templates, runtime classes, network ----
cli create --template python --ttl 60s
id1=$(cat "$tmp/out")
cli create --image busybox:1.36 --network host --ttl 60s
id2=$(cat "$tmp/out")
image_ok() {
    pod_check "$id1" 'c["image"] == "python:3.11-slim" and md["labels"]["polysandbox.io/template"] == "python"' &&
        pod_check "$id2" 'c["image"] == "busybox:1.36"'
}
check "image: the template's (python:3.11-slim), else the request's" image_ok
host_net_ok() {
    pod_check "$id2" 'md["labels"]["polysandbox.io/network"] == "allow"' &&
        state_check "[x['own_network'] for x in s['pods'] if x['name'] == '$id2'] == [False]"
}
check "network host: not selected by the NetworkPolicy, the cluster's network" host_net_ok
cli destroy "$id1"
cli destroy "$id2"
KUBE_SETTINGS="runtime_class = gvisor" write_config
cli create --ttl 60s
id=$(cat "$tmp/out")
check "runtime_class = gvisor: the pod's runtimeClassName" pod_check "$id" 'p["spec"]["runtimeClassName"] == "gvisor"'
cli destroy "$id"
KUBE_SETTINGS="runtime_class = no-such-class" write_config
cli run -- true
check "an unknown RuntimeClass: refused by admission, named" rc_and_err 125 'RuntimeClass "no-such-class" not found'
KUBE_SETTINGS="run_as_user = 0" write_config
cli run -- true
check "run_as_user = 0 in a namespace enforcing Pod Security restricted: a configuration error saying why" \
    rc_and_err 125 'violates PodSecurity "restricted:latest"'
KUBE_SETTINGS="allow_network = false" write_config
cli run --network host -- true
check "network host refused when allow_network = false" rc_and_err 125 "allow_network = false"
KUBE_SETTINGS="ttl = 0" write_config
cli run -- true
check "a duration out of bounds: the file and line, the key, the value and the bounds" \
    sh -c "[ $rc -eq 125 ] && grep -q 'providers.d/kubernetes.ini:[0-9]*: ttl = .0.: must be from 1s to 720h' '$tmp/err'"
KUBE_SETTINGS="mode = pod" write_config
cli run -- true
check "an unknown mode: the values accepted" rc_and_err 125 "mode = 'pod': use pods or agent-sandbox"
write_config

cli doctor --provider kubernetes
check "doctor: the cluster and the API server reachable" \
    sh -c "[ $rc -eq 0 ] && grep -q 'OK .*API server.*reachable' '$tmp/out'"

# ---- credentials and RBAC ----
KUBE_CONFIG_TOKEN=wrong-5ecret write_config
cli run -- true
check "a refused token: an auth error (401), the token never shown" \
    sh -c "[ $rc -ne 0 ] && grep -q '401' '$tmp/err' && ! grep -q 5ecret '$tmp/err' '$tmp/out'"
# A user with every right but pods/exec.
kube_objects '[
 {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
  "metadata": {"name": "noexec", "namespace": "'"$KUBE_NS"'"},
  "rules": [{"apiGroups": ["", "networking.k8s.io"], "resources": ["pods", "networkpolicies"], "verbs": ["*"]}]},
 {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
  "metadata": {"name": "noexec", "namespace": "'"$KUBE_NS"'"},
  "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "noexec"},
  "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "noexec"}]}]'
printf '%s\n' "$KUBE_TOKENS" 'noexec-token,noexec,3,' >>"$tmp/tokens.csv"
KUBE_CONFIG_TOKEN=noexec-token write_config
cli run -- true
check "RBAC without pods/exec: refused (403), pointing at the Role" \
    sh -c "[ $rc -ne 0 ] && grep -q 'exec: the API server answered 403' '$tmp/err' && grep -q RBAC '$tmp/err'"
check "... and the pod it made is deleted" no_pods

# A client certificate from the kubeconfig's *-data fields (O=system:masters).
cat >"$tmp/cert.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- {name: c, cluster: {server: $server, certificate-authority-data: $(base64 -w0 "$tmp/pki/ca.crt")}}
users:
- {name: u, user: {client-certificate-data: $(base64 -w0 "$tmp/pki/admin.crt"), client-key-data: $(base64 -w0 "$tmp/pki/admin.key")}}
contexts:
- {name: x, context: {cluster: c, user: u, namespace: $KUBE_NS}}
current-context: x
EOF
KUBE_KC=$tmp/cert.kubeconfig write_config
cli run -- echo by-certificate
check "kubeconfig: client certificate and CA from *-data fields (REST and WebSocket)" rc_and_out 0 by-certificate

# An exec credential plugin: a new token each run; the first one expires.
printf '%s\n' "$KUBE_TOKENS" 'plugin-token-1,polysandbox,4,' 'plugin-token-2,polysandbox,5,' >"$tmp/tokens.csv"
cat >"$tmp/plugin.sh" <<'EOF'
#!/bin/sh
n=$(cat "$PLUGIN_DIR/count" 2>/dev/null || echo 0); n=$((n + 1)); echo $n >"$PLUGIN_DIR/count"
case $KUBERNETES_EXEC_INFO in *'"interactive":false'*) ;; *) echo "no exec info" >&2; exit 3;; esac
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"plugin-token-%s"}}\n' "$n"
EOF
chmod 755 "$tmp/plugin.sh"
cat >"$tmp/plugin.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- {name: c, cluster: {server: $server, certificate-authority: $tmp/pki/ca.crt}}
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./plugin.sh
      env: [{name: PLUGIN_DIR, value: $tmp}]
      interactiveMode: Never
contexts:
- {name: x, context: {cluster: c, user: u, namespace: $KUBE_NS}}
current-context: x
EOF
KUBE_KC=$tmp/plugin.kubeconfig write_config
cli create --ttl 60s
id=$(cat "$tmp/out")
check "an exec credential plugin (relative to the kubeconfig) gives the token" \
    sh -c "[ $rc -eq 0 ] && [ \"\$(cat '$tmp/count')\" = 1 ]"
fake_call POST /_fake/token '{"token": "plugin-token-1", "expires_in": 0}'
cli exec "$id" -- echo after-expiry
check "the token expired (401): the plugin runs again, the request goes through" \
    sh -c "[ $rc -eq 0 ] && [ \"\$(cat '$tmp/out')\" = after-expiry ] && [ \"\$(cat '$tmp/count')\" = 2 ]"
cli destroy "$id"

# In-cluster: the service account's files and the service's address.
mkdir -p "$tmp/sa"
cp "$tmp/pki/ca.crt" "$tmp/sa/ca.crt"
printf '%s' "$KUBE_SBX_TOKEN" >"$tmp/sa/token"
printf '%s' "$KUBE_NS" >"$tmp/sa/namespace"
KUBE_SETTINGS="in_cluster = true
serviceaccount_dir = $tmp/sa" write_config
KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=$port cli run -- echo in-cluster
check "in-cluster: service account token, CA and namespace files" rc_and_out 0 in-cluster
(unset KUBERNETES_SERVICE_HOST; cli run -- true; echo "$rc" >"$tmp/rc")
check "in-cluster outside a pod: a configuration error naming the variables" \
    sh -c "[ \"\$(cat '$tmp/rc')\" != 0 ] && grep -q KUBERNETES_SERVICE_HOST '$tmp/err'"

# A server and a sealed token in the ini.
cli secret init
printf '%s' "$KUBE_SBX_TOKEN" >"$tmp/tok"
cli_in "$tmp/tok" secret seal
sealed=$(cat "$tmp/out")
KUBE_SETTINGS="server = $server
ca_file = $tmp/pki/ca.crt
namespace = $KUBE_NS
token = $sealed" write_config
cli run -- echo sealed
check "server and token = sealed:v1:... in the ini" rc_and_out 0 sealed
KUBE_KC=$tmp/nowhere write_config
cli run -- true
check "a kubeconfig that is not there: a configuration error naming it" \
    sh -c "[ $rc -ne 0 ] && grep -q '$tmp/nowhere' '$tmp/err'"
printf 'clusters: [\n' >"$tmp/bad.kubeconfig"
KUBE_KC=$tmp/bad.kubeconfig write_config
cli run -- true
check "a kubeconfig that is not YAML: refused with the line" \
    sh -c "[ $rc -ne 0 ] && grep -q 'not a YAML mapping.*line' '$tmp/err'"
write_config
done_testing
