#!/bin/sh
# tests/microvm/run.sh - the microvm provider end to end: one VM booted
# (KVM where it really boots, else TCG), several execs in it (template
# code, exit status and stderr, stdin, a timeout and the VM still serving
# after it, its own kernel, a missing command, a command that closes its
# stdin sent no more of it), files in and out of the
# same VM (bytes exact, modes, missing files, unsafe paths, links a
# command made never followed), then `polysandbox run
# --template python --lang python` as a user types it (a second boot; the
# template's plain image, a docker name, is ignored).
#
# The guest image is built once by polysandbox-microvm-image into
# $MICROVM_CACHE (default /var/cache/polysandbox-test/microvm-guest, or
# the build tree where that cannot be written) and rebuilt only when its
# inputs change.  Skips (TAP "1..0 # SKIP") with a named reason without QEMU or the
# Debian cloud kernel.
. "$top_srcdir/tests/cli/lib.sh"

. "$top_srcdir/tests/microvm/guest.sh"
plan 19

t0=$(date +%s)
"$top_builddir/tests/microvm/test-microvm-execs" "$tmp/config" > "$tmp/execs" 2>&1
rc=$?
sed 's/^/# /' "$tmp/execs"
echo "# one boot, seven execs and the files checks: $(($(date +%s) - t0)) s"
line() { grep "^$1 " "$tmp/execs"; }
check "a sandbox is a VM that boots to its agent" is_rc 0
check "python code through the template prints 42" [ "$(line code)" = "code ok 0 42/|" ]
check "exit status and stderr" [ "$(line exit)" = "exit nonzero_exit 3 |oops/" ]
check "stdin reaches the command" [ "$(line stdin)" = "stdin ok 0 ABC/|" ]
check "a timeout kills the command (and the VM serves the next exec)" sh -c "grep -q '^timeout timeout ' '$tmp/execs'"
host=$(uname -r)
check "the command runs on the guest's own kernel, not the host's ($host)" sh -c \
    "grep -q '^kernel ok 0 [^|]*cloud-amd64/|\$' '$tmp/execs' && ! grep -q '^kernel .* $host/' '$tmp/execs'"
check "a missing command is not_found" sh -c "grep -q '^missing not_found 127 ' '$tmp/execs'"
# The agent asks for no more stdin once the command closed it: of 2 MiB
# the host read at most the two 64 KiB chunks asked for before.
check "a command that closed its stdin is sent no more of it" sh -c \
    "grep -qxF 'stdin-closed ok 0 closed/|' '$tmp/execs' &&
     [ \"\$(sed -n 's/^stdin-closed-read //p' '$tmp/execs')\" -le 131072 ]"
# Files checks: each named file-NAME line says ok; lines read as given.
fok() { for n in "$@"; do [ "$(line "file-$n")" = "file-$n ok" ] || return 1; done; }
has() { for l in "$@"; do grep -qxF "$l" "$tmp/execs" || return 1; done; }
check "upload: a command sees the file (its size)" has 'seen ok 0 307207/|'
check "upload and download byte-exact" fok put back
check "a file a command wrote downloads byte-exact" fok made
check "an upload's mode is kept (an uploaded 0755 script runs)" has 'mode ok 0 ran/|'
check "a missing file or directory is not_found, a directory no file, over the max a limit" \
    fok missing missing-dir directory over-max
check "unsafe paths (.., absolute, empty parts) refused both ways" \
    fok bad-put-0 bad-get-0 bad-put-1 bad-get-1 bad-put-2 bad-get-2 bad-put-3 bad-get-3 \
        bad-put-4 bad-get-4 bad-put-5 bad-get-5
check "links a command made refused by name (download and upload)" \
    fok link-get dlink-get hlink-put flink-put dlink-put
check "nothing written outside /work through them, and the VM serves after it all" \
    has 'outside ok 0 False False False/|'
check "every files check passed (25)" \
    sh -c '! grep -q "^file-.* FAIL" "$1" && [ "$(grep -c "^file-.* ok\$" "$1")" -eq 25 ]' \
    sh "$tmp/execs"

# --template python: its plain image (python:3.11-slim, meant for docker)
# reaches microvm as a default, which it ignores (an asked one it
# refuses: image.sh).
t0=$(date +%s)
cli run --provider microvm --template python --lang python -c 'print(6*7)'
echo "# polysandbox run (one boot): $(($(date +%s) - t0)) s"
check "polysandbox run --provider microvm --template python (its plain image ignored) prints 42" \
    rc_and_out 0 42
cli doctor --provider microvm
check "doctor names the accelerator and why" sh -c "grep -Eq 'accel.*(kvm|tcg)' '$tmp/out' '$tmp/err'"
done_testing
