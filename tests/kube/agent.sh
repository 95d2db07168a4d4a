#!/bin/sh
# tests/kube/agent.sh - the kubernetes provider in agent-sandbox mode against
# the fake's agent-sandbox controller: the SandboxTemplate and
# SandboxWarmPool it makes, a create that is a claim on a warm pod, labels
# on the claim and its pod, destroy (claim, Sandbox and pod go; the pool
# fills up again), the time-to-live as the claim's shutdownTime, and a cold
# start when the pool is empty.
. "$top_srcdir/tests/kube/lib.sh"
plan 10
start_fake --agent-sandbox
kube_rbac && kube_agent_rbac || { echo "Bail out! cannot make the namespace and Roles"; exit 99; }
KUBE_SETTINGS="mode = agent-sandbox
warm_pool = 2" write_config
EXT=/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/$KUBE_NS

# obj_check PATH PYTHON-EXPR: with o = the object (or list) at PATH.
obj_check() {
    fake_call GET "$1" || return 1
    "$PY" -c 'import json, sys
o = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$tmp/fake_answer" "$2"
}
# wait_for PATH EXPR: up to 30 s.
wait_for() {
    i=0
    while ! obj_check "$1" "$2" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    obj_check "$1" "$2"
}

cli create --label team=green --ttl 300s
id=$(cat "$tmp/out")
check "create: a SandboxClaim" obj_check "$EXT/sandboxclaims/$id" \
    'o["spec"]["lifecycle"]["shutdownPolicy"] == "Delete" and o["metadata"]["labels"]["label.polysandbox.io/team"] == "green"'
check "the provider made a SandboxTemplate (a hardened pod) and a SandboxWarmPool of 2" \
    obj_check "$EXT/sandboxwarmpools" \
    'len(o["items"]) == 1 and o["items"][0]["spec"]["replicas"] == 2 and o["items"][0]["spec"]["sandboxTemplateRef"]["name"] == o["items"][0]["metadata"]["name"]'
check "... whose pod template is pods mode's (no token, read-only root, no TTL of its own)" \
    obj_check "$EXT/sandboxtemplates" \
    '(lambda s: s["automountServiceAccountToken"] is False and s["containers"][0]["securityContext"]["readOnlyRootFilesystem"] and "activeDeadlineSeconds" not in s)(o["items"][0]["spec"]["podTemplate"]["spec"])'
# The first claim came before the pool had warm pods (a cold start); with
# the pool full, the next one is a warm pod's.
wait_for "$EXT/sandboxwarmpools" 'o["items"][0]["status"]["readyReplicas"] == 2' || exit 99
cli destroy "$id"
cli create --label team=green --ttl 300s
id=$(cat "$tmp/out")
fake_call GET "$EXT/sandboxclaims/$id"
pod=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["status"]["sandbox"]["name"])' "$tmp/fake_answer")
check "the claimed pod was a warm one, and carries the sandbox's labels" \
    obj_check "/api/v1/namespaces/$KUBE_NS/pods/$pod" \
    'o["metadata"]["labels"]["agents.x-k8s.io/launch-type"] == "warm" and o["metadata"]["labels"]["label.polysandbox.io/team"] == "green" and "agents.x-k8s.io/warm-pool-sandbox" not in o["metadata"]["labels"]'
cli exec "$id" -- sh -c 'echo in-$(hostname)'
check "exec goes to the claimed pod" rc_and_out 0 "in-$pod"
cli list --json
check "list: the claim with its exact labels" \
    json_check "any(x['id'] == '$id' and x['labels'].get('team') == 'green' for x in j)"
cli destroy "$id"
check "destroy: the claim, its Sandbox and its pod go" \
    eval 'wait_for "/api/v1/namespaces/$KUBE_NS/pods" "not [p for p in o[\"items\"] if p[\"metadata\"][\"name\"] == \"$pod\"]" && obj_check "$EXT/sandboxclaims" "not o[\"items\"]"'
check "... and the pool is full again (2 ready)" \
    wait_for "$EXT/sandboxwarmpools" 'o["items"][0]["status"]["readyReplicas"] == 2'

cli create --ttl 2s
id=$(cat "$tmp/out")
sleep 3
check "the time-to-live is the claim's shutdownTime: the controller ends it" \
    wait_for "$EXT/sandboxclaims" "not [c for c in o['items'] if c['metadata']['name'] == '$id']"

KUBE_SETTINGS="mode = agent-sandbox
warm_pool = 0" write_config
cli run -- echo cold
check "an empty pool: the claim starts a cold sandbox" rc_and_out 0 cold
done_testing
