#!/bin/sh
# tests/templates/interpreted.sh - the interpreted templates on the local
# provider: a hello world and a syntax error each, a skip where the host
# lacks the interpreter.
. "$top_srcdir/tests/templates/lib.sh"

plan 18

# NAME|EXTENSION|HELLO|BROKEN, one a line
while IFS='|' read -r name ext good bad; do
    printf '%s\n' "$good" >"$tmp/hello$ext"
    printf '%s\n' "$bad" >"$tmp/bad$ext"
    try hello "$name" "$tmp/hello$ext"
    try broken "$name" "$tmp/bad$ext"
done <<'LIST'
python|.py|print("hello python")|print("hello"
sh|.sh|echo hello sh|if true; then
bash|.bash|echo "hello ${BASH_VERSION:+bash}"|for ((i = 0; ; do
node|.js|console.log("hello node");|console.log("hello";
ruby|.rb|puts "hello ruby"|def x(
php|.php|<?php echo "hello php\n";|<?php echo "hello"
perl|.pl|print "hello perl\n";|print "hello\n"; }
lua|.lua|print("hello lua")|print("hello"
r|.R|cat("hello r\n")|cat("hello"
LIST
report
