/* core/server/server.h - polysandboxd: what the server's files share
 *
 * polysandboxd is a client of the public library only
 * (<polysandbox/sandbox.h>); the library knows no HTTP.  One sbx_ctx
 * serves the whole process (the library is thread-safe).
 *
 * How a request travels:
 *
 *   libmicrohttpd thread          worker thread (fixed pool)
 *   --------------------          --------------------------
 *   headers: route, auth,
 *   request id, body cap
 *   body chunks -> req->body
 *   inline route: handler,
 *     reply at once
 *   worker route: admission
 *     (429 when the queue is
 *     full), suspend, queue  -->  handler(req): parse, call the library,
 *                                 srv_reply*() or srv_sse_*()
 *   resumed: send the reply  <--  resume
 *
 * A worker route whose connection is the only one of its libmicrohttpd
 * thread, while another of those threads is free to serve the rest, runs
 * its handler on that thread when a worker slot is free and none is
 * waited for (srv_pool_run_here): no suspend, no hand-over and back, the
 * same admission, slots, cancellation and drain.  A request that asks
 * for an event stream or a WebSocket is always handed over (the stream
 * and the upgrade need the connection's thread while the handler runs).
 *
 * A route family is one file that defines a table of srv_route and a
 * registration function listed in router.c (see "Adding a route family"
 * there).  Handlers use only the helpers below: the parsed body
 * (srv_req_json), path parameters (srv_req_param), the query
 * (srv_req_query), one error helper (srv_error, srv_error_lib), one
 * JSON-to-options mapping (srv_opts_*), one SSE writer (srv_sse_*).
 *
 * Every function here is internal to the program and prefixed srv_.
 */
#ifndef POLYSANDBOX_SERVER_H
#define POLYSANDBOX_SERVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <polysandbox/sandbox.h>

#include "b64.h"
#include "json-text.h"

struct MHD_Connection;
struct MHD_Response;
struct MHD_Daemon;

typedef struct srv srv;
typedef struct srv_req srv_req;
typedef struct srv_stream srv_stream;

/* ---- exit statuses (EXIT STATUS in doc/polysandboxd.8) ------------------ */

enum {
    SRV_EXIT_OK = 0,        /* stopped by SIGTERM/SIGINT after draining */
    SRV_EXIT_FAIL = 1,      /* could not start: listen, library, threads */
    SRV_EXIT_USAGE = 2,     /* bad option or configuration */
};

/* ---- configuration (conf.c) ---------------------------------------------- */

typedef struct srv_conf {
    char *listen;             /* "ADDR:PORT" */
    char *token_file;         /* or NULL */
    char *tokens;             /* [server] tokens: credential references, or NULL */
    size_t max_body;          /* bytes of a request body */
    unsigned workers;         /* threads running handlers */
    unsigned queue;           /* requests waiting for a worker */
    unsigned io_threads;      /* libmicrohttpd threads */
    unsigned token_concurrency; /* requests in flight per token, 0: no quota */
    unsigned max_connections;
    unsigned connection_timeout_s; /* idle connection (slow clients) */
    uint64_t request_timeout_ns;   /* a body must arrive within this */
    uint64_t grace_ns;        /* SIGTERM: drain this long, then cancel */
    uint64_t heartbeat_ns;    /* SSE comment lines while a run is silent */
    unsigned retry_after_s;   /* Retry-After of a 429 */
    size_t max_download;      /* bytes of GET .../files/{path} */
    unsigned idempotency_max; /* Idempotency-Key entries kept */
    size_t idempotency_memory; /* bytes of stored replies */
    uint64_t idempotency_ttl_ns;
    bool keep_sandboxes;      /* at exit, keep the sandboxes POST /v1/sandboxes made */
    uint64_t sandbox_ttl_ns;  /* time-to-live of those sandboxes unless a request gives one */
    /* jobs (jobs.c) */
    char *state_dir;          /* jobs are kept under STATE_DIR/jobs; NULL: the default */
    char *eval_dir;           /* POST /v1/eval may read files under it; NULL: none */
    unsigned job_workers;     /* runs of jobs at once, all jobs together; 0: workers / 2 */
    unsigned jobs_running;    /* jobs running at once (the others wait, queued) */
    unsigned jobs_max;        /* jobs kept (finished ones expire first) */
    unsigned job_items_max;   /* items (runs, samples) of one job */
    size_t job_output_max;    /* bytes of stdout, and of stderr, kept per item */
    uint64_t job_ttl_ns;      /* a finished job is forgotten after this */
    /* Judge0's routes (compat-judge0.c) */
    bool judge0_delete;       /* DELETE /submissions/{token} (Judge0's ENABLE_SUBMISSION_DELETE) */
    bool judge0_callbacks;    /* callback_url (Judge0's ENABLE_CALLBACKS) */
    unsigned judge0_callbacks_pending; /* callbacks queued in memory */
    unsigned judge0_callbacks_kept;    /* callbacks' files kept in state_dir */
    uint64_t judge0_callbacks_timeout_ns; /* a callback's try (Judge0's CALLBACKS_TIMEOUT) */
    char *families_off;       /* route families switched off: "\0"-separated list */
    size_t families_off_len;
} srv_conf;

