#!/bin/sh
# tests/microvm/firecracker.sh - the microvm provider with vmm =
# firecracker against tests/fakes/firecracker.py (no Firecracker binary
# exists here): a run boots through the API in Firecracker's order with
# valid bodies and talks to the agent over the vsock socket; a snapshot
# is paused, created and resumed, and each later VM is loaded from it
# and seeded; a persistent sandbox outlives create, is attached over
# vsock by later processes and stopped by destroy; fault messages come
# back as errors (and a firecracker that dies, its last words); a hostile
# agent's frames out of place end the run; a missing binary and
# impossible settings are refused by name.  Needs neither QEMU nor KVM.
. "$top_srcdir/tests/cli/lib.sh"

. "$top_srcdir/tests/microvm/fakevmm.sh"
command -v python3 >/dev/null 2>&1 || { echo "1..0 # SKIP no python3 for the fake"; exit 0; }
ini=$tmp/config/providers.d/microvm.ini
sed -i '/^accel/d' "$ini" || exit 99
: > "$tmp/rootfs.img" || exit 99
cat >> "$ini" <<EOF || exit 99
firecracker = $top_srcdir/tests/fakes/firecracker.py
rootfs = $tmp/rootfs.img
snapshot = off
EOF
FAKE_FC_LOG=$tmp/fc.log
TMPDIR=$tmp  # the fake's guest work directories, removed with $tmp
export FAKE_FC_LOG TMPDIR
CLI_TIMEOUT=60
PY=${PY:-python3}
plan 32

