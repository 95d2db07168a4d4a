#!/bin/sh
# contrib/cppcheck.sh - the static-analysis pass of .ci/run: cppcheck over
# the tracked C sources (core/, plugins/, sdk/, tests/; never the generated
# ones, which are not tracked: with them a scan of the folders took 14
# minutes, the byte arrays of core/server/openapi-data.c over 90 s alone).
# Exits 1 on any finding. Run it from the top of a built tree (the modal
# provider's generated protobuf headers must exist); extra arguments go to
# cppcheck (for instance a file list: contrib/cppcheck.sh core/run/options.c).
#
# A false positive is silenced on the line above it, with why:
#     /* cppcheck-suppress nullPointerRedundantCheck ; buf is NULL only on error */
# or, for a library macro cppcheck cannot see, in contrib/cppcheck.cfg.
#
# One configuration only (-D__linux__ -D__x86_64__, the CI machine's):
# without -D cppcheck tries every #ifdef combination, and the docker
# seccomp profile's #error for other architectures stops the file. The
# system headers are not parsed (-I /usr/include made it 4 times slower); what
# cppcheck must know of them is in contrib/cppcheck.cfg. 20 to 40 s on two
# busy cores (15 s of CPU).
#
# "information" makes a suppression that no longer matches a finding
# (unmatchedSuppression) a finding itself, so none outlives its cause.
# It would also report missingIncludeSystem, but cppcheck 2.10 does that
# only under --check-config: no --suppress for it is needed.
set -eu
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then
    files="$*"
else
    files=$(git ls-files -- 'core/*.c' 'plugins/*.c' 'sdk/*.c' 'tests/*.c')
fi
# shellcheck disable=SC2086
exec cppcheck -q -j"${CPPCHECK_JOBS:-2}" --std=c11 --enable=warning,portability,information \
    --inline-suppr --error-exitcode=1 --library=contrib/cppcheck.cfg \
    -D__linux__ -D__x86_64__ -DHAVE_CONFIG_H -I. -Icore -Icore/include -Isdk/include -Isdk $files