/* Defaults (in conf.c), then [server] from the library's configuration,
 * then the command line.  Errors are printed (naming FILE:LINE or the
 * option) and return -1. */
void srv_conf_defaults(srv_conf *c);
int srv_conf_set(srv_conf *c, const char *key, const char *value, const char *where);
int srv_conf_load(srv_conf *c, const sbx_ctx *ctx);
bool srv_conf_family_on(const srv_conf *c, const char *family);
void srv_conf_free(srv_conf *c);

/* ---- the server ---------------------------------------------------------- */

struct srv_router;
struct srv_pool;
struct srv_monitor;
struct srv_auth;
struct srv_metrics;
struct srv_idem;
struct srv_registry;
struct srv_jobs;
struct srv_j0q;

struct srv {
    sbx_ctx *ctx;
    srv_conf conf;
    struct MHD_Daemon *daemon;
    int listen_fd;
    char address[64];         /* what we listen on, port resolved */
    bool loopback;            /* the address is a loopback one */
    struct srv_router *router;
    struct srv_pool *pool;
    struct srv_monitor *monitor;
    struct srv_auth *auth;
    struct srv_metrics *metrics;
    struct srv_idem *idem;
    struct srv_registry *registry;
    struct srv_jobs *jobs;
    struct srv_j0q *judge0;   /* Judge0's background submissions */
    atomic_bool stopping;     /* SIGTERM: new work is refused (503) */
    atomic_uint io_running;   /* libmicrohttpd threads running a handler (http.c) */
    atomic_uint open_requests; /* read and not yet answered in full (http.c) */
    atomic_uint_fast64_t next_id;
    uint64_t started_ns;
};

/* ---- routes (router.c) ----------------------------------------------------- */

enum {
    SRV_GET = 1u << 0,        /* GET implies HEAD */
    SRV_POST = 1u << 1,
    SRV_PUT = 1u << 2,
    SRV_DELETE = 1u << 3,
    SRV_HEAD = 1u << 4,
};
/* The SRV_ bit of the method named by the @len bytes at @m; 0 for one
 * the server does not serve (http.c). */
unsigned srv_method_bit(const char *m, size_t len);

enum {
    SRV_R_WORKER = 1u << 0,   /* runs in a worker thread (anything that may block) */
    SRV_R_OPEN = 1u << 1,     /* needs no token (probes) */
    SRV_R_RAW = 1u << 2,      /* the body is bytes, not JSON */
    SRV_R_ADMIT = 1u << 3,    /* counts against the queue and per-token quota */
};

typedef void (*srv_handler)(srv_req *req);

/* A route: METHODS PATTERN -> handler.  A pattern's segments are literal
 * or "{name}" (one segment) or, last, "{name*}" (the rest, slashes
 * included).  The pattern is the route's name in metrics and logs. */
typedef struct srv_route {
    unsigned methods;
    const char *pattern;
    srv_handler handler;
    unsigned flags;
} srv_route;

