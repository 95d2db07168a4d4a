# tests/microvm/fakevmm.sh - sourced by the microvm tests that need no
# QEMU (after tests/cli/lib.sh): the suite's configuration in
# $tmp/config with the microvm provider on a VMM that is a script, which
# appends its arguments to $tmp/vmm-started and exits (so every VM stops
# before its agent answers), an empty kernel and initrd, a state
# directory of its own (the script runs unjailed: the jail runs an ELF
# program only); POLYSANDBOX_CONFIG_DIR and POLYSANDBOX_STATE_DIR
# exported.  Settings may be appended to $tmp/config/providers.d/microvm.ini.
cp -rL "$top_srcdir/tests/config" "$tmp/config" && chmod -R u+w "$tmp/config" || exit 99
mkdir "$tmp/state" && : > "$tmp/vmlinuz" && : > "$tmp/initrd.cpio" || exit 99
cat > "$tmp/vmm" <<EOF2 || exit 99
#!/bin/sh
echo "\$*" >> "$tmp/vmm-started"
EOF2
chmod +x "$tmp/vmm" || exit 99
cat > "$tmp/config/providers.d/microvm.ini" <<EOF2 || exit 99
[provider]
enabled = true
optional = true
priority = 5
[settings]
qemu = $tmp/vmm
kernel = $tmp/vmlinuz
initrd = $tmp/initrd.cpio
accel = tcg
boot_timeout = 60
vmm_jail = off
EOF2
POLYSANDBOX_CONFIG_DIR=$tmp/config POLYSANDBOX_STATE_DIR=$tmp/state
export POLYSANDBOX_CONFIG_DIR POLYSANDBOX_STATE_DIR
