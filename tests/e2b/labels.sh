#!/bin/sh
# tests/e2b/labels.sh - labels whose key or value hold '+', '%', '&', '='
# or a space, found through the e2b provider's list filter against the
# E2B fake, which decodes the filter as the service does (tests/sdk/e2b.sh
# proves that with E2B's own SDK): list --label and create --get-or-create
# must find the sandbox, and only it.
. "$top_srcdir/tests/e2b/lib.sh"
plan 10
start_fake

K='k+y%&x'
V1='v+a%l&u=e%41 b'
V2='v a%l&u=e%41 b'    # V1 with a space for its '+'

cli create --label "$K=$V1" --label run=labels --ttl 120s
id1=$(cat "$tmp/out")
check "create with a label holding + % & = and a space" sh -c "[ $rc -eq 0 ] && [ -n '$id1' ]"
cli create --label "$K=$V2" --label run=labels --ttl 120s
id2=$(cat "$tmp/out")
check "create a second sandbox whose value differs only by a space" \
    sh -c "[ $rc -eq 0 ] && [ -n '$id2' ] && [ '$id1' != '$id2' ]"
check "the labels reach E2B's metadata unchanged" fake_state \
    "sorted(x['metadata'].get('$K') for x in s['sandboxes']) == sorted(['$V1', '$V2'])"

cli list --json --label "$K=$V1"
check "list --label finds exactly the first" json_check "[x['id'] for x in j] == ['$id1']"
check "list gives its labels back whole" json_check "j[0]['labels']['$K'] == '$V1'"
cli list --json --label "$K=$V2"
check "list --label with the space finds exactly the second" json_check "[x['id'] for x in j] == ['$id2']"
cli list --json --label "$K=$V1" --label run=labels
check "two labels, both holding separators of the filter" json_check "[x['id'] for x in j] == ['$id1']"
cli list --json --label "$K=v"
check "a value no sandbox has finds none" json_check "j == []"

cli create --get-or-create --label "$K=$V1" --ttl 120s
check "get-or-create finds the first instead of creating one" \
    sh -c "[ $rc -eq 0 ] && [ \"\$(cat '$tmp/out')\" = '$id1' ]"
check "no third sandbox was made" fake_state "len(s['sandboxes']) == 2"

for i in "$id1" "$id2"; do cli destroy "$i"; done
done_testing
