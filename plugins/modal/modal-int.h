/* plugins/modal/modal-int.h - the Modal provider's internal interface
 *
 * Two gRPC services: the control plane (ModalClient, at server_url, with
 * the token id and secret and a short-lived auth token) makes, lists,
 * tags and terminates sandboxes; each sandbox's task has a command router
 * (TaskCommandRouter, at an address the control plane hands out with a
 * bearer JWT of its own) that runs commands.  Where a task has no router,
 * commands go through the control plane's ContainerExec instead.  See
 * README.md and ../shared/reference/wire-apis.md section 5.
 */
#ifndef MODAL_INT_H
#define MODAL_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <polysandbox/provider.h>

#include "api.pb-c.h"
#include "base64.h"
#include "http.h"
#include "modal-grpc.h"
#include "randhex.h"
#include "retry-hints.h"
#include "task_command_router.pb-c.h"

#define MODAL_DEFAULT_SERVER "https://api.modal.com:443"
#define MODAL_DEFAULT_APP "polysandbox"
#define MODAL_DEFAULT_IMAGE "python:3.12-slim"
#define MODAL_DEFAULT_WORKDIR "/workspace"
#define MODAL_DEFAULT_TTL "300s"
#define MODAL_DEFAULT_REQUEST_TIMEOUT "60s"
/* How long past an exec's own time limit the provider waits for the
 * service to end it (it kills the command at the limit itself). */
#define MODAL_EXEC_GRACE_MS 15000L
/* The environment variable each exec carries so that what it leaves
 * behind after a kill can be found. */
#define MODAL_EXEC_MARKER "POLYSANDBOX_EXEC_ID"
#define MODAL_IMAGE_CACHE 16

struct modal_image {
    char *ref;
    char *id;
};

struct modal_prov {
    const sbx_host_v1 *host;
    sbx_host_handle *h;
    ph_client *api;
    char *server_url;
    char *environment;       /* "" : the workspace's default */
    char *app_name;
    char *image;             /* default image reference */
    char *workdir;           /* absolute, no trailing slash */
    char *ca_file;
    uint64_t ttl_s;
    long request_timeout_ms;
    long connect_timeout_ms;
    unsigned milli_cpu;      /* 0: the service's default */
    bool allow_internet;
    bool files_in_exec;      /* small files may ride in the command's exec */
    bool plain_router;       /* the control plane is plain http: so is the router */
    int exec_path;           /* MODAL_EXEC_AUTO, _ROUTER, _LEGACY */

    pthread_mutex_t lock;    /* guards what follows */
    char *auth_token;        /* x-modal-auth-token, wiped on free */
    time_t token_exp, token_refresh;
    char *app_id;
    char *builder_version;
    struct modal_image images[MODAL_IMAGE_CACHE];
    size_t n_images;
};

enum { MODAL_EXEC_AUTO, MODAL_EXEC_ROUTER, MODAL_EXEC_LEGACY };

struct modal_sb {
    char id[SBX_ID_MAX];
    char *task_id;
    bool legacy;             /* no command router for this task */
    /* An exec reads stdout and stderr on two threads, either of which may
     * renew the router's token: the lock guards what follows. */
    pthread_mutex_t lock;
    ph_client *router;       /* the task's command router, once reached */
    ph_client *old_router;   /* the one before the router moved, kept until free */
    char *router_url;
    char *jwt;               /* its bearer token, wiped on free */
    time_t jwt_exp;
    pc_hints hints;          /* the retry hints of the exec running on it */
};

/* A new sandbox handle for @id (its lock made), or NULL. */
struct modal_sb *modal_sb_new(const char *id);

/* ---- modal.c ---- */
void modal_sb_free(struct modal_sb *sb);
/* The backend's retry delay (@ms < 0: none): to the core
 * (host->retry_after) and, for a call on @sb (or NULL), into the hints of
 * the exec running on it; and "this exec on @sb never started"
 * (retry-hints.h). */
void modal_retry_after(struct modal_prov *p, struct modal_sb *sb, long ms);
void modal_not_started(struct modal_sb *sb);

/* ---- modal-api.c: the control plane ---- */
/* One unary ModalClient call ("SandboxCreate"), authenticated.  Errors are
 * set on the host with @what as context, except a gRPC status equal to
 * @quiet (-1: none; MODAL_SILENT: any), which is only returned.  *reply
 * may be NULL. */
#define MODAL_SILENT (-3)
int modal_api(struct modal_prov *p, const char *what, const char *method,
              const ProtobufCMessage *req, const ProtobufCMessageDescriptor *reply_desc,
              ProtobufCMessage **reply, long timeout_ms, int quiet);
/* modal_api, and *st gets what the server said (code -2: an error of
 * ours, set already); a request made for sandbox @sb (or NULL) gives its
 * Retry-After to the exec running there too (modal_retry_after). */
int modal_api_st(struct modal_prov *p, struct modal_sb *sb, const char *what, const char *method,
                 const ProtobufCMessage *req, const ProtobufCMessageDescriptor *reply_desc,
                 ProtobufCMessage **reply, long timeout_ms, int quiet, mg_status *st);