struct srv_router *srv_router_new(void);
void srv_router_free(struct srv_router *r);
/* Add @n routes (the table must outlive the server). */
int srv_router_add(struct srv_router *r, const srv_route *routes, size_t n);
/* Register every family that [server] leaves on. */
int srv_router_register(srv *s);
/* Find the route of @path.  *allowed gets the methods the path takes
 * (for 405); params (transfer full, strdup'd) the captures. */
const srv_route *srv_router_match(const struct srv_router *r, unsigned method,
                                  const char *path, unsigned *allowed,
                                  char **params, const char **names, size_t *n_params);
/* Every route, for /openapi.json's test and the man page. */
size_t srv_router_count(const struct srv_router *r);
const srv_route *srv_router_at(const struct srv_router *r, size_t i);
/* The names of the families and the [server] key that switches each. */
size_t srv_family_count(void);
const char *srv_family_name(size_t i);
const char *srv_family_key(size_t i);     /* "compat_piston", or NULL: always on */

/* The route families (one file each). */
int srv_routes_run(struct srv_router *r);        /* native-run.c */
int srv_routes_sandboxes(struct srv_router *r);  /* native-sandboxes.c */
int srv_routes_sandboxes_ws(struct srv_router *r); /* native-ws.c */
int srv_routes_info(struct srv_router *r);       /* native-info.c */
int srv_routes_ops(struct srv_router *r);        /* native-ops.c */
int srv_routes_web(struct srv_router *r);        /* native-web.c */
int srv_routes_jobs(struct srv_router *r);       /* native-jobs.c */
int srv_routes_piston(struct srv_router *r);     /* compat-piston.c */
int srv_routes_fusion(struct srv_router *r);     /* compat-fusion.c */
int srv_routes_seed(struct srv_router *r);       /* compat-seed.c */
int srv_routes_judge0(struct srv_router *r);     /* compat-judge0.c */

/* ---- one request (http.c) --------------------------------------------------- */

#define SRV_MAX_PARAMS 4
#define SRV_RID_MAX 65

struct srv_req {
    srv *s;
    struct MHD_Connection *conn;
    const srv_route *route;
    unsigned method;           /* SRV_GET, ... */
    char *path;                /* (owned) */
    char rid[SRV_RID_MAX];     /* request id: X-Request-ID or ours */
    char *params[SRV_MAX_PARAMS];
    const char *param_names[SRV_MAX_PARAMS];
    size_t n_params;
    char **query;              /* "key\0value" pairs, (owned) */
    size_t n_query;
    char *accept;              /* Accept header (owned) or NULL */
    char *idem_key;            /* Idempotency-Key (owned) or NULL */
    int token;                 /* index of the caller's token, -1: none */
    char *body;                /* NUL-terminated (owned) */
    size_t body_len, body_cap;
    json_t *json;              /* the body parsed (srv_req_json) */
    uint64_t t0;               /* when the headers arrived */

    /* the reply */
    unsigned status;
    struct MHD_Response *resp;
    const char *err_code;      /* the error code replied, for metrics */
    char *err_message;         /* and its message (owned): a WebSocket's error, a
                                  job item's reason */
    srv_stream *_Atomic stream; /* set by the worker, read by the monitor */

    /* life */
    int state;
    atomic_int refs;           /* the connection's and a worker's */
    sbx_cancel *cancel;        /* worker routes: fired when the client goes away */
    atomic_bool gone;          /* the client closed its connection */
    atomic_bool refused;       /* still queued when the server stopped: 503 */
    int fd;                    /* the connection's socket, for the monitor */
    bool monitored;            /* (monitor lock) */
    uint64_t mon_serial;
    srv_req *mon_prev, *mon_next;
    bool admitted;             /* counted in the pool's in-flight */
    bool upgraded;             /* a WebSocket (ws.c): the connection is no longer HTTP */
    bool here;                 /* its handler runs on the thread that read it:
                                  it cannot stream (srv_sse_begin refuses) */
    void *idem;                /* the Idempotency-Key entry this request owns */
    void *idem_note;           /* its reply, noted for the entry */
    void *user;                /* a handler's own state */
    const char *err_prefix;    /* put before the message of an error replied
                                  ("items[3]: "), or NULL */
};

