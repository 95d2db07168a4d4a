# tests/microvm/local.mk - the microvm provider on QEMU (TCG here)
#
# run.sh builds the guest image once (cached, see the script) and boots
# two VMs: one for several execs (test-microvm-execs), one for
# `polysandbox run`.  It skips without QEMU or the cloud kernel.
if BUILD_PROVIDER_MICROVM
check_PROGRAMS += tests/microvm/test-microvm-execs
tests_microvm_test_microvm_execs_SOURCES = tests/microvm/execs.c
tests_microvm_test_microvm_execs_LDADD = core/libpolysandbox.la
check_SCRIPTS += plugins/microvm/sbx-agent plugins/microvm/polysandbox-microvm-image
# test-microvm-xrun: the host's end of a running exec (streamed stdin,
# signals, cancel, frames out of turn) against a scripted agent on a
# socketpair (no VM).
check_PROGRAMS += tests/microvm/test-microvm-xrun
tests_microvm_test_microvm_xrun_SOURCES = tests/microvm/test-microvm-xrun.c tests/unit/tap.h \
	plugins/microvm/mv-xrun.c plugins/microvm/mv-chan.c $(MV_PROTO)
tests_microvm_test_microvm_xrun_CPPFLAGS = $(UNIT_TEST_CPPFLAGS) -I$(top_srcdir)/plugins/microvm \
	-I$(top_srcdir)/tests/unit
tests_microvm_test_microvm_xrun_LDADD = $(UNIT_TEST_LDADD)
TESTS += tests/microvm/test-microvm-xrun
# test-microvm-hold: the holder of a snapshot's sealed copies (mv-hold.c)
# and fake holders it must refuse (no VM).
check_PROGRAMS += tests/microvm/test-microvm-hold
tests_microvm_test_microvm_hold_SOURCES = tests/microvm/test-microvm-hold.c tests/unit/tap.h \
	plugins/microvm/mv-hold.c
tests_microvm_test_microvm_hold_CPPFLAGS = $(UNIT_TEST_CPPFLAGS) -I$(top_srcdir)/plugins/microvm \
	-I$(top_srcdir)/tests/unit
tests_microvm_test_microvm_hold_LDADD = $(UNIT_TEST_LDADD)
TESTS += tests/microvm/test-microvm-hold
TESTS += tests/microvm/run.sh
# persist.sh: one persistent VM across polysandbox processes (a third boot).
TESTS += tests/microvm/persist.sh
# snapshot.sh: VMs restored from a snapshot (three boots, three restores).
TESTS += tests/microvm/snapshot.sh
# jail.sh: QEMU jailed, seen from the host (its uid, namespaces, root,
# cgroup, the snapshot's sealed copies; one boot, two restores).
TESTS += tests/microvm/jail.sh
# hold.sh: one-shot jailed runs share one holder of the sealed copies (a
# fake holder refused first; gc kills it; one boot, two restores).
TESTS += tests/microvm/hold.sh
# pool.sh: a warm pool of restored VMs (a hit, the refill; two restores).
TESTS += tests/microvm/pool.sh
# snapgc.sh: gc removes snapshots whose state directory is gone (no QEMU).
TESTS += tests/microvm/snapgc.sh
# snapfail.sh: a snapshot that cannot be built is tried once per settings
# (a fake VMM, no QEMU needed).
TESTS += tests/microvm/snapfail.sh
# image.sh: --image and a template's image.microvm never pulled refused
# before any VM starts, a template's plain image ignored (no QEMU needed).
TESTS += tests/microvm/image.sh
# oci.sh: --image of a pulled image (tests/image/push.py's rootfs, from a
# registry on loopback) as a read-only erofs disk with an overlay (three boots).
check_SCRIPTS += tests/image/imgcat
TESTS += tests/microvm/oci.sh
# build.sh: image build of a pulled image, its disk reproducible and
# checked, ext4 where mkfs.erofs is missing (two boots).
TESTS += tests/microvm/build.sh
# imagecap.sh: an image whose files add up to more than the cap (a huge
# sparse file) refused before any disk is built (a fake VMM, a registry).
TESTS += tests/microvm/imagecap.sh
# firecracker.sh: vmm = firecracker against tests/fakes/firecracker.py
# (no Firecracker, QEMU or KVM needed).
TESTS += tests/microvm/firecracker.sh
# hostile.sh: tests/hostile's programs that make sense in a VM, in one
# persistent VM (a restore), with the local provider's statuses.
TESTS += tests/microvm/hostile.sh
check_SCRIPTS += tests/hostile/hostile
# net.sh: no network device unless the template allows egress, then
# QEMU's user-mode network to a server on the host's loopback (one boot,
# one restore).
TESTS += tests/microvm/net.sh
# eval.sh: polysandbox eval (six HumanEval-style samples), compare
# local,microvm (MBPP's three reference solutions) and artifacts.
TESTS += tests/microvm/eval.sh
endif
dist_check_SCRIPTS += tests/microvm/run.sh tests/microvm/image.sh tests/microvm/persist.sh \
	tests/microvm/snapshot.sh tests/microvm/snapfail.sh tests/microvm/firecracker.sh \
	tests/microvm/pool.sh tests/microvm/snapgc.sh tests/microvm/jail.sh tests/microvm/hold.sh \
	tests/microvm/oci.sh tests/microvm/hostile.sh tests/microvm/net.sh tests/microvm/build.sh \
	tests/microvm/eval.sh tests/microvm/imagecap.sh
EXTRA_DIST += tests/microvm/guest.sh tests/microvm/imageguest.sh tests/microvm/fakevmm.sh \
	tests/fakes/firecracker.py tests/fakes/jailer.py
# The guest image, where run.sh had to keep it in the build tree.
clean-local: clean-microvm
clean-microvm:
	-rm -rf tests/microvm-guest
.PHONY: clean-microvm
