# tests/python/local.mk - the Python package against the build tree's
# library and a real polysandboxd.

PYTHON_TESTS = tests/python/binding.sh tests/python/sandbox.sh tests/python/stream.sh \
	tests/python/files.sh tests/python/compare.sh tests/python/evaluate.sh \
	tests/python/remote-eval.sh tests/python/install.sh
TESTS += $(PYTHON_TESTS)
dist_check_SCRIPTS += $(PYTHON_TESTS)
EXTRA_DIST += tests/python/binding.py tests/python/sandbox.py tests/python/stream.py \
	tests/python/files.py tests/python/compare.py tests/python/evaluate.py \
	tests/python/remote-eval.py \
	tests/python/harness.py tests/python/unlisted.py \
	tests/python/run-python.sh tests/python/sanitizer-env.sh
