/* core/server/compat-judge0.h - what the Judge0 routes' files share
 * (compat-judge0.c: the routes, a submission's checks and run;
 * compat-judge0-store.c: the submissions kept for GET
 * /submissions/{token}, and how a submission is shown;
 * compat-judge0-queue.c: the submissions run in the background;
 * compat-judge0-callback.c: their callback_url PUT;
 * compat-judge0-cbfile.c: the callbacks kept in the state directory) */
#ifndef POLYSANDBOX_SERVER_COMPAT_JUDGE0_H
#define POLYSANDBOX_SERVER_COMPAT_JUDGE0_H

#include "compat.h"

/* The attributes that are bytes (base64 when base64_encoded=true). */
enum srv_j0_text {
    J0_SOURCE_CODE, J0_STDIN, J0_EXPECTED_OUTPUT, J0_STDOUT, J0_STDERR,
    J0_COMPILE_OUTPUT, J0_MESSAGE, J0_N_TEXT
};

#define SRV_J0_TOKEN_LEN 36    /* a UUID, as Judge0's tokens */

/* A submission: queued, running or finished. */
typedef struct srv_j0_sub {
    char token[SRV_J0_TOKEN_LEN + 1];
    srv_bytes text[J0_N_TEXT];
    bool has[J0_N_TEXT];       /* false: null */
    json_t *attrs;             /* the other attributes (owned) */
} srv_j0_sub;

void srv_j0_sub_free(srv_j0_sub *sub);

/* Check a fields= query argument (NULL: Judge0's default set): 0, or -1
 * with Judge0's message in @err. */
int srv_j0_fields_check(const char *fields, char *err, size_t errsz);
/* @sub as Judge0 shows it, with the attributes @fields (checked) names;
 * bytes as base64 (Ruby's Base64.encode64: lines of 60) with @base64.
 * NULL when an attribute is not UTF-8 and @base64 is false (or ENOMEM:
 * *utf8 says which). */
json_t *srv_j0_show(const srv_j0_sub *sub, bool base64, const char *fields, bool *utf8);

/* Keep @sub (transfer full) for srv_j0_find; the oldest go beyond the
 * store's bounds. */
void srv_j0_keep(srv_j0_sub *sub);
/* A copy of @sub (new), or NULL on ENOMEM. */
srv_j0_sub *srv_j0_sub_copy(const srv_j0_sub *sub);
/* The submission kept with @sub's token becomes @sub (transfer full):
 * the one kept is freed.  When none is kept any more (the store's
 * bounds made it go), @sub is freed. */
void srv_j0_replace(srv_j0_sub *sub);
/* The submission kept as @token gets the status @id (1 In Queue,
 * 2 Processing). */
void srv_j0_set_status(const char *token, int id);
/* {"id", "description"} of Judge0's status @id (new reference). */
json_t *srv_j0_status_json(int id);
/* srv_j0_show of the submission @token kept, under the store's lock:
 * 0, -1 when there is none (kept), 1 when not UTF-8, 2 on ENOMEM. */
int srv_j0_find(const char *token, bool base64, const char *fields, json_t **out);
/* Forget the finished submission @token, and give what it was in @out
 * (new; srv_j0_show of it in base64, as Judge0 answers a DELETE): 0, -1
 * when none is kept, 1 when it has not finished (its status, 1 or 2, in
 * @status: Judge0 refuses that), 2 on ENOMEM. */
int srv_j0_remove(const char *token, const char *fields, json_t **out, int *status);

/* ---- a submission's request and run (compat-judge0.c) ------------------------- */

/* A submission asked for: what runs, and the submission it fills. */
typedef struct srv_j0_req {
    srv *s;
    const struct srv_j0_lang *lang;
    bool base64, redirect;
    sbx_create_opts *create;
    sbx_exec_opts *exec;
    char **argv;               /* command_line_arguments split (owned) */
    char *callback_url;        /* or NULL (owned) */
    srv_j0_sub *sub;           /* what is kept (owned) */
    unsigned status;           /* after a refusal: its HTTP status ... */
    json_t *err;               /* ... and Judge0's body for it (owned) */
} srv_j0_req;

/* Free @q (NULL: nothing) and what it holds. */
void srv_j0_req_free(srv_j0_req *q);
/* Check @body (a submission's attributes) and make it @q's run, with a
 * new token; base64 per q->base64.  0, or -1 with q->status and q->err
 * (Judge0's 422 {field: [message]}, or 500 {error}). */
int srv_j0_req_parse(srv_j0_req *q, json_t *body);
/* Run @q (stopped by @cancel) and fill q->sub with what came of it.  0,
 * or -1 with q->status and q->err when the run could not be made (the
 * library refused it) or was cancelled (499). */
int srv_j0_req_run(srv_j0_req *q, sbx_cancel *cancel);

/* ---- the background (compat-judge0-queue.c) --------------------------------- */

/* (srv_j0_queue_start and _stop: server.h) */
/* Queue the @n submissions @qs (transfer full each, on success only):
 * each is kept as "In Queue" for GET, then runs.  0; -1 when the queue
 * has no room for all of them (Judge0's 503 "queue is full"), -2 when
 * the server stops (or never started the queue), -3 on ENOMEM. */