# calls: the API requests logged, one per line: "PID METHOD PATH STATUS".
calls() { "$PY" -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if "method" in e:
        print(e["pid"], e["method"], e["path"], e["status"])
' "$FAKE_FC_LOG"; }
# shape: the same without pids, one line.
shape() { calls | cut -d" " -f2- | tr '\n' ';'; }
# body METHOD PATH KEY: that request's body's KEY (the last one logged).
body() { "$PY" -c '
import json, sys
v = None
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("method") == sys.argv[2] and e.get("path") == sys.argv[3]:
        v = e["body"]
for k in sys.argv[4].split("."):
    v = v[k]
print(json.dumps(v))
' "$FAKE_FC_LOG" "$@"; }
# leftover: the fakes still running in a VM directory of this test.
leftover() { for p in $(pgrep -f fakes/firecracker.py); do
    case "$(readlink "/proc/$p/cwd")" in "$tmp"/*) echo "$p" ;; esac; done; }
boot_bodies() {
    [ "$(body PUT /machine-config vcpu_count)" = 1 ] &&
    [ "$(body PUT /machine-config mem_size_mib)" = 512 ] &&
    [ "$(body PUT /boot-source kernel_image_path)" = "\"$tmp/vmlinuz\"" ] &&
    [ "$(body PUT /boot-source initrd_path)" = "\"$tmp/initrd.cpio\"" ] &&
    body PUT /boot-source boot_args | grep -q "sbx.vsock=52" &&
    [ "$(body PUT /drives/rootfs path_on_host)" = "\"$tmp/rootfs.img\"" ] &&
    [ "$(body PUT /drives/rootfs is_root_device)" = true ] &&
    [ "$(body PUT /drives/rootfs is_read_only)" = true ] &&
    [ "$(body PUT /vsock uds_path)" = "\"vsock.sock\"" ] &&
    [ "$(body PUT /actions action_type)" = "\"InstanceStart\"" ]
}
snap_bodies() {
    d=$tmp/state/microvm/fc-snapshot
    [ "$(body PUT /snapshot/create snapshot_type)" = "\"Full\"" ] &&
    [ "$(body PUT /snapshot/create snapshot_path)" = "\"$d/vm.state.new\"" ] &&
    [ "$(body PUT /snapshot/create mem_file_path)" = "\"$d/vm.mem.new\"" ] &&
    [ "$(body PUT /snapshot/load snapshot_path)" = "\"$d/vm.state\"" ] &&
    [ "$(body PUT /snapshot/load mem_backend.backend_type)" = "\"File\"" ] &&
    [ "$(body PUT /snapshot/load mem_backend.backend_path)" = "\"$d/vm.mem\"" ] &&
    [ "$(body PUT /snapshot/load resume_vm)" = true ]
}

cli run --provider microvm -- echo hello-fc
check "a run on the fake prints the command's output" sh -c '[ "$1" -eq 0 ] && [ "$(cat "$2")" = hello-fc ]' \
    sh "$rc" "$tmp/out"
[ "$rc" -eq 0 ] || sed 's/^/# /' "$tmp/err"
check "booted in Firecracker's order, every request answered 204" \
    test "$(shape)" = "PUT /machine-config 204;PUT /boot-source 204;PUT /drives/rootfs 204;PUT /vsock 204;PUT /actions 204;"
check "the bodies: 1 vCPU of 512 MiB, the kernel and initrd, the agent's vsock port, a read-only root drive" boot_bodies
check "the VM's process and directory are gone after the run" sh -c \
    '[ -z "$1" ] && [ -z "$(ls "$2/state/microvm" 2>/dev/null | grep "^vm\.")" ]' sh "$(leftover)" "$tmp"

: > "$FAKE_FC_LOG"
cli run --provider microvm --lang python -c 'print(6*7)'
check "a template's program goes over vsock as FILE and EXEC" sh -c \
    '[ "$1" -eq 0 ] && [ "$(cat "$2")" = 42 ] && grep -q "\"agent\": \"FILE\"" "$3"' \
    sh "$rc" "$tmp/out" "$FAKE_FC_LOG"

FAKE_FC_FAULT='PUT /boot-source=Invalid kernel: not an ELF image' \
    cli run --provider microvm -- echo never
check "a fault_message comes back as the error, naming the request" sh -c \
    '[ "$1" -eq 125 ] && grep -q "PUT /boot-source: HTTP 400: Invalid kernel: not an ELF image" "$2"' \
    sh "$rc" "$tmp/err"
check "and the firecracker process it started is stopped" test -z "$(leftover)"

# A hostile agent (every guest byte is): a WANT for stdin that is not
# streamed, a frame of no known type; each ends the run as the sandbox's error.
FAKE_FC_AGENT=want cli run --provider microvm -- echo never
check "an agent asking for stdin not streamed breaks the protocol: the run fails, named" sh -c \
    '[ "$1" -ne 0 ] && grep -q "broke the protocol: stdin asked for out of turn" "$2"' \
    sh "$rc" "$tmp/err"
FAKE_FC_AGENT=unknown cli run --provider microvm -- echo never
check "a frame of no known type from the agent: the run fails, named" sh -c \
    '[ "$1" -ne 0 ] && grep -q "broke the protocol: unknown frame type" "$2"' sh "$rc" "$tmp/err"

sed -i 's/^snapshot = off/snapshot = auto/' "$ini" || exit 99
: > "$FAKE_FC_LOG"
cli run --provider microvm -- echo from-snapshot
check "with snapshot = auto the first run prints from a restored VM" sh -c \
    '[ "$1" -eq 0 ] && [ "$(cat "$2")" = from-snapshot ]' sh "$rc" "$tmp/out"
check "the snapshot: boot, then PATCH Paused, PUT /snapshot/create, PATCH Resumed; then a load alone" \
    test "$(shape)" = "PUT /machine-config 204;PUT /boot-source 204;PUT /drives/rootfs 204;PUT /vsock 204;PUT /actions 204;PATCH /vm 204;PUT /snapshot/create 204;PATCH /vm 204;PUT /snapshot/load 204;"
check "snapshot bodies: Full, into the state directory; the load maps its memory file and resumes" snap_bodies
: > "$FAKE_FC_LOG"
cli run --provider microvm -- echo again
check "the next run loads the same snapshot, and its agent gets a SEED before the EXEC" sh -c '
    [ "$1" -eq 0 ] && [ "$(cat "$2")" = again ] && [ "$3" = "PUT /snapshot/load 204;" ] &&
    grep -o "\"agent\": \"[A-Z]*\"" "$4" | tr "\n" " " | grep -q "SEED.*EXEC"' \
    sh "$rc" "$tmp/out" "$(shape)" "$FAKE_FC_LOG"

: > "$FAKE_FC_LOG"
FAKE_FC_FAULT='PUT /snapshot/load=Cannot load snapshot: bad magic' \
    cli run --provider microvm -- echo booted
check "a snapshot that does not load: the VM boots all the same" sh -c \
    '[ "$1" -eq 0 ] && [ "$(cat "$2")" = booted ] &&
     [ "$3" = "PUT /snapshot/load 400;PUT /machine-config 204;PUT /boot-source 204;PUT /drives/rootfs 204;PUT /vsock 204;PUT /actions 204;" ]' \
    sh "$rc" "$tmp/out" "$(shape)"

BOOT="PUT /machine-config 204;PUT /boot-source 204;PUT /drives/rootfs 204;PUT /vsock 204;PUT /actions 204;"
echo "memory = 384" >> "$ini" || exit 99
: > "$FAKE_FC_LOG"
FAKE_FC_FAULT='PUT /snapshot/create=Cannot create snapshot: disk full' \
    cli run --provider microvm -- echo no-snapshot
check "a snapshot that cannot be made: resumed, and the run boots its VM" sh -c \
    '[ "$1" -eq 0 ] && [ "$(cat "$2")" = no-snapshot ] &&
     [ "$3" = "${4}PATCH /vm 204;PUT /snapshot/create 400;PATCH /vm 204;$4" ]' \
    sh "$rc" "$tmp/out" "$(shape)" "$BOOT"
: > "$FAKE_FC_LOG"
cli run --provider microvm -- echo no-retry
check "and the next run boots without trying it again for these settings" sh -c \
    '[ "$1" -eq 0 ] && [ "$(cat "$2")" = no-retry ] && [ "$3" = "$4" ]' \
    sh "$rc" "$tmp/out" "$(shape)" "$BOOT"

# A persistent sandbox: firecracker outlives create, each exec attaches
# over the vsock socket, destroy stops it (checked by its --id).
cli create --provider microvm
id=$(cat "$tmp/out")
rec=$tmp/state/microvm/sandboxes/$id/vm.json
pid=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["pid"])' "$rec" 2>/dev/null)
[ -n "$pid" ] && trap 'kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
check "create: a persistent sandbox whose firecracker outlives it, in a session of its own" \
    sh -c '[ "$1" -eq 0 ] && [ -n "$2" ] && kill -0 "$2" &&
           [ "$(ps -o sid= -p "$2" | tr -d " ")" != "$(ps -o sid= -p $$ | tr -d " ")" ] &&
           tr "\0" " " < "/proc/$2/cmdline" | grep -q -- "--id $3"' sh "$rc" "$pid" "$id"
[ "$rc" -eq 0 ] || sed 's/^/# /' "$tmp/err"
cli exec "$id" -- sh -c 'echo kept > f'
cli exec "$id" -- cat f
check "two execs from two processes share the VM's files" rc_and_out 0 kept
cli destroy "$id"
# (a zombie counts as stopped: init, not us, reaps it)
check "destroy stops its firecracker and removes its directory" sh -c \
    '[ "$1" -eq 0 ] && { ! [ -e "/proc/$2" ] ||
      [ "$(cut -d")" -f2 "/proc/$2/stat" | cut -d" " -f2)" = Z ]; } && [ ! -e "$3" ]' \
    sh "$rc" "${pid:-0}" "$tmp/state/microvm/sandboxes/$id"

# The record names the VMM that made the sandbox; when the settings change
# to vmm = qemu since, exec, list and destroy still use firecracker's
# vsock channel and stop its process (QEMU is never started).
cli create --provider microvm
id=$(cat "$tmp/out")
rec=$tmp/state/microvm/sandboxes/$id/vm.json
pid=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["pid"])' "$rec" 2>/dev/null)
[ -n "$pid" ] && trap 'kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
check "the record names its VMM and accelerator: firecracker, kvm" sh -c \
    '[ "$1" -eq 0 ] && "$2" -c "import json, sys; r = json.load(open(sys.argv[1]));
assert (r[\"vmm\"], r[\"accel\"]) == (\"firecracker\", \"kvm\")" "$3"' sh "$rc" "$PY" "$rec"
# (rootfs is Firecracker's alone: QEMU's settings refuse it)
sed -i '/^rootfs = /d' "$ini" && echo "vmm = qemu" >> "$ini" || exit 99
cli exec "$id" -- echo still-fc
check "with vmm = qemu set since, exec reaches the VM over firecracker's vsock" rc_and_out 0 still-fc
cli list --provider microvm
list_rc=$rc; cp "$tmp/out" "$tmp/list.out" || exit 99
cli destroy "$id"
check "and list shows it, destroy stops its firecracker and removes its directory" sh -c \
    '[ "$1" -eq 0 ] && [ "$2" -eq 0 ] && grep -q "$3" "$4" &&
     { ! [ -e "/proc/$5" ] || [ "$(cut -d")" -f2 "/proc/$5/stat" | cut -d" " -f2)" = Z ]; } &&
     [ ! -e "$6" ]' \
    sh "$list_rc" "$rc" "$id" "$tmp/list.out" "${pid:-0}" "$tmp/state/microvm/sandboxes/$id"
sed -i '/^vmm = qemu$/d' "$ini" && echo "rootfs = $tmp/rootfs.img" >> "$ini" || exit 99

# Through the jailer (tests/fakes/jailer.py checks the jailer's documented
# flags and execs the fake firecracker in the chroot it makes): the API
# gets the guest's files by their names in the chroot, the sockets are
# found there, and the chroot goes with the VM.
FAKE_JAILER_LOG=$tmp/jailer.log
export FAKE_JAILER_LOG
echo "jailer = $top_srcdir/tests/fakes/jailer.py" >> "$ini" || exit 99
: > "$FAKE_FC_LOG"
cli run --provider microvm -- echo jailed
check "with jailer set, a run boots through the jailer and prints" sh -c \
    '[ "$1" -eq 0 ] && [ "$(cat "$2")" = jailed ] && [ "$3" = "$4" ]' \
    sh "$rc" "$tmp/out" "$(shape)" "$BOOT"
[ "$rc" -eq 0 ] || sed 's/^/# /' "$tmp/err"
jail_argv() { "$PY" -c '
import json, sys
print(" ".join(json.loads(open(sys.argv[1]).readlines()[-1])["argv"]))' "$FAKE_JAILER_LOG"; }
check "the jailer's argv: id, exec file, our uid and gid, the VM's directory as chroot base, cgroup v2 limits, then the API socket" \
    sh -c 'echo "$1" | grep -Eq "^--id vm-[A-Za-z0-9]{6} --exec-file $2 --uid $3 --gid $4 --chroot-base-dir $5/vm\.[A-Za-z0-9]{6} --cgroup-version 2 --cgroup memory\.max=$6 --cgroup cpu\.max=100000 100000 -- --api-sock api\.sock\$"' \
    sh "$(jail_argv)" "$top_srcdir/tests/fakes/firecracker.py" "$(id -u)" "$(id -g)" \
    "$tmp/state/microvm" $(((384 + 256) * 1048576))
check "the kernel and initrd by their names in the chroot; the VM's directory and chroot gone after" \
    sh -c '[ "$1" = "\"vmlinux\"" ] && [ "$2" = "\"initrd\"" ] && [ "$3" = "\"rootfs\"" ] &&
           [ -z "$(ls "$4/state/microvm" | grep "^vm\.")" ]' \
    sh "$(body PUT /boot-source kernel_image_path)" "$(body PUT /boot-source initrd_path)" \
    "$(body PUT /drives/rootfs path_on_host)" "$tmp"
cli create --provider microvm
id=$(cat "$tmp/out")
rec=$tmp/state/microvm/sandboxes/$id/vm.json
pid=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["pid"])' "$rec" 2>/dev/null)
[ -n "$pid" ] && trap 'kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
sed -i '/^jailer = /d' "$ini" || exit 99
cli exec "$id" -- echo in-jail
exec_rc=$rc; cp "$tmp/out" "$tmp/exec.out" || exit 99
cli destroy "$id"
check "a jailed persistent sandbox: its chroot named by id, exec (jailer unset since) reaches it, destroy removes it" \
    sh -c '[ "$1" -eq 0 ] && [ "$(cat "$2")" = in-jail ] && [ "$3" -eq 0 ] &&
           grep -q "\"--id\", \"$4\"" "$5" && [ ! -e "$6" ] &&
           { ! [ -e "/proc/$7" ] || [ "$(cut -d")" -f2 "/proc/$7/stat" | cut -d" " -f2)" = Z ]; }' \
    sh "$exec_rc" "$tmp/exec.out" "$rc" "$id" "$FAKE_JAILER_LOG" \
    "$tmp/state/microvm/sandboxes/$id" "${pid:-0}"
check "the fake jailer refuses what the jailer does: an exec file not named firecracker, no --uid" \
    sh -c '! "$1" --id x --exec-file /bin/true --uid 0 --gid 0 2>/dev/null &&
           ! "$1" --id x --exec-file "$2" --gid 0 2>/dev/null' \
    sh "$top_srcdir/tests/fakes/jailer.py" "$top_srcdir/tests/fakes/firecracker.py"

# A firecracker that exits at once (no KVM, say): its last words are the error.
printf '#!/bin/sh\necho "Error creating the Kvm object: No such file or directory" >&2\nexit 1\n' \
    > "$tmp/fc-exits" && chmod +x "$tmp/fc-exits" || exit 99
sed -i "s|^firecracker = .*|firecracker = $tmp/fc-exits|" "$ini" || exit 99
cli run --provider microvm -- true
check "a firecracker that exits at once: its status and last words are the error" sh -c \
    '[ "$1" -ne 0 ] && grep -q "firecracker exited with status 1: Error creating the Kvm object" "$2"' \
    sh "$rc" "$tmp/err"

sed -i "s|^firecracker = .*|firecracker = $tmp/no-such-firecracker|" "$ini" || exit 99
cli run --provider microvm -- true
check "a missing firecracker program is refused, named, before anything starts" sh -c \
    '[ "$1" -ne 0 ] && grep -q "no firecracker program at $2/no-such-firecracker" "$3"' \
    sh "$rc" "$tmp" "$tmp/err"

# The fake itself, through a client nobody here wrote (curl): Firecracker's
# codes and fault_message for bad input.
if command -v curl >/dev/null 2>&1; then
    mkdir "$tmp/direct" && (cd "$tmp/direct" &&
        exec "$top_srcdir/tests/fakes/firecracker.py" --api-sock api.sock >/dev/null 2>&1) &
    fake=$!
    i=0; while [ ! -S "$tmp/direct/api.sock" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    fcurl() { curl -s --unix-socket "$tmp/direct/api.sock" -X "$1" "http://localhost$2" \
        -H 'Content-Type: application/json' -d "$3" -w ' %{http_code}'; }
    check "curl: a machine-config without mem_size_mib is 400 with a fault_message" sh -c \
        'echo "$1" | grep -q "^{\"fault_message\": \".*mem_size_mib.*\"} 400$"' \
        sh "$(fcurl PUT /machine-config '{"vcpu_count": 1}')"
    check "curl: a valid one is 204 with no body, InstanceStart without a kernel 400" sh -c \
        '[ "$1" = " 204" ] && echo "$2" | grep -q "fault_message.* 400$"' sh \
        "$(fcurl PUT /machine-config '{"vcpu_count": 1, "mem_size_mib": 128}')" \
        "$(fcurl PUT /actions '{"action_type": "InstanceStart"}')"
    kill "$fake" 2>/dev/null
    wait "$fake" 2>/dev/null
else
    for i in 1 2; do ok "the fake through curl # SKIP no curl"; done
fi

# A setting that cannot work makes the provider fail to load; doctor says
# why (of a provider that is not optional: an optional one is left out).
echo "accel = tcg" >> "$ini" || exit 99
sed -i "s/^optional = true/optional = false/" "$ini" || exit 99
cli doctor --provider microvm
check "accel = tcg with firecracker is refused: Firecracker needs KVM" \
    grep -q "init failed: microvm: vmm = firecracker runs on KVM only" "$tmp/out" "$tmp/err"
done_testing