/* A path parameter by name ({id}), or NULL. */
const char *srv_req_param(const srv_req *r, const char *name);
/* The first query argument @key, or NULL; srv_req_query_at walks all of
 * them (a key may repeat: ?label=a=1&label=b=2). */
const char *srv_req_query(const srv_req *r, const char *key);
size_t srv_req_query_count(const srv_req *r);
void srv_req_query_at(const srv_req *r, size_t i, const char **key, const char **value);
/* The body as a JSON object: on a malformed body replies 400 naming
 * where and returns NULL (an empty body is {}).  Borrowed. */
json_t *srv_req_json(srv_req *r);
/* A request header (the first of that name, case-insensitive), or NULL;
 * valid while the request lives. */
const char *srv_req_header(const srv_req *r, const char *name);
/* True when the client asked for text/event-stream. */
bool srv_req_wants_sse(const srv_req *r);
/* True when the client asked for text/html. */
bool srv_req_wants_html(const srv_req *r);
/* True when the client asked for text/markdown. */
bool srv_req_wants_markdown(const srv_req *r);
/* A hint the handler can check in long loops. */
bool srv_req_gone(const srv_req *r);

/* Start, stop the HTTP side. */
int srv_http_start(srv *s);
void srv_http_quiesce(srv *s);
/* Wait until every request read has been answered in full (its reply
 * written to the client, not just made) or until @deadline (srv_now_ns);
 * true when none is left. */
bool srv_http_flush(srv *s, uint64_t deadline);
void srv_http_stop(srv *s);
/* A worker finished @r's handler: wake its connection.  (workers.c) */
void srv_http_resume(srv_req *r);
void srv_req_unref(srv_req *r);

/* The index of the token @token (of @len bytes) among the server's, or
 * -1; compat routes with a header of their own (X-Auth-Token) use it.
 * (auth.c) */
int srv_auth_token(const srv *s, const char *token, size_t len);
/* The owner name of the token @token (an index as srv_auth_token gives):
 * SRV_OWNER_LEN hex digits, the same for the same token at every start;
 * "" for -1 (a server without tokens).  Owned by the server.  (auth.c) */
#define SRV_OWNER_LEN 32
const char *srv_auth_owner(const srv *s, int token);

/* ---- replies (reply.c) --------------------------------------------------------- */

/* Set @r's reply (any thread that owns @r).  @body (transfer full,
 * malloc'd) is sent as is. */
void srv_reply(srv_req *r, unsigned status, const char *content_type, char *body,
               size_t len);
/* @body (transfer none) lives as long as the program (the page's
 * compiled-in files): sent without a copy, never noted for an
 * Idempotency-Key (GET only). */
void srv_reply_static(srv_req *r, unsigned status, const char *content_type, const void *body,
                      size_t len);
/* JSON (transfer full: decref'd). */
void srv_reply_json(srv_req *r, unsigned status, json_t *j);
/* Keep a copy of @r's reply for its Idempotency-Key (srv_reply does it;
 * an SSE run notes its final object).  (idem.c) */
void srv_idem_note(srv_req *r, unsigned status, const char *ctype, const char *body,
                   size_t len);
/* ... and the Location header of that reply (srv_reply_header does it). */
void srv_idem_note_location(srv_req *r, const char *location);
/* What identifies @r's request for its Idempotency-Key: a hash of the
 * method, the path and the body.  (idem.c) */
