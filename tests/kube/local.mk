# tests/kube/local.mk - the Kubernetes fake (tests/fakes/kube.py) and its
# fidelity, proven with clients nobody here wrote: kubectl, Debian's
# python3-kubernetes and npm's @kubernetes/client-node (installed by
# client-node.sh with npm ci from the pinned package-lock.json).  Each
# script starts its own fake over TLS on a free port of 127.0.0.1 and
# kills it on exit; a client that is not installed is a skip.

KUBE_CLIENT_TESTS = \
	tests/kube/kubectl.sh \
	tests/kube/contrib.sh \
	tests/kube/python-client.sh \
	tests/kube/client-node.sh
TESTS += $(KUBE_CLIENT_TESTS)
dist_check_SCRIPTS += $(KUBE_CLIENT_TESTS)

# The kubernetes provider against the fake.
KUBE_PROVIDER_TESTS = \
	tests/kube/provider.sh \
	tests/kube/agent.sh \
	tests/kube/faults.sh \
	tests/kube/ulimit.sh \
	tests/kube/stdin-stream.sh \
	tests/kube/signal.sh \
	tests/kube/server-ws-signal.sh \
	tests/kube/eval-faults.sh
if BUILD_PROVIDER_KUBERNETES
TESTS += $(KUBE_PROVIDER_TESTS)
check_PROGRAMS += tests/kube/test-stdin-stream
tests_kube_test_stdin_stream_SOURCES = tests/kube/test-stdin-stream.c tests/unit/tap.h
tests_kube_test_stdin_stream_LDADD = core/libpolysandbox.la -lpthread
check_PROGRAMS += tests/kube/test-signal
tests_kube_test_signal_SOURCES = tests/kube/test-signal.c tests/unit/tap.h
tests_kube_test_signal_LDADD = core/libpolysandbox.la
endif
dist_check_SCRIPTS += $(KUBE_PROVIDER_TESTS)
KUBE_FAKE_FILES = \
	tests/fakes/kube.py \
	tests/fakes/kubefake/__init__.py \
	tests/fakes/kubefake/admission.py \
	tests/fakes/kubefake/agentsandbox.py \
	tests/fakes/kubefake/auth.py \
	tests/fakes/kubefake/cluster.py \
	tests/fakes/kubefake/container_init.py \
	tests/fakes/kubefake/errors.py \
	tests/fakes/kubefake/execsession.py \
	tests/fakes/kubefake/faults.py \
	tests/fakes/kubefake/labelsel.py \
	tests/fakes/kubefake/patch.py \
	tests/fakes/kubefake/pods.py \
	tests/fakes/kubefake/proto.py \
	tests/fakes/kubefake/quantity.py \
	tests/fakes/kubefake/resources.py \
	tests/fakes/kubefake/runtime.py \
	tests/fakes/kubefake/server.py \
	tests/fakes/kubefake/store.py \
	tests/fakes/kubefake/tables.py \
	tests/fakes/kubefake/ws.py
KUBE_CONTRIB_FILES = \
	contrib/kubernetes/README.md \
	contrib/kubernetes/Dockerfile \
	contrib/kubernetes/kustomization.yaml \
	contrib/kubernetes/namespace.yaml \
	contrib/kubernetes/serviceaccount.yaml \
	contrib/kubernetes/rbac.yaml \
	contrib/kubernetes/rbac-agent-sandbox.yaml \
	contrib/kubernetes/configmap.yaml \
	contrib/kubernetes/networkpolicy-sandboxes.yaml \
	contrib/kubernetes/networkpolicy.yaml \
	contrib/kubernetes/deployment.yaml \
	contrib/kubernetes/service.yaml \
	contrib/kubernetes/pdb.yaml \
	contrib/kubernetes/servicemonitor.yaml
EXTRA_DIST += $(KUBE_FAKE_FILES) $(KUBE_CONTRIB_FILES) tests/kube/lib.sh tests/kube/python-client.py \
	tests/kube/client-node.mjs tests/kube/node/package.json tests/kube/node/package-lock.json
