#!/bin/sh
# tests/kube/kubectl.sh - the Kubernetes fake as kubectl sees it
#
# kubectl (1.32, its own Go client, TLS verified against the fake's CA)
# creates, lists with label selectors, watches, waits for, execs into
# (WebSocket v5: stdout, stderr, exit codes, stdin to EOF), reads logs of
# and deletes pods; applies manifests with --dry-run=server; is refused
# with a bad token (401) and by RBAC (403); gets a ServiceAccount token
# (TokenRequest) and checks access with auth can-i; hits a ResourceQuota.
. "$top_srcdir/tests/kube/lib.sh"
command -v kubectl >/dev/null 2>&1 || skip_all "kubectl is not installed"

plan 24
start_fake

kc version
check "kubectl reaches the fake over TLS (verified) with a bearer token" \
    eval 'is_rc 0 && out_has "Server Version: v1.32.4-fake"'

kc run p1 --image=python:3.11-slim --labels=app=sbx,tier=a --restart=Never --command -- sleep 600
check "kubectl run creates a pod" eval 'is_rc 0 && out_has "pod/p1 created"'
kc wait --for=condition=Ready pod/p1 --timeout=30s
check "kubectl wait sees it Ready (a watch)" eval 'is_rc 0 && out_has "condition met"'

kc run p2 --image=busybox --labels=app=other --restart=Never --command -- sleep 600
kc get pods -l 'app in (sbx,x),tier!=b' -o name
check "a set-based label selector picks p1 only" eval 'is_rc 0 && out_is "pod/p1"'
kc get pods --field-selector=status.phase=Running,metadata.name=p1 -o jsonpath='{.items[*].metadata.name}'
check "a field selector picks p1" eval 'is_rc 0 && out_is "p1"'
kc get pods -l 'app in sbx'
check "a malformed selector is a 400 with the server's words" \
    eval '! is_rc 0 && err_has "unable to parse requirement"'

kc exec p1 -- sh -c 'echo out; echo err >&2'
check "exec: stdout and stderr apart" eval 'is_rc 0 && out_is out && err_has err'
kc exec p1 -- sh -c 'exit 7'
check "exec: the exit code comes back (7)" eval 'is_rc 7 && err_has "command terminated with exit code 7"'
head -c 200000 /dev/urandom >"$tmp/blob"
kc_in "$tmp/blob" exec -i p1 -- sh -c 'cat; echo done >&2'
check "exec -i: 200 kB of binary stdin come back byte-exact after EOF (v5 close)" \
    eval 'is_rc 0 && cmp -s "$tmp/out" "$tmp/blob" && err_has done'
kc exec p1 -- no-such-program
check "exec of a program the image lacks: refused with the runtime's words" \
    eval '! is_rc 0 && err_has "executable file not found"'
kc exec p1 -- sh -c 'id -u; hostname; ls /proc | grep -c "^[0-9]"'
check "exec runs in the pod's own namespaces (hostname, PID namespace)" \
    eval 'is_rc 0 && [ "$(sed -n 2p "$tmp/out")" = p1 ]'

timeout 20 kubectl get pods -w --output-watch-events -l app=w >"$tmp/watch.out" 2>&1 &
watch_pid=$!
sleep 1
kc run w1 --image=debian:12 --labels=app=w --restart=Never --command -- sh -c 'echo hello-log; sleep 600'
kc wait --for=condition=Ready pod/w1 --timeout=30s
kc logs w1
check "logs of the container" eval 'is_rc 0 && out_has hello-log'
kc delete pod w1 --grace-period=0
check "delete --grace-period=0 waits until the pod is gone" eval 'is_rc 0 && out_has deleted'
sleep 1
kill "$watch_pid" 2>/dev/null
wait "$watch_pid" 2>/dev/null
check "get -w saw the pod added, running and deleted" \
    eval 'grep -q "ADDED.*w1" "$tmp/watch.out" && grep -q "MODIFIED.*w1.*Running" "$tmp/watch.out" && grep -q "DELETED.*w1" "$tmp/watch.out"'
kc get pod w1
check "a deleted pod is NotFound" eval '! is_rc 0 && err_has "pods \"w1\" not found"'

kc --context fake-cert get pod p1 -o jsonpath='{.status.phase}'
check "a client certificate (O=system:masters) is accepted" eval 'is_rc 0 && out_is Running'
kc --token=wrong-token get pods
check "a bad token is 401" eval '! is_rc 0 && err_has "You must be logged in"'

cat >"$tmp/rbac.yaml" <<'EOF'
apiVersion: v1
kind: ServiceAccount
metadata: {name: runner, namespace: default}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: runner, namespace: default}
rules:
- {apiGroups: [""], resources: [pods], verbs: [get, list, watch, create, delete]}
- {apiGroups: [""], resources: [pods/exec], verbs: [create]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: runner, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: runner}
subjects: [{kind: ServiceAccount, name: runner, namespace: default}]
EOF
kc apply --dry-run=server -f "$tmp/rbac.yaml"
check "apply --dry-run=server validates without storing" \
    eval 'is_rc 0 && out_has "role.rbac.authorization.k8s.io/runner created (server dry run)"'
kc get serviceaccount runner
check "nothing of the dry run was stored" eval '! is_rc 0 && err_has NotFound'
kc apply -f "$tmp/rbac.yaml"
kc create token runner --duration=10m
tok=$(cat "$tmp/out")
check "create token (TokenRequest) for the ServiceAccount" eval 'is_rc 0 && [ -n "$tok" ]'
kc --token="$tok" exec p1 -- echo as-runner
check "RBAC: the ServiceAccount may exec (pods/exec create)" eval 'is_rc 0 && out_is as-runner'
kc --token="$tok" get secrets
check "RBAC: ... but not list secrets (403 with the server's words)" \
    eval '! is_rc 0 && err_has "cannot list resource \"secrets\" in API group \"\" in the namespace \"default\""'

kc create namespace quota
cat >"$tmp/quota.yaml" <<'EOF'
apiVersion: v1
kind: ResourceQuota
metadata: {name: q, namespace: quota}
spec: {hard: {pods: "1"}}
EOF
kc apply -f "$tmp/quota.yaml"
kc -n quota run q1 --image=debian:12 --restart=Never --command -- sleep 60
kc -n quota run q2 --image=debian:12 --restart=Never --command -- sleep 60
check "a ResourceQuota refuses the pod past it (403 exceeded quota)" \
    eval '! is_rc 0 && err_has "exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1"'

kc run bad --image=debian:12 --labels='x=not a value' --restart=Never
check "an invalid label value is refused" eval '! is_rc 0 && err_has "metadata.labels"'
done_testing
