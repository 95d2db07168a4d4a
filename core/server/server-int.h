/* core/server/server-int.h - the server's machinery (not for route files)
 *
 * Route handlers need only server.h; these are the pieces http.c, main.c
 * and the workers wire together.
 */
#ifndef POLYSANDBOX_SERVER_INT_H
#define POLYSANDBOX_SERVER_INT_H

#include <sys/socket.h>

#include "server.h"

/* http.c */
/* Bind [server] listen: 0, -1 (cannot), -2 (refused: not an address, or
 * not loopback and no token). */
int srv_http_listen(srv *s);
bool srv_addr_is_loopback(const struct sockaddr *sa);
/* The client went away: mark @r gone, cancel its run, end its stream. */
void srv_req_abandon(srv_req *r);
/* Stop @r's run (shutdown after the grace time). */
void srv_req_cancel(srv_req *r);

/* sse.c */
void srv_stream_close(srv_stream *st);
srv_stream *srv_stream_ref(srv_stream *st);

/* auth.c: tokens from the token file and [server] tokens. */
int srv_auth_load(srv *s);
/* 0, or -1 having replied 401. */
int srv_auth_check(srv *s, srv_req *r);
size_t srv_auth_count(const srv *s);
void srv_auth_free(srv *s);

/* registry.c */
int srv_registry_new(srv *s);
size_t srv_registry_count(srv *s);
/* Destroy the sandboxes this server made (unless keep_sandboxes), close
 * the other handles. */
void srv_registry_free(srv *s);

/* idem.c */
int srv_idem_new(srv *s);
void srv_idem_free(srv *s);
/* A POST with an Idempotency-Key: 0 to go on (the key is now in
 * flight), -1 having replied (the stored reply, 409, 422). */
int srv_idem_begin(srv *s, srv_req *r);
/* The request is answered: keep its noted reply for the key, or free
 * the key when nothing ran. */
void srv_idem_end(srv *s, srv_req *r);

/* openapi-data.c (generated from openapi.json) */
extern const char srv_openapi_json[];
extern const size_t srv_openapi_json_len;

/* web-data.c (generated from core/server/web/ by its embed.sh): the
 * page's files, served by native-web.c. */
typedef struct srv_web_asset {
    const char *name;          /* the base name: "app.js" */
    const char *type;          /* its Content-Type */
    const unsigned char *data;
    size_t len;
    const char *etag;          /* a strong tag of its bytes, quoted: "\"1a2b...\"" */
    const unsigned char *gz;   /* the same gzipped, or NULL (not worth it, no gzip) */
    size_t gz_len;
    const char *gz_etag;       /* the gzipped bytes' own tag ("\"1a2b...-gz\"") */
} srv_web_asset;
extern const srv_web_asset srv_web_assets[];
extern const size_t srv_web_asset_count;

/* True when the If-None-Match @header (a client's, may be NULL) names
 * @etag (quoted, as sent in ETag) or is "*", compared weakly; a header
 * that breaks the grammar names nothing.  (etag.c) */
bool srv_etag_match(const char *header, const char *etag);
/* True when the Accept-Encoding @header (a client's, may be NULL) accepts
 * gzip: "gzip", "x-gzip" or "*" with a weight above 0 (RFC 9110 §12.5.3).
 * A header that breaks the grammar accepts nothing but the bytes as they
 * are.  (etag.c) */
bool srv_accepts_gzip(const char *header);

/* monitor.c: every connection, for the slow-client deadline. */
void srv_conn_started(srv *s, int fd, void **ctx);
void srv_conn_closed(srv *s, void **ctx);
/* A request of the connection @ctx got its headers (@begins) or was
 * answered (the deadline for the next one starts). */
void srv_conn_request(srv *s, void *ctx, bool begins);

/* metrics.c */
int srv_metrics_new(srv *s);
void srv_metrics_free(srv *s);
/* A request is done (libmicrohttpd completed it). */
void srv_metrics_request(srv *s, const srv_req *r, bool completed);

#endif /* POLYSANDBOX_SERVER_INT_H */
