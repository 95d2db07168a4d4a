# tests/hostile/cgroup2-enter.sh - sourced first by the cgroup v2 tests:
# on a cgroup v2 host they go on there (PS_CG2_INNER=host); on a v1
# (hybrid) host the script runs again in a private mount namespace
# (unshare -m) with cgroup2 mounted on /sys/fs/cgroup (PS_CG2_INNER=
# private); where neither can be, the whole script is skipped.
if [ -z "${PS_CG2_INNER:-}" ]; then
    if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP needs root"; exit 0; fi
    if ! grep -qw cgroup2 /proc/filesystems; then echo "1..0 # SKIP no cgroup2 in this kernel"; exit 0; fi
    if [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" != cgroup2fs ]; then
        if ! command -v unshare >/dev/null 2>&1; then echo "1..0 # SKIP needs unshare"; exit 0; fi
        PS_CG2_INNER=private exec unshare -m sh "$0" "$@"
    fi
    PS_CG2_INNER=host
fi
if [ "$PS_CG2_INNER" = private ]; then
    if ! mount --make-rprivate / || ! mount -t cgroup2 none /sys/fs/cgroup; then
        echo "1..0 # SKIP cannot mount cgroup2 in a private mount namespace"
        exit 0
    fi
fi
