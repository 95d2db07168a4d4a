# tests/hostile/local.mk - hostile programs against the local provider
#
# tests/hostile/hostile is built but never run on the host: run.sh copies
# it into sandboxes with `polysandbox run --file` and checks the status of
# each attack and the host afterwards.  The seccomp filter: probe (built,
# only ever run inside the sandbox by syscalls.sh) tries each filtered
# call harmlessly.
#
# Both are linked statically and built without the user's CFLAGS: they run
# in containers whose image has neither libasan (a sanitizer build) nor,
# perhaps, our libc.
HOSTILE_BINS = tests/hostile/hostile tests/hostile/probe
HOSTILE_CFLAGS = -std=gnu11 -O2 -g $(WARN_CFLAGS) -static
tests/hostile/hostile: tests/hostile/hostile.c
	$(AM_V_CC)$(MKDIR_P) tests/hostile && \
	$(CC) $(HOSTILE_CFLAGS) -o $@ $(srcdir)/tests/hostile/hostile.c
tests/hostile/probe: tests/hostile/probe.c
	$(AM_V_CC)$(MKDIR_P) tests/hostile && \
	$(CC) $(HOSTILE_CFLAGS) -o $@ $(srcdir)/tests/hostile/probe.c
EXTRA_DIST += tests/hostile/hostile.c tests/hostile/probe.c
CLEANFILES += $(HOSTILE_BINS)
if BUILD_PROVIDER_LOCAL
check_SCRIPTS += $(HOSTILE_BINS)
TESTS += tests/hostile/run.sh tests/hostile/syscalls.sh
endif
dist_check_SCRIPTS += tests/hostile/run.sh tests/hostile/syscalls.sh

# The same programs through the docker provider, on a real dockerd: its
# exec helper outlives them, its containers' seccomp profile and its
# commands' filter answer as the local filter does.
if BUILD_PROVIDER_DOCKER
if !BUILD_PROVIDER_LOCAL
check_SCRIPTS += $(HOSTILE_BINS)
endif
TESTS += tests/hostile/run-docker.sh tests/hostile/syscalls-docker.sh
endif
dist_check_SCRIPTS += tests/hostile/run-docker.sh tests/hostile/syscalls-docker.sh
CLEANFILES += tests/hostile/ps-docker

# Python runs forked from the template's zygote: the same verdicts and
# isolation as runs started afresh; a killed zygote is replaced.
if BUILD_PROVIDER_LOCAL
TESTS += tests/hostile/zygote.sh
endif
dist_check_SCRIPTS += tests/hostile/zygote.sh

# The filter cached in the state directory: damaged copies are rebuilt.
if BUILD_PROVIDER_LOCAL
TESTS += tests/hostile/seccomp-cache.sh
endif
dist_check_SCRIPTS += tests/hostile/seccomp-cache.sh

# The /etc scan cached in the state directory: a list naming what the
# patterns do not allow, or of another key, is never used.
if BUILD_PROVIDER_LOCAL
TESTS += tests/hostile/etc-cache.sh
endif
dist_check_SCRIPTS += tests/hostile/etc-cache.sh

# An embedding process (Python, daemon = off) keeps its OOM score,
# dumpable flag and signal handlers whichever launcher starts the init.
if BUILD_PROVIDER_LOCAL
TESTS += tests/hostile/embed.sh
endif
dist_check_SCRIPTS += tests/hostile/embed.sh
EXTRA_DIST += tests/hostile/embed.py

# cgroup v2 (on a v1 host: in a private mount namespace with cgroup2).
if BUILD_PROVIDER_LOCAL
TESTS += tests/hostile/cgroup2.sh
endif
dist_check_SCRIPTS += tests/hostile/cgroup2.sh

# cgroups of a SIGKILLed supervisor are reaped by list/destroy.
if BUILD_PROVIDER_LOCAL
TESTS += tests/hostile/cgroup-reap.sh
endif
dist_check_SCRIPTS += tests/hostile/cgroup-reap.sh

# Reused v1 cgroups (the pool) carry nothing from one exec to the next.
if BUILD_PROVIDER_LOCAL
TESTS += tests/hostile/cgroup-pool.sh
endif
dist_check_SCRIPTS += tests/hostile/cgroup-pool.sh

# Shared by the hostile scripts (sourced, not run).
EXTRA_DIST += tests/hostile/lib.sh tests/hostile/cgroup2-enter.sh

# polysandbox-locald: its life (start, one of many, upgrade, crash, idle,
# a killed client), and run.sh and syscalls.sh through its sandboxes.
if BUILD_PROVIDER_LOCAL
TESTS += tests/hostile/locald.sh tests/hostile/run-locald.sh tests/hostile/syscalls-locald.sh
endif
dist_check_SCRIPTS += tests/hostile/locald.sh tests/hostile/run-locald.sh \
	tests/hostile/syscalls-locald.sh
# Its host table (the SDK's test host): --set read as the core reads it.
if BUILD_PROVIDER_LOCAL
TESTS += tests/hostile/locald-host.sh
endif
dist_check_SCRIPTS += tests/hostile/locald-host.sh

# The zygote and the daemon give a payload no more than the plain path:
# nothing of an exec steers the zygote on the host (caller's directory,
# PYTHONPATH, PATH), stdio only, the same limits; a daemon killed mid-exec.
if BUILD_PROVIDER_LOCAL
TESTS += tests/hostile/audit.sh
endif
dist_check_SCRIPTS += tests/hostile/audit.sh

# polysandbox-locald on cgroup v2 (cgroup2.sh through the daemon), and
# image roots and network = host through it.
if BUILD_PROVIDER_LOCAL
TESTS += tests/hostile/cgroup2-locald.sh tests/hostile/locald-serves.sh
endif
dist_check_SCRIPTS += tests/hostile/cgroup2-locald.sh tests/hostile/locald-serves.sh

# Issue 15: another local user (made with useradd, as root) against a
# user's state (a state directory made first, a work directory swapped
# for a link, the run directory squatted, a lock planted); no path of the
# orchestrator's own readable in a sandbox, under this build's prefix and
# a /usr one built here; each root-mode sandbox its own host id, which
# no other host id can signal.
# A set-id program embedding the library takes no variable from its
# caller (setid-probe: the core linked in statically, for the set-id copy).
ISSUE15_TESTS = tests/hostile/other-user.sh tests/hostile/hidden-paths.sh \
	tests/hostile/host-ids.sh tests/hostile/setid.sh
if BUILD_PROVIDER_LOCAL
check_PROGRAMS += tests/hostile/setid-probe
tests_hostile_setid_probe_SOURCES = tests/hostile/setid-probe.c
tests_hostile_setid_probe_CFLAGS = $(AM_CFLAGS) -pthread
tests_hostile_setid_probe_LDADD = core/libpolysandbox-internal.la $(LTDL_LIBS) \
	$(JANSSON_LIBS) $(INIH_LIBS) $(SODIUM_LIBS) $(ZLIB_LIBS)
TESTS += $(ISSUE15_TESTS)
endif
dist_check_SCRIPTS += $(ISSUE15_TESTS)