int srv_j0_queue_push(srv *s, srv_j0_req **qs, size_t n);

/* A finished submission's callback, if @q has a callback_url: the body
 * to PUT (new, Judge0's: the default fields in base64), made before
 * @q->sub is kept; NULL when there is none to send (or ENOMEM, logged). */
char *srv_j0_callback_body(const srv_j0_req *q);
/* Send @body (transfer full; NULL: nothing) to @q's callback_url from
 * the callback threads: never blocks on the receiver (it waits for the
 * callback's file to be written).  Refused, with a log line, when
 * [server] judge0_callbacks_kept are kept; dropped, with a log line,
 * when it could not be kept and the queue is full or the server stops. */
void srv_j0_callback(srv *s, const srv_j0_req *q, const char *token, char *body);

/* ---- callbacks (compat-judge0-callback.c) ----------------------------------- */

struct srv_j0cb;
/* Make the callbacks' sender (*out; NULL when built without libcurl),
 * durable in srv_j0_cb_dir(@s) when that can be used, at most [server]
 * judge0_callbacks_pending queued in memory and judge0_callbacks_kept
 * kept there; and take the callbacks kept there by the server's last
 * run, oldest first: 0, or -1 (ENOMEM, libcurl's initialisation). */
int srv_j0_cb_start(const srv *s, struct srv_j0cb **out);
/* Queue a PUT of @body (transfer full) to @url for the submission
 * @token; when the queue is full one that is kept waits in its file
 * for a free place.  0; -1 when it could not be kept and the queue is
 * full, -4 when judge0_callbacks_kept are kept (refused), -2 when
 * stopping, -3 on ENOMEM or when no thread could be made.  Each is
 * logged but ENOMEM. */
int srv_j0_cb_push(struct srv_j0cb *C, const char *token, const char *url, char *body);
/* Stop (@C may be NULL): what is pending and durable is left to the
 * next start at once (a PUT under way is abandoned), what is not is
 * still sent until @deadline_ns (srv_now_ns), then dropped; then free
 * it all. */
void srv_j0_cb_stop(struct srv_j0cb *C, uint64_t deadline_ns);
/* Whether @url is one a callback can go to (http or https, a host); if
 * not, Judge0's message for the 422 in @why. */
bool srv_j0_cb_url_ok(const char *url, const char **why);
/* What /metrics shows of the callbacks (all 0 for NULL). */
void srv_j0_cb_counts_get(struct srv_j0cb *C, srv_j0_cb_counts *out);

/* ---- callbacks' files (compat-judge0-cbfile.c) ----------------------------- */

/* A callback: where it goes, what, and its tries. */
typedef struct srv_j0_cbrec {
    char token[SRV_J0_TOKEN_LEN + 1];
    char *url;                 /* owned */
    char *body;                /* owned */
    double created;            /* job_now() when it was made */
    double next;               /* job_now() of its next try (0: at once) */
    unsigned tries;            /* tries made that got no answer */
} srv_j0_cbrec;

/* [server] state_dir/judge0-callbacks, made (new), or NULL (logged) when
 * it cannot be used: callbacks are then not durable. */
char *srv_j0_cb_dir(const srv *s);
/* Keep (or keep again, after a try) the callback @r in @dir, written
 * atomically and synced: 0, or -1 with errno. */
int srv_j0_cb_save(const char *dir, const srv_j0_cbrec *r);
/* Read back the callback @token from @dir into @r (url and body new):
 * 0; -1 when the file is not a callback's (why in @why); -2 when it is
 * not there any more. */
int srv_j0_cb_read(const char *dir, const char *token, srv_j0_cbrec *r, char *why,
                   size_t why_size);
/* Remove the callback of @token from @dir (delivered or given up). */
void srv_j0_cb_forget(const char *dir, const char *token);
/* What srv_j0_cb_load gives each callback's file it found: 0 when it
 * took it. */
typedef int (*srv_j0_cb_each)(void *ud, const char *token);
/* Give @each the tokens of the callbacks' files in @dir, oldest file
 * first, at most @max (the others are left for a later start, logged);
 * a file whose name is not a callback's is logged and left as it is.
 * How many it took. */
size_t srv_j0_cb_load(const char *dir, size_t max, srv_j0_cb_each each, void *ud);

/* Judge0's CALLBACKS_MAX_TRIES and CALLBACKS_TIMEOUT (documented in
 * polysandboxd(8)), the pause before a retry (times the tries made), and
 * the bounds of the sending. */
#define SRV_J0_CB_TRIES 3
#define SRV_J0_CB_TIMEOUT_MS 5000
#define SRV_J0_CB_PAUSE_MS 500
#define SRV_J0_CB_THREADS 2
/* Defaults of [server] judge0_callbacks_pending and judge0_callbacks_kept. */
#define SRV_J0_CB_PENDING 1024
#define SRV_J0_CB_KEPT 10000
#define SRV_J0_CB_URL_MAX 2048

/* The store's bounds (documented in polysandboxd(8)). */
#define SRV_J0_KEEP_MAX 1024
#define SRV_J0_KEEP_BYTES ((size_t)64 << 20)
/* The most submissions of a batch (Judge0's MAX_SUBMISSION_BATCH_SIZE). */
#define SRV_J0_BATCH_MAX 20

#endif