#define SRV_IDEM_FP_SIZE 32
void srv_idem_fingerprint(const srv_req *r, unsigned char out[SRV_IDEM_FP_SIZE]);
/* A header on the reply set (call after srv_reply*). */
void srv_reply_header(srv_req *r, const char *name, const char *value);
/* The one error shape: {"error":{"code","message","provider"}}. */
void srv_error(srv_req *r, unsigned status, const char *code, const char *provider,
               const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The library's last error on this thread (rc its code).  @not_found:
 * the status of SBX_E_NOT_FOUND (404 for a sandbox in the path, 422 for a
 * provider or template the body names). */
void srv_error_lib(srv_req *r, int rc, unsigned not_found);
/* The library's last error message on this thread, or sbx_strerror(@rc)
 * when it has none; valid until the thread's next library call. */
const char *srv_lib_message(srv *s, int rc);
/* The status and code name an sbx_status maps to. */
unsigned srv_status_of(int rc, unsigned not_found, const char **code);
/* An error object (new reference) as srv_error builds it; @provider and
 * @message may quote a request's bytes, which need not be UTF-8. */
json_t *srv_error_json(const char *code, const char *provider, const char *message);

/* ---- JSON to options (opts.c) ------------------------------------------------- */

/* Which fields a body may carry. */
enum {
    SRV_OPT_CREATE = 1u << 0,  /* provider fallback template image limits network env labels ttl */
    SRV_OPT_EXEC = 1u << 1,    /* language code args argv shell stdin files env cwd timeout */
    SRV_OPT_PERSIST = 1u << 2, /* labels ttl get_or_create (POST /v1/sandboxes) */
};

typedef struct srv_opts {
    sbx_create_opts *create;   /* (owned) */
    sbx_exec_opts *exec;       /* (owned) */
    const char *provider;      /* (borrowed from the JSON) */
    const char *template_name;
    const char *language;
    char **labels;             /* "K=V" (owned), for get-or-create and list */
    size_t n_labels;
    bool get_or_create;
    bool has_labels;
} srv_opts;

/* Fill @o from the JSON object @j with the fields @which allows.  On a
 * bad field: replies 400 naming the field (or 422 for an unknown
 * language) and returns -1.  @extra: names of fields the caller reads
 * itself (NULL-terminated), so they are not "unknown". */
int srv_opts_from_json(srv_req *r, json_t *j, unsigned which, const char *const *extra,
                       srv_opts *o);
void srv_opts_free(srv_opts *o);

/* Typed field readers with the same 400s (NULL/false when absent). */
int srv_json_string(srv_req *r, json_t *j, const char *field, const char **out);
int srv_json_bool(srv_req *r, json_t *j, const char *field, bool *out);
/* A duration (ns), size (bytes) or count: a number in seconds, bytes or
 * units, or a string with a unit ("500ms", "64M"); 0 is refused. */
enum { SRV_DURATION, SRV_SIZE, SRV_COUNT };
int srv_json_quantity(srv_req *r, json_t *v, const char *field, int kind, uint64_t *out);
/* Decode base64 (transfer full *out); -1 after a 400 naming @field. */
int srv_base64_decode(srv_req *r, const char *field, const char *text, size_t len,
                      unsigned char **out, size_t *out_len);
/* A path a request may write into a sandbox's work directory: relative,
 * without ".." or empty parts. */
bool srv_path_safe(const char *path);

/* POST /v1/run's handler (native-run.c), for routes that are a run too. */
void srv_run(srv_req *r);
/* Answer a run or exec (native-run.c): the result object, or the error;
 * an event of the stream when @r streams.  @t0: when it started. */
void srv_run_result(srv_req *r, const srv_opts *o, int rc, sbx_result *res, uint64_t t0);

/* ---- server-sent events (sse.c) ------------------------------------------------- */

/* Start the stream: 200, text/event-stream, and wake the connection so
 * the headers go out now.  Then events, then srv_sse_end.  Writers block
 * (up to a bound) while the client is slower than the program. */
int srv_sse_begin(srv_req *r);
/* "event: NAME\ndata: JSON\n\n" (the JSON compact on one line; j decref'd). */
int srv_sse_event(srv_req *r, const char *name, json_t *j);
/* The same with preformatted one-line JSON text. */
int srv_sse_event_text(srv_req *r, const char *name, const char *json_text);
/* An output chunk: {"data":"...","encoding":"utf-8"|"base64"}; a UTF-8
 * sequence cut at the end of a chunk waits for the next one. */
int srv_sse_output(srv_req *r, int stream, const void *buf, size_t len);
/* ": ping" comment (the monitor, for silent runs). */
void srv_sse_heartbeat(srv_stream *st);
uint64_t srv_sse_idle_ns(srv_stream *st, uint64_t now);
/* Flush any held UTF-8 bytes, end the stream. */
void srv_sse_end(srv_req *r);
void srv_stream_unref(srv_stream *st);
/* The content reader side (http.c hands it to libmicrohttpd). */
struct MHD_Response *srv_stream_response(srv_stream *st);

/* A stream its reader feeds, for events that outlive any worker (a job's
 * events).  Whenever what was put is sent (and at the start), the reader
 * calls @fill on libmicrohttpd's thread; it puts what it has with
 * srv_stream_put (never blocking, a bounded amount) and returns
 * SRV_FILL_MORE (call again once that is sent), SRV_FILL_WAIT (nothing
 * new: call again after srv_stream_poke) or SRV_FILL_END (the stream is
 * complete, or failed).  The fill function holds no lock of its own while
 * calling srv_stream_put. */
enum { SRV_FILL_WAIT = 0, SRV_FILL_MORE = 1, SRV_FILL_END = 2 };
typedef int (*srv_stream_fill)(void *ud, srv_stream *st);
/* @r's reply (a network-thread handler): 200 text/event-stream fed by
 * @fill.  @ud (transfer full) is released with @ud_free when the stream
 * is freed.  Returns a reference (srv_stream_unref) for the poker, or
 * NULL having replied 500. */
srv_stream *srv_stream_pull(srv_req *r, srv_stream_fill fill, void *ud,
                            void (*ud_free)(void *));
/* "id: ID\nevent: NAME\ndata: JSON\n\n" (@id may be NULL); never blocks. */
int srv_stream_put(srv_stream *st, const char *id, const char *name, const char *json_text);
/* Something new for @st's fill function: wake its reader. */
void srv_stream_poke(srv_stream *st);
/* The client went away or the stream ended. */
bool srv_stream_closed(srv_stream *st);
/* Bytes put but not sent yet. */
size_t srv_stream_buffered(srv_stream *st);

/* ---- workers and admission (workers.c) --------------------------------------- */

int srv_pool_start(srv *s);
/* Queue @r (admitted) for a worker: 0. */
int srv_pool_submit(srv *s, srv_req *r);
/* Run @r's handler (admitted) on this thread, now, when a slot is free
 * and no request waits for one: true once it ran and @r has its reply;
 * false (nothing done) when it must be queued with srv_pool_submit. */
bool srv_pool_run_here(srv *s, srv_req *r);
/* Admission of work routes: in-flight counts, per-token quota.  Returns
 * 0, or the status to refuse with (429, 503) having replied. */
int srv_pool_admit(srv *s, srv_req *r);
void srv_pool_release(srv *s, srv_req *r);
/* Undo an admission whose request was answered without being queued. */
void srv_pool_unadmit(srv *s, srv_req *r);
/* Wait until nothing is queued or running, up to @ns; true when idle. */
bool srv_pool_drain(srv *s, uint64_t ns);
/* Fire the cancel of every queued and running request. */
void srv_pool_cancel_all(srv *s);
void srv_pool_stop(srv *s);
typedef struct srv_pool_stats {
    unsigned workers, busy, queued, queue_cap;
    uint64_t admitted, rejected_queue, rejected_quota, completed;
} srv_pool_stats;
void srv_pool_get_stats(srv *s, srv_pool_stats *st);

/* ---- the connection monitor (monitor.c) ---------------------------------------- */

/* Watches the sockets of requests in the hands of a worker: a client that
 * closes its connection fires the request's cancel; silent SSE streams get
 * heartbeats. */
int srv_monitor_start(srv *s);
void srv_monitor_add(srv_req *r);
void srv_monitor_del(srv_req *r);
void srv_monitor_stop(srv *s);

/* ---- sandboxes the server knows (registry.c) ------------------------------------- */

/* An entry per sandbox id, serialising its uses (one thread per handle)
 * and keeping its handle open between requests. */
struct srv_box;
/* The entry of @id on @provider, made if need be; @provider NULL: only
 * one already known.  (transfer full): give it back with srv_box_put. */
struct srv_box *srv_box_get(srv *s, const char *provider, const char *id);
void srv_box_put(srv *s, struct srv_box *b);
/* Hold the sandbox for one use: 0, or -1 when it was destroyed. */
int srv_box_lock(struct srv_box *b);
void srv_box_unlock(struct srv_box *b);
/* Under the lock: the open handle (opening it first), or the library's
 * error (SBX_E_NOT_FOUND: no such sandbox). */
int srv_box_handle(srv *s, struct srv_box *b, sbx_sandbox **sb);
void srv_box_drop_handle(struct srv_box *b);
/* Under the lock: the cancel of the exec that holds it (NULL when done),
 * so that a DELETE of the sandbox stops that exec rather than wait. */
void srv_box_busy(srv *s, struct srv_box *b, sbx_cancel *c);
void srv_box_interrupt(srv *s, struct srv_box *b);
/* Under the lock: keep @sb (transfer full) as the handle; @ours: this
 * server made it (destroyed at exit). */
void srv_box_adopt(struct srv_box *b, sbx_sandbox *sb, bool ours);
/* Under the lock: destroy the sandbox; the entry is then gone. */
int srv_box_destroy(srv *s, struct srv_box *b);
const char *srv_box_id(const struct srv_box *b);
/* Keep @sb (transfer full) in the registry, as srv_box_adopt does, and
 * return its entry (give it back with srv_box_put); NULL having
 * destroyed @sb and replied 500 to @r when out of memory. */
struct srv_box *srv_box_track(srv *s, sbx_sandbox *sb, bool ours, srv_req *r);
/* The sandbox of the request's {id} (and ?provider=) locked, with its
 * handle: NULL having replied (404 when there is none).  Give it back
 * with srv_box_done.  (native-sandboxes.c) */
struct srv_box *srv_box_use(srv_req *r, sbx_sandbox **sb);
void srv_box_done(srv_req *r, struct srv_box *b);
const char *srv_box_provider(const struct srv_box *b);

/* ---- jobs: batch and eval (jobs.c) ------------------------------------------------ */

/* Load the jobs kept under [server] state_dir and start the ones that did
 * not finish (after the worker pool).  -1 when the directory is unusable. */
int srv_jobs_start(srv *s);
/* SIGTERM: start no more job items. */
void srv_jobs_quiesce(srv *s);
/* Wait until @deadline_ns (srv_now_ns) for the items running to finish,
 * then cancel the rest (they run again at the next start) and free it all. */
void srv_jobs_stop(srv *s, uint64_t deadline_ns);

/* ---- Judge0's background submissions (compat-judge0-queue.c) ------------------------ */

/* The queue of submissions run in the background (POST /submissions
 * without wait=true): at most [server] queue wait, their runs pass the
 * jobs' gate (jobs-gate.c) as one job does, on at most job_workers
 * threads, made when needed.  Started and stopped with the server
 * (main.c); 0 or -1. */
int srv_j0_queue_start(srv *s);
/* Stop: what waits is dropped, what runs may finish until @deadline_ns
 * (srv_now_ns), then is cancelled. */
void srv_j0_queue_stop(srv *s, uint64_t deadline_ns);
/* Judge0's submissions waiting in the background and running now (zeros
 * when the queue is not started), for /metrics. */
void srv_j0_queue_stats(srv *s, unsigned *queued, unsigned *running);
/* Judge0's callbacks, for /metrics. */
typedef struct srv_j0_cb_counts {
    unsigned queued;           /* in memory: waiting or being sent */
    unsigned kept;             /* files in the state directory */
    unsigned on_disk;          /* of those, waiting for a place in the queue */
    unsigned long long refused, dropped, given_up, delivered;
} srv_j0_cb_counts;
/* Judge0's callbacks' counts (zeros when there is no sender). */
void srv_j0_callback_counts(srv *s, srv_j0_cb_counts *out);

/* ---- metrics (metrics.c) ------------------------------------------------------- */

/* A run or exec ended with @status after @ns (handlers call it). */
void srv_metrics_run(srv *s, const char *provider, const char *tmpl, const char *status,
                     uint64_t ns);
/* The Prometheus text (transfer full), or NULL on ENOMEM. */
char *srv_metrics_text(srv *s, size_t *len);

/* ---- logging (log.c) ----------------------------------------------------------- */

/* "polysandboxd: [RID] message" on stderr, one line; @r may be NULL. */
void srv_log(const srv_req *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint64_t srv_now_ns(void);

#endif /* POLYSANDBOX_SERVER_H */
