# python/local.mk - the Python package (pure Python over libpolysandbox
# through ctypes; see python/README.md).  Not installed by `make install`
# yet: `pip install ./python` installs it.

PYTHON_FILES = \
	python/README.md \
	python/pyproject.toml \
	python/polysandbox/__init__.py \
	python/polysandbox/_fields.py \
	python/polysandbox/_native.py \
	python/polysandbox/client.py \
	python/polysandbox/errors.py \
	python/polysandbox/evalargs.py \
	python/polysandbox/info.py \
	python/polysandbox/local.py \
	python/polysandbox/many.py \
	python/polysandbox/report.py \
	python/polysandbox/request.py \
	python/polysandbox/result.py \
	python/polysandbox/sandbox.py \
	python/polysandbox/stream.py \
	python/polysandbox/py.typed
EXTRA_DIST += $(PYTHON_FILES)
