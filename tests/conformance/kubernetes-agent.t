#!/bin/sh
# tests/conformance/kubernetes-agent.t - the conformance kit against the
# kubernetes provider in agent-sandbox mode: sandboxes are SandboxClaims on
# warm pools of the fake's agent-sandbox controller (tests/fakes/kube.py
# --agent-sandbox); exec and files go to the claimed pods.
. "$top_srcdir/tests/kube/lib.sh"
start_fake --agent-sandbox
kube_rbac && kube_agent_rbac || { echo "Bail out! cannot make the namespace and Roles"; exit 99; }
KUBE_SETTINGS="mode = agent-sandbox
warm_pool = 2" write_config
timeout -k 5 900 "$top_builddir/polysandbox-conformance" -t 300 kubernetes
