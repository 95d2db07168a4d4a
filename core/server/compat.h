/* core/server/compat.h - what the compatibility route families share
 *
 * The SandboxFusion, Piston and first-sketch routes speak other servers'
 * shapes over the same library calls as /v1.  Two of those shapes report
 * a compiled language's compile and run apart, while the library's
 * result folds both into one; srv_capture_run() runs code once and splits
 * the output back into its phases from the order the output callback saw
 * it (every byte of a compile step comes before the program's first).
 */
#ifndef POLYSANDBOX_SERVER_COMPAT_H
#define POLYSANDBOX_SERVER_COMPAT_H

#include "server.h"

/* A growing byte buffer. */
typedef struct srv_bytes {
    char *data;
    size_t len, cap;
} srv_bytes;

int srv_bytes_add(srv_bytes *b, const void *data, size_t len);
void srv_bytes_free(srv_bytes *b);

/* One phase's output: views into the capture's buffers (not NUL-ended). */
typedef struct srv_phase {
    bool ran;
    const char *out, *err, *mix;   /* mix: both streams in arrival order */
    size_t out_len, err_len, mix_len;
    uint64_t ns;                   /* how long it ran */
} srv_phase;

typedef struct srv_capture {
    int rc;                   /* SBX_OK, or the library's refusal (no result) */
    sbx_result *res;          /* (owned) the run's result when rc is SBX_OK */
    bool compiled;            /* a compile step ran */
    sbx_run_status compile_status; /* its own status (ok when it succeeded) */
    srv_phase compile, run;
    json_t *files;            /* fetched files: {path: base64} (owned), or NULL */
    srv_bytes out, err, mix;  /* what the output callback saw */
} srv_capture;

/* Run @x (code or a command) in a sandbox made with @c, as sbx_run does;
 * with @fetch (n_fetch relative paths) the sandbox is kept until those
 * files are read (a missing one is left out).  The run stops when the
 * client leaves (r->cancel).  Counts in the run metrics under @tmpl.
 * Fills @cap (free it with srv_capture_free) and returns cap->rc. */
int srv_capture_run(srv_req *r, const sbx_create_opts *c, sbx_exec_opts *x,
                    const char *tmpl, const char *const *fetch, size_t n_fetch,
                    srv_capture *cap);
/* The same with no request: the run stops when @cancel fires (a run in
 * the background, which no client's leaving stops). */
int srv_capture_run_in(srv *s, sbx_cancel *cancel, const sbx_create_opts *c,
                       sbx_exec_opts *x, const char *tmpl, const char *const *fetch,
                       size_t n_fetch, srv_capture *cap);
void srv_capture_free(srv_capture *cap);

/* Parse @r's body as a JSON object without replying: NULL with @why
 * (a message naming where) when it is not one; {} for an empty body. */
json_t *srv_compat_body(srv_req *r, char *why, size_t why_size);

/* Reply @status with {@key: the message} (Piston's and Judge0's error
 * shapes), the metrics' error code told by the status. */
void srv_compat_message(srv_req *r, unsigned status, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The signal's name ("SIGKILL"), or NULL. */
const char *srv_signal_name(int sig);
/* The signal named @name ("SIGTERM"), or 0 (also for NULL). */
int srv_signal_number(const char *name);

#endif /* POLYSANDBOX_SERVER_COMPAT_H */
