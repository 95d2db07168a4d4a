#!/bin/sh
# tests/bench/kube.sh - the kubernetes provider at scale through the fake
# (run by `make bench`).
#
# The Kubernetes fake (tests/fakes/kube.py) with a cluster's pace: every
# API call answered after 20-50 ms, every new pod bound to the node a
# second after it is made (the scheduler and the kubelet's start), pods
# that run as local processes.  Through it, bench-runs drives sbx_run()
# (create, one exec, destroy) from THREADS threads of one process, in two
# configurations measured in the same run, in alternating blocks so both
# see the same machine:
#
#   cold: pods mode, every sandbox a new pod (the scheduling second on
#         each sandbox's path);
#   warm: agent-sandbox mode, every sandbox a SandboxClaim on a
#         SandboxWarmPool of POOL pods made ahead.
#
# Prints, for each: sustained sandboxes per second, the latency of one and
# of its create, the API calls per sandbox by verb and resource (the
# fake's counts) against the protocol's minimum, and the CPU per sandbox
# of polysandbox (bench-runs) and of the fake, with the share of a core
# the fake was busy: when it nears what the machine gives it, the fake,
# not the provider, is the bound.  A benchmark: asserts nothing about
# speed; exits 1 only when runs fail or pods are left behind.
#
# Knobs (environment): BENCH_KUBE_SANDBOXES (per configuration, 1000: 2000
# in all), BENCH_KUBE_THREADS (16), BENCH_KUBE_POOL (warm pool size, 48),
# BENCH_KUBE_BLOCK (sandboxes per block, 250), BENCH_KUBE_LATENCY_MS (20),
# BENCH_KUBE_JITTER_MS (30), BENCH_KUBE_SCHEDULE_S (1), BENCH_KUBE_LOG (a
# file to keep the fake's log in).
set -u
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
export top_builddir top_srcdir
total=${BENCH_KUBE_SANDBOXES:-1000}
threads=${BENCH_KUBE_THREADS:-16}
pool=${BENCH_KUBE_POOL:-48}
block=${BENCH_KUBE_BLOCK:-250}
lat=${BENCH_KUBE_LATENCY_MS:-20}
jit=${BENCH_KUBE_JITTER_MS:-30}
sched=${BENCH_KUBE_SCHEDULE_S:-1}

say_skip() { echo "kubernetes bench: skipped ($1)"; exit 0; }
command -v openssl >/dev/null 2>&1 || say_skip "openssl is not installed"
[ -e "$top_builddir/plugins/kubernetes/.libs/kubernetes.so" ] ||
    say_skip "the kubernetes provider is not built (configure found no libwebsockets or libyaml)"
runner="$top_builddir/tests/bench/bench-runs"
[ -x "$top_builddir/tests/bench/.libs/bench-runs" ] &&
    runner="$top_builddir/tests/bench/.libs/bench-runs"
[ -x "$runner" ] || { echo "kubernetes bench: build first ($runner missing)"; exit 1; }
[ -d "$top_builddir/core/.libs" ] &&
    export LD_LIBRARY_PATH="$top_builddir/core/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

. "$top_srcdir/tests/kube/lib.sh"
status=0

# A node as big as the run needs: capacity is not what is measured.
start_fake --agent-sandbox --schedule-delay "$sched" --node-pods 100000 \
    --node-cpu 100000 --node-memory 1000Ti \
    --faults "{\"latency_ms\": $lat, \"latency_jitter_ms\": $jit}"
kube_rbac && kube_agent_rbac || { echo "kubernetes bench: cannot make the namespace and Roles"; exit 1; }
# No client-side rate limit: the default (qps 50) would be the bound
# (4 calls a sandbox: 12.5 sandboxes/s), and it is the provider's and the
# API's pace that is measured here.
KUBE_SETTINGS="qps = 0" write_config
mv "$tmp/config" "$tmp/config-cold"
KUBE_SETTINGS="qps = 0
mode = agent-sandbox
warm_pool = $pool" write_config
mv "$tmp/config" "$tmp/config-warm"

