#!/bin/sh
# tests/cli/get-or-create.sh - create --get-or-create and list --label
. "$top_srcdir/tests/cli/lib.sh"

plan 17

tag="goc-$$"
ids=""
# every sandbox made here is destroyed, whatever fails
trap 'for i in $ids; do "$PS" destroy --provider local "$i" >/dev/null 2>&1; done
      rm -rf "$tmp"' EXIT
keep() { [ -n "$1" ] && ids="$ids $1"; }
jfield() {
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' \
        "$tmp/out" "$1" 2>/dev/null
}

cli create --provider local --get-or-create
check "--get-or-create without --label is a usage error naming --label" \
    rc_and_err 2 "--label"

cli create --provider local --get-or-create --json --label "suite=$tag"
id1=$(jfield id); keep "$id1"
check "the first --get-or-create creates (created: true)" \
    eval 'is_rc 0 && [ -n "$id1" ] && json_check "j[\"created\"] is True and j[\"provider\"] == \"local\""'
cli create --provider local --get-or-create --json --label "suite=$tag"
check "the second finds the same sandbox (created: false)" \
    json_check "j['id'] == '$id1' and j['created'] is False"
cli create --provider local --get-or-create --label "suite=$tag"
check "without --json it prints the id alone" rc_and_out 0 "$id1"
cli exec "$id1" -- sh -c 'echo kept >goc.txt'
cli create --provider local --get-or-create --label "suite=$tag"
id=$(out)
cli exec "$id" -- cat goc.txt
check "what one step wrote, the next step's sandbox has" rc_and_out 0 kept

# A template is part of what is asked for.
cli create --provider local --get-or-create --json --template python --label "suite=$tag"
id2=$(jfield id); keep "$id2"
check "another --template: another sandbox" \
    eval 'is_rc 0 && [ -n "$id2" ] && [ "$id2" != "$id1" ] && json_check "j[\"created\"] is True"'
cli create --provider local --get-or-create --template python --label "suite=$tag"
check "and that one again for that template" rc_and_out 0 "$id2"

# A plain create with other labels, to be left out of filtered lists.
cli create --provider local --label "suite=$tag-other"
id3=$(out); keep "$id3"
cli list --provider local --label "suite=$tag"
check "list --label shows the sandboxes with the label, and no other" \
    eval 'is_rc 0 && out_has "$id1" && out_has "$id2" && ! out_has "$id3"'
cli list --provider local --json --label "suite=$tag" --label polysandbox.template=python
check "list with two --label needs both" \
    json_check "[s['id'] for s in j] == ['$id2']"
cli list --provider local --label "suite=$tag-none"
check "list --label with no match prints the header alone" \
    eval 'is_rc 0 && [ "$(wc -l <"$tmp/out")" -eq 1 ]'
cli list --provider local --label suite
check "list --label without = is a usage error" rc_and_err 2 "KEY=VALUE"

# Past its time-to-live a sandbox is left for gc, not handed out.
cli create --provider local --get-or-create --ttl 1s --label "ttl=$tag"
idt=$(out); keep "$idt"
sleep 2
cli create --provider local --get-or-create --label "ttl=$tag"
idt2=$(out); keep "$idt2"
check "an expired sandbox is not handed out" \
    eval 'is_rc 0 && [ -n "$idt2" ] && [ "$idt2" != "$idt" ]'

# Processes racing for new labels make one sandbox between them.
for i in 1 2 3 4 5; do
    "$PS" create --provider local --get-or-create --json --label "race=$tag" \
        >"$tmp/race$i" 2>"$tmp/race$i.err" </dev/null &
done
wait
python3 - "$tmp" >"$tmp/race" <<'EOF'
import json, sys
got = [json.load(open("%s/race%d" % (sys.argv[1], i))) for i in range(1, 6)]
print(" ".join(sorted(set(g["id"] for g in got))))
print(sum(1 for g in got if g["created"]))
EOF
race_ids=$(sed -n 1p "$tmp/race"); keep "$race_ids"
check "5 racing processes get one sandbox" \
    eval '[ -n "$race_ids" ] && [ "$(echo $race_ids | wc -w)" -eq 1 ]'
check "exactly one of them created it" eval '[ "$(sed -n 2p "$tmp/race")" = 1 ]'

cli destroy --provider local "$id1"
cli create --provider local --get-or-create --json --label "suite=$tag"
id4=$(jfield id); keep "$id4"
check "after destroy the oldest left is found" \
    json_check "j['id'] == '$id2' and j['created'] is False"
cli destroy --provider local "$id2"
cli create --provider local --get-or-create --json --label "suite=$tag"
id5=$(jfield id); keep "$id5"
check "when none is left a new one is made" \
    json_check "j['created'] is True and j['id'] not in ('$id1', '$id2')"

# The lock lives in the state directory: one that cannot hold it is named.
mkdir -p "$tmp/ro"
: >"$tmp/ro/locks"
POLYSANDBOX_STATE_DIR="$tmp/ro" cli create --provider local --get-or-create \
    --label "suite=$tag"
check "a lock directory that cannot be made: exit 125 naming it" \
    rc_and_err 125 "$tmp/ro/locks"

done_testing
