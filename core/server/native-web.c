/* core/server/native-web.c - the page: GET / and GET /web/{file}
 *
 * The files are compiled in (web-data.c, from core/server/web/), so the
 * page is the one this build's API answers.  They need no token (they
 * hold nothing secret; the page asks for the token and sends it with
 * every API call) and run on the network thread: nothing here blocks.
 * Every file goes out under a Content-Security-Policy that allows
 * scripts, styles and connections to this server only, and no inline
 * script or style, so that output a sandbox printed can never run as
 * code in the page even if it were inserted as markup by mistake.
 * Each carries its ETag (embed.sh hashes it) and If-None-Match gets a
 * 304, so a reload moves no bytes the browser already has; a client that
 * accepts gzip gets the gzipped bytes embed.sh kept (their own ETag).
 */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "server.h"
#include "server-int.h"

/* img-src blob: lets the Playground show a run's image artifacts, which
 * come as base64 in the result and are shown from a Blob the page made
 * itself: no image is fetched from anywhere else. */
#define CSP "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " \
            "img-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

static void send_asset(srv_req *r, const char *name)
{
    const srv_web_asset *a = NULL;
    const char *etag;
    bool fresh, gz;

    for (size_t i = 0; i < srv_web_asset_count && !a; i++)
        if (strcmp(srv_web_assets[i].name, name) == 0)
            a = &srv_web_assets[i];
    if (!a) {
        srv_error(r, 404, "not_found", NULL, "no file %s in the page", name);
        return;
    }
    /* gzipped for a client that takes it (Chrome, Firefox, curl
     * --compressed): the editor's bundle is a third of its size so */
    gz = a->gz && srv_accepts_gzip(srv_req_header(r, "Accept-Encoding"));
    etag = gz ? a->gz_etag : a->etag;
    /* the browser's copy is this build's: 304 and no body (RFC 9110 §13.1.2) */
    fresh = srv_etag_match(srv_req_header(r, "If-None-Match"), etag);
    if (fresh)
        srv_reply_static(r, 304, NULL, "", 0);
    else
        srv_reply_static(r, 200, a->type, gz ? a->gz : a->data, gz ? a->gz_len : a->len);
    srv_reply_header(r, "ETag", etag);
    if (gz && !fresh)
        srv_reply_header(r, "Content-Encoding", "gzip");
    if (a->gz)
        srv_reply_header(r, "Vary", "Accept-Encoding");
    srv_reply_header(r, "Content-Security-Policy", CSP);
    srv_reply_header(r, "X-Content-Type-Options", "nosniff");
    srv_reply_header(r, "Referrer-Policy", "no-referrer");
    /* Kept, but revalidated before each use: the URLs carry no version,
     * so a new build's page is never mixed with an old one, and an
     * unchanged file costs a 304. */
    srv_reply_header(r, "Cache-Control", "no-cache");
}

static void page(srv_req *r)
{
    send_asset(r, "index.html");
}

static void file(srv_req *r)
{
    send_asset(r, srv_req_param(r, "file"));
}

static const srv_route routes[] = {
    { SRV_GET, "/", page, SRV_R_OPEN },
    { SRV_GET, "/web/{file}", file, SRV_R_OPEN },
};

int srv_routes_web(struct srv_router *rt)
{
    return srv_router_add(rt, routes, sizeof routes / sizeof routes[0]);
}
