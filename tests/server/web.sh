#!/bin/sh
# tests/server/web.sh - how polysandboxd serves its page's files (GET /,
# /web/NAME): an ETag per file and Cache-Control: no-cache, If-None-Match
# answered with a 304 and no body (the tag, a list holding it, W/, "*"),
# anything else with the file; gzipped, with a tag of its own, for a
# client that accepts gzip; /web/editor.js is the code editor's bundle
# or, in a build without it, the stand-in that keeps the textarea.  The
# page in a browser is tests/web/.
. "$top_srcdir/tests/server/lib.sh"

plan 13

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
    eval 'is 200 && header Content-Type | grep -q "^text/javascript" && [ -z "$(header Content-Encoding)" ] &&
          { cmp -s "$tmp/out" "$web/editor-none.js" ||
            { [ -f "$web/editor.js" ] && cmp -s "$tmp/out" "$web/editor.js"; }; }'

# gzip, for a client that accepts it (app.js: large enough to be kept gzipped)
req GET /web/app.js
cp "$tmp/out" "$tmp/app.js"
app_tag=$(header ETag)
req GET /web/app.js -H 'Accept-Encoding: gzip, deflate, br, zstd'
gz_tag=$(header ETag)
check "Accept-Encoding: gzip: the same file gzipped, its own tag, Vary: Accept-Encoding" \
    eval 'is 200 && [ "$(header Content-Encoding)" = gzip ] && [ "$(header Vary)" = Accept-Encoding ] &&
          gzip -dc <"$tmp/out" | cmp -s - "$tmp/app.js" && [ "$gz_tag" != "$app_tag" ]'
req GET /web/app.js -H 'Accept-Encoding: gzip;q=0, br'
check "gzip;q=0: the bytes as they are" \
    eval 'is 200 && [ -z "$(header Content-Encoding)" ] && cmp -s "$tmp/out" "$tmp/app.js"'
rm -f "$tmp/out"
req GET /web/app.js -H 'Accept-Encoding: gzip' -H "If-None-Match: $gz_tag"
check "the gzipped tag back, gzip accepted: 304" eval 'is 304 && [ ! -s "$tmp/out" ]'
req GET /web/app.js -H "If-None-Match: $gz_tag"
check "the gzipped tag back, gzip not accepted: 200 and the plain bytes (another representation)" \
    eval 'is 200 && cmp -s "$tmp/out" "$tmp/app.js"'
