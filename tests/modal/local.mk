# tests/modal/local.mk - the modal provider against the Modal fake
#
# tests/fakes/modal.py is a local fake of Modal's gRPC API (python3-grpcio,
# messages compiled from plugins/modal/*.proto with protoc at start); each
# script starts its own on free ports of 127.0.0.1, writes a private
# configuration pointing at it, and kills it on exit.

MODAL_TESTS = \
	tests/modal/cli.sh \
	tests/modal/faults.sh \
	tests/modal/eval-faults.sh \
	tests/modal/files.sh \
	tests/secrets/modal.sh \
	tests/sdk/modal.sh
if BUILD_PROVIDER_MODAL
TESTS += $(MODAL_TESTS)
endif
dist_check_SCRIPTS += $(MODAL_TESTS)
EXTRA_DIST += tests/modal/lib.sh tests/fakes/modal.py tests/sdk/modal.mjs
