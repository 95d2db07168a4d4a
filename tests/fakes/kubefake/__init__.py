"""kubefake - the pieces of tests/fakes/kube.py, the Kubernetes API fake."""
