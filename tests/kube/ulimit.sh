#!/bin/sh
# tests/kube/ulimit.sh - a per-exec limit the pod cannot apply is refused,
# never dropped: the wrapper's `ulimit -n` above the container's hard
# limit (the fake's containers inherit this script's, and the pod runs as
# uid 65534, which cannot raise it) ends the exec before the command runs,
# with an error naming the limit.
. "$top_srcdir/tests/kube/lib.sh"
ulimit -n 1024 || skip_all "cannot lower the open-files limit to 1024"
plan 4
start_provider_fake

cli -q -o limits.nofile=512 run -- sh -c 'ulimit -n'
check "nofile 512, under the hard limit: applied" rc_and_out 0 512
cli -q -o limits.nofile=4096 run --json -- sh -c 'echo ran; ulimit -n'
check "nofile 4096, above the pod's hard limit: a sandbox error naming nofile" \
    json_check 'j["status"] == "sandbox_error" and "cannot apply the nofile limit" in j["error"]'
check "...and the command did not run" json_check 'j["stdout"] == ""'
cli -q -o limits.cpu=5s run -- sh -c 'ulimit -t'
check "cpu 5s: applied" rc_and_out 0 5
