#!/bin/sh
# tests/server/web.sh - how polysandboxd serves its page's files (GET /,
# /web/NAME): an ETag per file and Cache-Control: no-cache, If-None-Match
# answered with a 304 and no body (the tag, a list holding it, W/, "*"),
# anything else with the file; /web/editor.js is the code editor's bundle
# or, in a build without it, the stand-in that keeps the textarea.  The
# page in a browser is tests/web/.
. "$top_srcdir/tests/server/lib.sh"

plan 9

check "polysandboxd starts" srv_start
web="$top_srcdir/core/server/web"

req GET /
tag=$(header ETag)
check "GET /: 200, the page, a quoted ETag, Cache-Control: no-cache" \
    eval 'is 200 && cmp -s "$tmp/out" "$web/index.html" &&
          printf %s "$tag" | grep -q "^\"[0-9a-f-]\{8,\}\"\$" && [ "$(header Cache-Control)" = no-cache ]'
rm -f "$tmp/out"   # curl writes no file for a reply without a body
req GET / -H "If-None-Match: $tag"
check "the same tag back: 304, no body, the same ETag, the CSP still sent" \
    eval 'is 304 && [ ! -s "$tmp/out" ] && [ "$(header ETag)" = "$tag" ] &&
          header Content-Security-Policy | grep -q "default-src .none."'
req GET / -H "If-None-Match: \"nope\", W/$tag"
check "a list holding it, weak (W/): 304" is 304
req GET / -H 'If-None-Match: *'
check "*: 304" is 304
req GET / -H 'If-None-Match: "0000"'
check "another tag: 200 and the page" eval 'is 200 && cmp -s "$tmp/out" "$web/index.html"'
req GET / -H "If-None-Match: ${tag%\"}"
check "a tag cut short (no closing quote): 200" is 200

req GET /web/app.js
check "app.js has its own tag" eval 'is 200 && [ -n "$(header ETag)" ] && [ "$(header ETag)" != "$tag" ]'
req GET /web/editor.js
check "editor.js: the bundle of this build, or the stand-in that keeps the textarea" \
    eval 'is 200 && header Content-Type | grep -q "^text/javascript" &&
          { cmp -s "$tmp/out" "$web/editor-none.js" ||
            { [ -f "$web/editor.js" ] && cmp -s "$tmp/out" "$web/editor.js"; }; }'
