# tests/python/local.mk - the Python package against the build tree's
# library and a real polysandboxd.  test_*.py are pytest files (their
# fixtures and TAP printer in conftest.py), run by the .sh of the same
# name through run-python.sh.

PYTHON_TESTS = tests/python/binding.sh tests/python/asyncio.sh tests/python/sandbox.sh \
	tests/python/stream.sh \
	tests/python/files.sh tests/python/compare.sh tests/python/evaluate.sh \
	tests/python/remote-eval.sh tests/python/install.sh \
	tests/python/binding-cffi.sh tests/python/cffi-check.sh tests/python/pip-install.sh \
	tests/python/docker.sh tests/python/example.sh
TESTS += $(PYTHON_TESTS)
dist_check_SCRIPTS += $(PYTHON_TESTS)
EXTRA_DIST += tests/python/conftest.py tests/python/pytest.ini \
	tests/python/test_binding.py tests/python/test_asyncio.py tests/python/test_files.py \
	tests/python/test_sandbox.py tests/python/test_stream.py tests/python/test_evaluate.py \
	tests/python/test_compare.py tests/python/test_remote_eval.py \
	tests/python/test_docker.py tests/python/test_example.py \
	tests/python/harness.py tests/python/unlisted.py \
	tests/python/run-python.sh tests/python/sanitizer-env.sh tests/python/no-asan.sh
