#!/bin/sh
# tests/microvm/image.sh - an image the microvm provider is asked for
# (--image, a template's image.microvm) but that was never pulled is
# refused before any VM starts, with an error naming the provider and
# the image and saying how to pull it (exit 2); a template's plain image,
# a default meant for other providers, is ignored and the create goes on
# to start its VM.  oci.sh runs a pulled image.
#
# Needs neither QEMU nor KVM: the VMM is a script that only records that
# it was started and exits, so a create that gets that far fails as a
# VM that stopped before its agent answered (exit 125).  run.sh boots a
# real guest with a template's plain image (and prints 42).
. "$top_srcdir/tests/cli/lib.sh"

. "$top_srcdir/tests/microvm/fakevmm.sh"
echo "snapshot = off" >> "$tmp/config/providers.d/microvm.ini" || exit 99
# A language whose template asks microvm for an image by name.
cat > "$tmp/config/templates.d/pyvm.ini" <<EOF || exit 99
[template]
extensions = .pyvm
run = python3 main.pyvm
image = python:3.11-slim
image.microvm = guest:python
EOF
CLI_TIMEOUT=120
plan 8

started() { [ -s "$tmp/vmm-started" ]; }

cli run --provider microvm --image python:3.12-slim -- true
check "--image on microvm is refused with exit status 2" is_rc 2
check "the error names the provider and the image, and how to pull it" sh -c \
    "grep -q 'provider microvm: image .python:3.12-slim. is not pulled' '$tmp/err' &&
     grep -q -- '--image python:3.12-slim' '$tmp/err' &&
     grep -q 'polysandbox image pull python:3.12-slim' '$tmp/err'"
check "no VM was started for it" sh -c "! [ -e '$tmp/vmm-started' ]"

cli run --provider microvm --lang pyvm -c 'print(1)'
check "a template's image.microvm never pulled is refused too (2), naming it, no VM started" sh -c \
    "[ $rc -eq 2 ] && grep -q 'provider microvm: image .guest:python. is not pulled' '$tmp/err' &&
     ! [ -e '$tmp/vmm-started' ]"

cli run --provider microvm --template python -- true
check "a template's plain image is not refused: the create starts its VM" sh -c \
    "[ $rc -eq 125 ] && [ -s '$tmp/vmm-started' ] && ! grep -q 'cannot run image' '$tmp/err'"
check "... and fails only because that VM stopped before its agent answered" \
    eval 'err_has "stopped before its agent answered" && ! err_has "is not pulled"'
rm -f "$tmp/vmm-started"

cli doctor --provider microvm
check "doctor says how the provider runs images" sh -c \
    "grep -q 'images.*erofs disk' '$tmp/out' '$tmp/err'"
check "doctor starts no VM" sh -c "! [ -e '$tmp/vmm-started' ]"
done_testing
