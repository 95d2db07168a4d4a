# examples/local.mk - example programs (polysandbox run examples/hello.py)
EXTRA_DIST += examples/hello.py