/* A server-streaming ModalClient call. */
int modal_api_stream(struct modal_prov *p, const char *what, const char *method,
                     const ProtobufCMessage *req, long timeout_ms,
                     int (*on_message)(void *ud, const uint8_t *msg, size_t len), void *ud,
                     mg_status *st);
/* The authenticated metadata lines (NULL-terminated, at most 7) into
 * @lines, for a call other than AuthTokenGet when @with_token; free with
 * modal_headers_free. */
int modal_headers(struct modal_prov *p, const char *what, bool with_token, char *lines[8]);
void modal_headers_free(char *lines[8]);
/* Sets the host's error for a failed call (@rc from mg_call_do); its
 * Retry-After goes to the host and, for a call on @sb (or NULL), into the
 * hints of the exec running on it. */
int modal_call_error(struct modal_prov *p, struct modal_sb *sb, const char *what, int rc,
                     const mg_status *st, const char *err);
int modal_app_id(struct modal_prov *p, char **out);
int modal_image_id(struct modal_prov *p, const char *ref, char **out);
int modal_env_secret(struct modal_prov *p, const sbx_kv_v1 *env, size_t n, char **out);
/* The sandbox's task, waiting up to @wait_ms for it to be scheduled;
 * SBX_E_NOT_FOUND when the sandbox has finished. */
int modal_task_id(struct modal_prov *p, const char *sandbox_id, long wait_ms, char **out);
/* SandboxTerminate.  With @report, errors but NOT_FOUND are set on the
 * host; without, none is (a clean-up after another error). */
int modal_terminate(struct modal_prov *p, const char *sandbox_id, bool report);
int modal_list(struct modal_prov *p, const sbx_kv_v1 *filter, size_t n_filter,
               sbx_list_cb_v1 cb, void *ud);
int modal_health(struct modal_prov *p);

/* ---- modal-router.c: the command router ---- */
/* Reaches the task's router (asking the control plane for its address and
 * JWT); sets sb->legacy when the task has none. */
int modal_router_open(struct modal_prov *p, struct modal_sb *sb);
/* One unary TaskCommandRouter call, renewing the JWT once when it is
 * refused as expired.  As modal_api otherwise. */
int modal_router(struct modal_prov *p, struct modal_sb *sb, const char *what, const char *method,
                 const ProtobufCMessage *req, const ProtobufCMessageDescriptor *reply_desc,
                 ProtobufCMessage **reply, long timeout_ms, mg_status *st, char err[PH_ERR_MAX]);
int modal_router_stream(struct modal_prov *p, struct modal_sb *sb, const char *method,
                        const ProtobufCMessage *req, long timeout_ms,
                        int (*on_message)(void *ud, const uint8_t *msg, size_t len), void *ud,
                        mg_status *st, char err[PH_ERR_MAX]);

/* ---- modal-exec.c ---- */
int modal_exec(struct modal_prov *p, struct modal_sb *sb, const sbx_exec_spec_v1 *spec,
               const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out);
/* Runs argv in the work directory with @stdin_data, collecting at most
 * @out_max bytes of stdout into *out (malloc'd; may be NULL) and the first
 * bytes of stderr into @errbuf; *exit_code gets the exit code (-1 for a
 * signal).  For file transfers and clean-ups. */
int modal_run(struct modal_prov *p, struct modal_sb *sb, const char *const *argv,
              const void *stdin_data, size_t stdin_len, size_t out_max, long timeout_ms,
              char **out, size_t *out_len, char *errbuf, size_t errcap, int *exit_code);

/* ---- modal-files.c ---- */
int modal_upload(struct modal_prov *p, struct modal_sb *sb, const char *path, const void *data,
                 size_t len, uint32_t mode);
/* Whether files[0..n) can all ride in the exec of a command to run in
 * @cwd (relative to the work directory, or NULL). */
bool modal_files_fit(const sbx_file_v1 *files, size_t n, const char *cwd);
/* The argv of one exec, started in the work directory, that writes the
 * files there, then runs @argv in @cwd; one allocation (free() it),
 * pointing into @files, @argv and the strings given; NULL when out of
 * memory.  A failure to write puts "@nonce CODE INDEX" first on stderr and
 * runs nothing. */
char **modal_prelude_argv(const sbx_file_v1 *files, size_t n, const char *const *argv,
                          const char *nonce, const char *cwd);
/* Sets the error for a prelude's @report (what followed "@nonce "). */
int modal_prelude_failed(struct modal_prov *p, struct modal_sb *sb, const sbx_file_v1 *files,
                         size_t n, const char *report);
int modal_download(struct modal_prov *p, struct modal_sb *sb, const char *path, size_t max,
                   void **data, size_t *len);

/* ---- helpers (modal.c) ---- */
uint64_t modal_now_ns(void);
/* Sleeps @ms between two tries of a call.  The fuzz harness builds the
 * provider with MODAL_PAUSES 0: its answers come at once, and a wait
 * would only slow the fuzzer down. */
#ifndef MODAL_PAUSES
#define MODAL_PAUSES 1
#endif
void modal_pause_ms(long ms);
/* The exp claim of a JWT (seconds since the epoch), or 0. */
time_t modal_jwt_exp(const char *jwt);
/* "line: value" lines wiped and freed. */
void modal_wipe_free(char *s);

#endif
