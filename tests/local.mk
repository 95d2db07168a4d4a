# tests/local.mk - shared test files and benchmarks
EXTRA_DIST += tests/bench/run.sh tests/bench/latency.py tests/config/templates.d
EXTRA_DIST += tests/lib/tap.sh tests/lib/eval-faults.py tests/lib/eval-faults.sh
