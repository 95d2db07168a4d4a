# tests/server/local.mk - tests of polysandboxd
#
# Each test starts a real polysandboxd from the build tree on a free
# loopback port and drives it with curl and python3 (standard library).

SERVER_TESTS = \
	tests/server/run.sh \
	tests/server/artifacts.sh \
	tests/server/openapi.sh \
	tests/server/lifecycle.sh \
	tests/server/auth.sh \
	tests/server/input.sh \
	tests/server/backpressure.sh \
	tests/server/config.sh \
	tests/server/sse.sh \
	tests/server/list.sh \
	tests/server/soak.sh \
	tests/server/jobs.sh \
	tests/server/jobs-resume.sh \
	tests/server/eval-results.sh \
	tests/server/jobs-fair.sh \
	tests/server/jobs-bounds.sh \
	tests/server/jobs-owner.sh \
	tests/server/piston.sh \
	tests/server/judge0.sh \
	tests/server/judge0-callbacks.sh \
	tests/server/sandboxfusion.sh \
	tests/server/sandboxfusion-data.sh \
	tests/server/seed.sh \
	tests/server/files.sh \
	tests/server/web.sh \
	tests/server/websocket.sh
TESTS += $(SERVER_TESTS)
dist_check_SCRIPTS += $(SERVER_TESTS)
EXTRA_DIST += tests/server/lib.sh tests/server/openapi.py tests/server/openapi_compat.py
EXTRA_DIST += tests/server/jobs-lib.sh tests/server/ws-lib.sh tests/server/callback-receiver.py
EXTRA_DIST += tests/server/npm.sh tests/server/npm/package.json tests/server/npm/package-lock.json \
	tests/server/piston-client.mjs tests/server/ws-client.mjs tests/server/ws-raw.py

# The WebSocket framing's checks (ws-frame-check.c, also the fuzz
# harness's target "ws"), replayed over tests/fuzz/corpus/ws and 20000
# mutations in make check; `make fuzz-ws-frame` builds them as a
# standalone libFuzzer program (clang).
check_PROGRAMS += tests/server/ws-frame-replay
tests_server_ws_frame_replay_SOURCES = tests/server/fuzz-ws-frame.c \
	tests/server/ws-frame-check.c tests/server/ws-frame-check.h core/server/ws-frame.c \
	core/server/ws-frame.h core/server/utf8.c core/server/utf8.h
tests_server_ws_frame_replay_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core/server
TESTS += tests/server/ws-frame-replay
FUZZ_WS_SECONDS = 60
fuzz-ws-frame:
	clang -g -O1 -fsanitize=fuzzer,address,undefined -DSRV_FUZZING -I$(top_builddir) \
	  -I$(top_srcdir)/core/server $(top_srcdir)/tests/server/fuzz-ws-frame.c \
	  $(top_srcdir)/tests/server/ws-frame-check.c \
	  $(top_srcdir)/core/server/ws-frame.c $(top_srcdir)/core/server/utf8.c \
	  -o tests/server/fuzz-ws-frame
	mkdir -p tests/server/ws-corpus-run
	tests/server/fuzz-ws-frame -max_total_time=$(FUZZ_WS_SECONDS) \
	  tests/server/ws-corpus-run $(top_srcdir)/tests/fuzz/corpus/ws
.PHONY: fuzz-ws-frame