# counts FILE: the fake's request counts, and its CPU seconds so far.
counts() {
    fake_call GET /_fake/requests >/dev/null || return 1
    "$PY" - "$tmp/fake_answer" "$fake_pid" "$1" <<'EOF'
import json, os, sys
c = json.load(open(sys.argv[1]))
with open("/proc/%s/stat" % sys.argv[2]) as f:
    st = f.read().rsplit(")", 1)[1].split()
c["_cpu"] = (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK")
json.dump(c, open(sys.argv[3], "w"))
EOF
}

# The warm pool exists once the provider first needs it: one sandbox,
# then wait until the pool is full.
POLYSANDBOX_CONFIG_DIR="$tmp/config-warm" "$PS" run -- true >/dev/null 2>"$tmp/err" ||
    { echo "kubernetes bench: agent-sandbox mode does not run:"; cat "$tmp/err"; exit 1; }
EXT=/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/$KUBE_NS
i=0
until fake_call GET "$EXT/sandboxwarmpools" && "$PY" -c 'import json, sys
o = json.load(open(sys.argv[1]))
sys.exit(0 if o["items"] and o["items"][0]["status"].get("readyReplicas") == int(sys.argv[2]) else 1)' \
        "$tmp/fake_answer" "$pool"; do
    i=$((i + 1))
    [ $i -gt 600 ] && { echo "kubernetes bench: the warm pool did not fill in 60 s"; exit 1; }
    sleep 0.1
done

echo "== kubernetes provider through the fake: $total sandboxes per configuration, $threads threads"
echo "   (API calls ${lat}+0..${jit} ms, pods scheduled ${sched} s after creation; warm pool of $pool)"
runs_of() { # MODE BLOCK: one block; the bench-runs line, the counts around it
    counts "$tmp/c0" || return 1
    # bench-runs's CPU time (the provider's and the library's work).
    POLYSANDBOX_CONFIG_DIR="$tmp/config-$1" "$PY" -c 'import resource, subprocess, sys
r = subprocess.call(sys.argv[2:])
u = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write("%f %f" % (u.ru_utime, u.ru_stime))
sys.exit(r)' "$tmp/cpu" "$runner" -t "$threads" -w 1 -n "$2" -- sh -c 'echo ok' \
        >"$tmp/run.out" 2>"$tmp/run.err"
    r=$?
    counts "$tmp/c1" || return 1
    sed "s/^library, [0-9]* threads*:/  $1 block:/" "$tmp/run.out" | head -n2
    [ $r -eq 0 ] || { sed 's/^/    /' "$tmp/run.err" | head -n5; return 1; }
    "$PY" - "$tmp/c0" "$tmp/c1" "$tmp/run.out" "$tmp/acc-$1" "$2" "$tmp/cpu" <<'EOF'
import json, os, re, sys
c0, c1 = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
text = open(sys.argv[3]).read()
m = re.search(r"in +([0-9.]+) s .*median ([0-9.]+) ms, p90 ([0-9.]+) ms", text)
mc = re.search(r"create ([0-9.]+) ms", text)
acc = json.load(open(sys.argv[4])) if os.path.exists(sys.argv[4]) else \
    {"calls": {}, "secs": 0, "n": 0, "med": [], "create": [], "cpu": 0, "client": 0}
n = int(sys.argv[5])
acc["n"] += n + 1                    # the one warm-up run of bench-runs too
acc["secs"] += float(m.group(1))
acc["med"].append(float(m.group(2)))
acc["create"].append(float(mc.group(1)))
acc["cpu"] += c1["_cpu"] - c0["_cpu"]
acc["client"] += sum(float(x) for x in open(sys.argv[6]).read().split())
for k, v in c1.items():
    if k != "_cpu" and v - c0.get(k, 0):
        acc["calls"][k] = acc["calls"].get(k, 0) + v - c0.get(k, 0)
json.dump(acc, open(sys.argv[4], "w"))
EOF
}

done_cold=0
done_warm=0
while [ $done_cold -lt "$total" ] || [ $done_warm -lt "$total" ]; do
    for mode in cold warm; do
        eval "d=\$done_$mode"
        n=$((total - d))
        [ $n -gt "$block" ] && n=$block
        [ $n -gt 0 ] || continue
        runs_of $mode $n || status=1
        eval "done_$mode=$((d + n))"
    done
done

# Destroy deletes in the foreground without waiting: give the last pods
# their grace, then count what is left.
i=0
while [ "$(pods_left)" -gt "$pool" ] && [ $i -lt 30 ]; do sleep 1; i=$((i + 1)); done
left=$(pods_left)
[ -n "${BENCH_KUBE_LOG:-}" ] && cp "$tmp/fake.err" "$BENCH_KUBE_LOG"

echo
"$PY" - "$tmp/acc-cold" "$tmp/acc-warm" "$total" "${BENCH_SAVE:-}" <<'EOF'
import json, statistics, sys
cold, warm = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
save = sys.argv[4]
# The least a client can do, per sandbox: make it, run the command, delete
# it, with readiness from one watch shared by all sandboxes (an informer)
# and, in agent-sandbox mode, the pod's name known from the claim.
minimum = 3
out = []
for name, a in (("cold", cold), ("warm", warm)):
    total = int(sys.argv[3])
    rate = total / a["secs"]
    per = sum(a["calls"].values()) / a["n"]
    med, create = statistics.median(a["med"]), statistics.median(a["create"])
    print("%s: %s" % (name, "pods mode, a new pod each" if name == "cold" else
                      "agent-sandbox mode, a SandboxClaim on a warm pool each"))
    print("  %.1f sandboxes/s sustained; one sandbox %.0f ms, of which create %.0f ms"
          " (medians of the blocks' medians)" % (rate, med, create))
    print("  %.2f API calls a sandbox (the protocol's minimum: %d, so %.2fx):"
          % (per, minimum, per / minimum))
    for k in sorted(a["calls"]):
        print("    %-40s %6.2f" % (k, a["calls"][k] / a["n"]))
    print("  CPU a sandbox: polysandbox %.1f ms, the fake %.1f ms (the fake busy %.0f%% of a"
          " core)" % (a["client"] * 1000 / a["n"], a["cpu"] * 1000 / a["n"],
                      100 * a["cpu"] / a["secs"]))
    out.append((name, rate, med, create, per))
(_, rc, mc, cc, _), (_, rw, mw, cw, _) = out
print("warm/cold: %.2fx the sandboxes per second, %.2fx the latency of one, %.2fx its create"
      % (rw / rc, mw / mc, cw / cc))
if save:
    with open(save, "a") as f:
        for n, rate, med, create, per in out:
            f.write("kube.%s.rate=%.3f\nkube.%s.median_ms=%.3f\nkube.%s.create_ms=%.3f\n"
                    "kube.%s.calls=%.3f\n" % (n, rate, n, med, n, create, n, per))
EOF
if [ "$left" -gt "$pool" ]; then
    echo "kubernetes bench: $((left - pool)) sandbox pods left after the runs (besides the warm pool):"
    fake_call GET /_fake/state >/dev/null
    "$PY" -c 'import collections, json, sys
s = json.load(open(sys.argv[1]))
c = collections.Counter((p["phase"], "deleting" if p["deleting"] else "-",
                         p["labels"].get("agents.x-k8s.io/launch-type", "pods mode"),
                         "pool" if "agents.x-k8s.io/warm-pool-sandbox" in p["labels"] else "-")
                        for p in s["pods"])
for k, n in sorted(c.items()):
    print("   %4d %s" % (n, " ".join(k)))' "$tmp/fake_answer"
    status=1
fi
exit $status
