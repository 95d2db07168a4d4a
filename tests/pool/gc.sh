#!/bin/sh
# tests/pool/gc.sh - polysandbox gc reaps expired sandboxes of our owner
#
# "create" makes persistent sandboxes and exits without destroying them,
# as a crashed process would leave them.  A private state directory keeps
# other tests' sandboxes out of reach.
. "$top_srcdir/tests/cli/lib.sh"

POLYSANDBOX_STATE_DIR="$tmp/state"
export POLYSANDBOX_STATE_DIR
mkdir "$POLYSANDBOX_STATE_DIR" || exit 99

plan 18

ids() { "$PS" list --provider local --json 2>/dev/null |
        python3 -c 'import json,sys; print(" ".join(sorted(s["id"] for s in json.load(sys.stdin))))'; }
has() { case " $(ids) " in *" $1 "*) return 0;; esac; return 1; }

cli create --ttl 1s --label case=expired; old=$(out)
cli create --ttl 1h --label case=fresh; young=$(out)
cli create --label case=forever; forever=$(out)
cli create --ttl 1s --label case=foreign; foreign=$(out)
check "four sandboxes were created" eval '[ -n "$old" ] && [ -n "$young" ] && [ -n "$forever" ] && [ -n "$foreign" ] && [ "$(ids | wc -w)" -eq 4 ]'

# Another owner's sandbox: rewrite its owner label where the local
# provider keeps it.
python3 - "$POLYSANDBOX_STATE_DIR/local/$foreign/meta.json" <<'PY'
import json, sys
p = sys.argv[1]
m = json.load(open(p))
m["labels"]["polysandbox.owner"] = "4242@elsewhere"
json.dump(m, open(p, "w"))
PY
cli list --provider local --json
check "the sandboxes carry owner and expiry labels" json_check \
    'all("polysandbox.owner" in s["labels"] for s in j) and sum("polysandbox.expires" in s["labels"] for s in j) == 3'

sleep 2     # let the 1s time-to-live pass (labels count whole seconds)

cli gc --dry-run
check "gc --dry-run names the expired sandbox" \
    eval 'is_rc 0 && out_has "would reap local $old" && [ "$(wc -l <"$tmp/out")" -eq 1 ]'
check "and destroys nothing" eval '[ "$(ids | wc -w)" -eq 4 ]'

cli gc --json
check "gc --json reaps exactly the expired sandbox of ours" \
    eval 'is_rc 0 && json_check "len(j) == 1 and j[0][\"id\"] == \"$old\" and j[0][\"status\"] == \"reaped\" and j[0][\"provider\"] == \"local\""'
check "it is gone" eval '! has "$old"'
check "the one whose ttl has not passed stays" has "$young"
check "the one without a ttl stays" has "$forever"
check "another owner's expired sandbox stays" has "$foreign"
check "its directory is gone from the state directory" eval '[ ! -e "$POLYSANDBOX_STATE_DIR/local/$old" ]'

cli gc
check "a second gc finds nothing" eval 'is_rc 0 && [ ! -s "$tmp/out" ] && err_has "no expired sandbox"'

cli gc --any-owner --provider local
check "gc --any-owner reaps the other owner's expired sandbox" \
    eval 'is_rc 0 && out_has "reaped local $foreign" && ! has "$foreign" && has "$young"'

cli gc --provider nosuch
check "gc --provider of an unknown provider exits 125" rc_and_err 125 nosuch
cli gc --bogus
check "a bad option exits 2" is_rc 2
cli gc extra
check "an extra argument exits 2" rc_and_err 2 extra
cli gc --help
check "gc --help exits 0 with a usage line" eval 'is_rc 0 && out_has "Usage: polysandbox gc"'
cli --help
check "--help lists gc and pools" eval 'is_rc 0 && out_has " gc " && out_has " pools "'

"$PS" destroy --provider local "$young" "$forever" >/dev/null 2>&1

# A one-shot run's sandbox carries an expiry too (twice its time limit and
# a minute), so gc reaps it if the run's process dies.  The run lasts
# longer than the wait for its sandbox to show in `list` (a loaded
# machine may take seconds to make it: up to 30 s); once seen, it is
# destroyed, which ends the run.
"$PS" run -t 40s -- sleep 35 >/dev/null 2>&1 &
runpid=$!
seen=
end=$(($(date +%s) + 30))
while [ -z "$seen" ] && [ "$(date +%s)" -lt "$end" ]; do
    seen=$("$PS" list --provider local --json 2>/dev/null | python3 -c '
import json, sys
for s in json.load(sys.stdin):
    l = s["labels"]
    print(s["id"], l.get("polysandbox.expires", "none"), l["polysandbox.created"])' 2>/dev/null)
    [ -n "$seen" ] || sleep 0.2
done
read -r sid expires created <<EOF
$seen
EOF
[ -n "$sid" ] && "$PS" destroy --provider local "$sid" >/dev/null 2>&1
wait "$runpid"
check "a one-shot run's sandbox expires 2 x 40s + 60s after its creation ($seen)" \
    eval '[ "${expires:-none}" != none ] && [ $((expires - created)) -ge 140 ] &&
          [ $((expires - created)) -le 141 ]'
done_testing
