/* plugins/kubernetes/kube-int.h - the kubernetes provider's internal interface
 *
 * A sandbox is a Pod in the configured namespace (kube-pod.c), made ready
 * through a watch (kube-watch.c); commands run over the pods/exec WebSocket
 * (kube-ws.c, libwebsockets) inside a POSIX sh wrapper that sets the
 * environment, directory and limits, keeps a watchdog and reports the
 * command's fate in a trailer (kube-exec.c); files go through exec and tar
 * (kube-files.c).  The API server is reached as kubectl reaches it: a
 * kubeconfig (kube-config.c, kube-yaml.c), the in-cluster service account,
 * or a server and token from the ini; credentials come from kube-auth.c.
 * See README.md and ../shared/reference/wire-apis.md section 6.
 */
#ifndef KUBE_INT_H
#define KUBE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <polysandbox/provider.h>

#include "base64.h"
#include "http.h"
#include "randhex.h"
#include "retry-hints.h"
#include "rfc3339.h"

#define KUBE_CONTAINER "sandbox"
#define KUBE_DEFAULT_IMAGE "debian:bookworm-slim"
#define KUBE_DEFAULT_WORKDIR "/workspace"
#define KUBE_DEFAULT_TTL "1h"
#define KUBE_DEFAULT_READY "120s"
#define KUBE_DEFAULT_REQUEST "30s"
#define KUBE_DEFAULT_NETPOL "polysandbox-deny-egress"
#define KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
/* Labels and annotations the provider puts on what it makes. */
#define KUBE_L_MANAGED "app.kubernetes.io/managed-by"
#define KUBE_L_MANAGED_V "polysandbox"
#define KUBE_L_NETWORK "polysandbox.io/network"
#define KUBE_L_OWNER "polysandbox.io/owner"
#define KUBE_L_TEMPLATE "polysandbox.io/template"
#define KUBE_L_EXPIRES "polysandbox.io/expires"
#define KUBE_L_PREFIX "label.polysandbox.io/"
#define KUBE_A_LABELS "polysandbox.io/labels"
#define KUBE_A_WORKDIR "polysandbox.io/workdir"
#define KUBE_A_LIMITS "polysandbox.io/limits"
/* Creation time in Unix nanoseconds: creationTimestamp has whole seconds
 * only, and get-or-create takes the oldest of several matches. */
#define KUBE_A_CREATED "polysandbox.io/created-ns"
/* The longest exec request line libwebsockets can send (its header space
 * is an unsigned short); longer commands go by a file (kube-exec.c). */
#define KUBE_MAX_REQUEST_LINE 65535
/* What a streaming callback returns to end a stream it has seen enough of
 * (larger than every sbx_status). */
#define KUBE_STOP 1000
#define KUBE_PERSIST_ATTEMPTS 8
/* The environment variable each exec's processes carry, so that what an
 * exec started can be found and killed (timeouts, output caps, drops). */
#define KUBE_EXEC_MARKER "POLYSANDBOX_EXEC"
/* sweep TOKEN SIG: kill -s SIG every process whose environment holds
 * MARKER=TOKEN; for KILL three passes, for what forks meanwhile.  A shell
 * function for the exec wrapper, the sweep and the signal execs, which
 * run without the marker themselves. */
#define KUBE_SWEEP_FN                                                                       \
    "sweep() { m=\"" KUBE_EXEC_MARKER "=$1\"; for q in 1 2 3; do z=0; "                     \
    "for e in /proc/[0-9]*/environ; do "                                                    \
    "if tr '\\000' '\\n' <\"$e\" 2>/dev/null | grep -qxF -- \"$m\"; then "                  \
    "v=${e#/proc/}; kill -s \"$2\" \"${v%/environ}\" 2>/dev/null && z=1; fi; done; "        \
    "[ \"$z\" = 0 ] || [ \"$2\" != KILL ] && break; done; }\n"

enum kube_auth_kind { KUBE_AUTH_NONE, KUBE_AUTH_TOKEN, KUBE_AUTH_TOKEN_FILE, KUBE_AUTH_SECRET,
                      KUBE_AUTH_EXEC };

/* An exec credential plugin (kubeconfig users[].user.exec). */
struct kube_execcred {
    char **argv;             /* command and args, NULL-terminated */
    char **env;              /* "NAME=value" added to ours, NULL-terminated */
    char *api_version;       /* client.authentication.k8s.io/v1 or v1beta1 */
    char *cluster_info;      /* KUBERNETES_EXEC_INFO's spec.cluster, JSON, or NULL */
    char *dir;               /* the kubeconfig's directory (relative commands) */
    pthread_mutex_t lock;
    char *token;             /* cached; wiped on change */
    uint64_t expires_ns;     /* wall clock; 0: no expiry given */
};

/* Where the API server is and how to prove who we are. */
struct kube_conn {
    char *server;            /* "https://host:port" (path prefix kept) */
    char *host;              /* host and port of the server, for the WebSocket */
    int port;
    bool tls;
    char *path_prefix;       /* "" or "/k8s" when the server URL has a path */
    char *ca_pem, *ca_file;  /* trust anchors; neither: the system's */
    char *cert_pem, *key_pem; /* client certificate and key (key wiped on free) */
    char *namespace;         /* from the context or the service account, or NULL */
    enum kube_auth_kind auth;
    char *token;             /* KUBE_AUTH_TOKEN (wiped on free) */
    char *token_file;        /* KUBE_AUTH_TOKEN_FILE: read for every request (rotation) */
    struct kube_execcred *exec;
    char *origin;            /* where this came from, for messages */
};

enum kube_mode { KUBE_MODE_PODS, KUBE_MODE_AGENT };

/* in_cluster: the indexes of its values in kubernetes.c's table. */
enum { KUBE_IC_AUTO = 0, KUBE_IC_FALSE = 4 };

/* The [settings] keys that say where the cluster is, for kube-config.c:
 * the core's strings (valid until fini), NULL when unset. */
struct kube_where {
    const char *kubeconfig, *context, *serviceaccount_dir, *server, *ca_file, *namespace;
    int in_cluster;          /* KUBE_IC_AUTO, 1-3 true, KUBE_IC_FALSE and up false */
    int have_token;          /* token (a credential) is set */
};

struct kube_prov {
    const sbx_host_v1 *host;
    sbx_host_handle *h;
    struct kube_conn conn;
    struct kube_where where;
    ph_client *api;
    void *ssl_ctx;           /* SSL_CTX of the exec WebSockets (OpenSSL), or NULL */
    char *namespace;
    char *image;
    char *workdir;           /* absolute, no trailing slash */
    char *runtime_class;     /* or NULL */
    char *service_account;   /* or NULL: none mounted */
    char *cpu;               /* CPU limit of a pod ("1") */
    char *cpu_request;       /* CPU request ("100m") */
    char *netpol;            /* the NetworkPolicy the provider owns */
    char *priority_class;    /* or NULL */
    long long run_as_user;   /* -1: the image's user (root allowed) */
    uint64_t ttl_s;          /* default time-to-live (and activeDeadlineSeconds) */
    uint64_t ready_ms;       /* longest wait for a pod to run */
    long request_ms;
    long connect_ms;
    bool allow_network;      /* may a sandbox ask for SBX_NET_HOST */
    bool manage_netpol;      /* make the NetworkPolicy when it is missing */
    int exec_protocol;       /* 0 auto (v5, else v4), 4 or 5 */
    enum kube_mode mode;
    unsigned warm_pool;      /* agent-sandbox: warm pool size per template */
    /* client-side rate limit (qps 0: none) */
    double qps;
    double burst;
    pthread_mutex_t rl_lock;
    double rl_tokens;
    uint64_t rl_last_ns;
    /* NetworkPolicy known to exist (made once per provider) */
    pthread_mutex_t np_lock;
    bool np_ready;
    /* counters for doctor and the benchmark (atomic adds) */
    uint64_t n_requests;
    /* agent-sandbox: templates known to exist */
    pthread_mutex_t agent_lock;
    char **agent_ready;      /* names of SandboxTemplate/WarmPool pairs made */
    size_t n_agent_ready;
};

struct kube_sb {
    char id[SBX_ID_MAX];     /* the pod's name (agent mode: the claim's) */
    char pod[SBX_ID_MAX];    /* the pod to exec into */
    char *workdir;
    uint64_t cpu_s;          /* per-exec limits from the create */
    uint64_t fsize_bytes;
    uint64_t nofile;
    bool claim;              /* agent-sandbox: a SandboxClaim */
    pc_hints hints;          /* the retry hints of the exec running on it */
};

/* ---- kubernetes.c ---- */
/* The API server's Retry-After (@ms < 0: none), to the core
 * (host->retry_after); an exec's own goes into its sandbox's hints
 * instead, with "this exec never started" (retry-hints.h). */
void kube_retry_after(struct kube_prov *p, long ms);
void kube_not_started(struct kube_sb *sb);
uint64_t kube_now_ns(void);       /* CLOCK_MONOTONIC */
uint64_t kube_wall_ns(void);      /* CLOCK_REALTIME */
void kube_sb_free(struct kube_sb *sb);

/* ---- kube-yaml.c: YAML (libyaml) into JSON (jansson) ---- */
/* The first document of @text as JSON: mappings become objects, sequences
 * arrays, scalars strings (null for ~ and empty plain scalars).  NULL and
 * a message naming the line in @err when it is not YAML. */
json_t *kube_yaml_load(const char *text, size_t len, char *err, size_t errlen);

/* ---- kube-config.c: where the cluster is ---- */
int kube_conn_load(struct kube_prov *p);
void kube_conn_free(struct kube_conn *c);

/* ---- kube-auth.c: credentials ---- */
/* "Authorization: Bearer ..." for the next request in *line (malloc'd,
 * the caller wipes and frees with kube_auth_drop), or NULL when the
 * connection authenticates with a client certificate alone. */
int kube_auth_header(struct kube_prov *p, char **line, size_t *len);
void kube_auth_drop(char *line, size_t len);
/* The server refused the credential (401): forget a cached exec token so
 * that the next request runs the plugin again.  True when there was one. */
bool kube_auth_invalidate(struct kube_prov *p);

/* ---- kube-api.c: REST ---- */
/* One JSON call.  *out (may be NULL) gets a 2xx answer's JSON.  Errors are
 * set on the host with @what as context and the API's Status message;
 * 403 "exceeded quota" is SBX_E_BUSY, 429 SBX_E_RATE_LIMITED with the
 * Retry-After given to the core, 401 SBX_E_AUTH (after one retry with a
 * fresh exec credential), 403 SBX_E_PERM, 404 SBX_E_NOT_FOUND, 409
 * SBX_E_EXISTS, 422/400 SBX_E_INVAL, 5xx SBX_E_SERVER.  *status (may be
 * NULL) gets the HTTP status.  @quiet: a status answered without setting
 * an error (e.g. 404 when absence is fine); -1 for none. */
int kube_api(struct kube_prov *p, const char *what, const char *method, const char *path,
             json_t *body, const char *content_type, long quiet, long *status, json_t **out);
/* The Retry-After of this thread's last error answer, in ms (-1: none). */
long kube_last_retry_after(void);
/* Transport failures, 5xx, 429 and timeouts: worth another try. */
bool kube_transient(int rc);
/* Sleeps before attempt @attempt + 1: exponential from 50 ms to 2 s with
 * jitter, at least @retry_after_ms (-1: none), at most 5 s. */
void kube_backoff(struct kube_prov *p, unsigned attempt, long retry_after_ms);
/* kube_api, with transient failures tried again (KUBE_PERSIST_ATTEMPTS in
 * all).  Only for what must not be left half done: deleting (a pod left
 * behind keeps running and counting against quotas) and reading a pod
 * the provider already made.  Everything else goes back to the core,
 * whose retries and circuit breaker decide. */
int kube_api_persist(struct kube_prov *p, const char *what, const char *method, const char *path,
                     json_t *body, long quiet, long *status, json_t **out);
/* DELETE @path (taken: freed here; NULL means out of memory) with no
 * grace and in the foreground, persisting; something already gone is
 * SBX_OK.  @what names it in messages. */
int kube_api_delete_now(struct kube_prov *p, const char *what, char *path);
/* The same for a streamed answer (a watch): @on_data gets the body's
 * bytes; returns what kube_api returns, or on_data's stop code. */
int kube_api_stream(struct kube_prov *p, const char *what, const char *path, long timeout_ms,
                    int (*on_data)(void *ud, const void *buf, size_t len), void *ud, long *status);
/* An error answer's Status into an sbx_status and a message on the host. */
int kube_status_error(struct kube_prov *p, const char *what, long status, const char *body,
                      size_t len, long retry_after_ms);
/* Waits for the client-side rate limit (qps/burst). */
void kube_rate_wait(struct kube_prov *p);
/* @s percent-encoded into a malloc'd string (NULL: out of memory). */
char *kube_escape(const char *s);

/* ---- kube-pod.c: pods ---- */
int kube_pod_create(struct kube_prov *p, const sbx_create_spec_v1 *spec, struct kube_sb **out);
int kube_pod_delete(struct kube_prov *p, const char *name);
/* A handle for an existing pod (attach). */
int kube_pod_attach(struct kube_prov *p, const char *name, struct kube_sb **out);
/* The pod's state in words when it cannot run commands (evicted, failed,
 * deleted, gone), or NULL when it looks runnable; *code the error. */
char *kube_pod_trouble(struct kube_prov *p, const char *name, int *code);
int kube_pod_list(struct kube_prov *p, const sbx_kv_v1 *filter, size_t n_filter,
                  sbx_list_cb_v1 cb, void *ud);
/* The pod spec of a sandbox (the pod's, and the SandboxTemplate's), or
 * NULL when the environment cannot be written in one. */
json_t *kube_pod_spec(struct kube_prov *p, const sbx_create_spec_v1 *spec, const char *image,
                      uint64_t ttl_s);
/* The labels (encoded) and annotations (exact labels, work directory,
 * limits, creation time) of a sandbox's object. */
int kube_sandbox_meta(struct kube_prov *p, const sbx_create_spec_v1 *spec, uint64_t ttl_s,
                      json_t **labels_out, json_t **ann_out);
/* One listed object to @cb when its exact labels include @filter (those
 * being deleted are left out). */
int kube_relay_object(struct kube_prov *p, json_t *obj, const sbx_kv_v1 *filter,
                      size_t n_filter, sbx_list_cb_v1 cb, void *ud);
/* Pages through @collection with the label selector of @filter. */
int kube_list_objects(struct kube_prov *p, const char *collection, const char *what,
                      const sbx_kv_v1 *filter, size_t n_filter, sbx_list_cb_v1 cb, void *ud);
/* The provider's NetworkPolicy, made when missing. */
int kube_netpol_ensure(struct kube_prov *p);

/* ---- kube-labels.c: our labels in Kubernetes' label syntax ---- */
bool kube_label_name_ok(const char *s);     /* a label key's name part */
bool kube_label_value_ok(const char *s);
/* @s as a valid label value: itself when valid, else "x-" and 40 hex
 * digits of its SHA-256 (malloc'd). */
char *kube_label_encode(const char *s);
/* A labelSelector (not escaped) for the pairs of @filter, after the
 * provider's own "managed-by" requirement (malloc'd). */
char *kube_label_selector(const sbx_kv_v1 *filter, size_t n_filter);
/* Adds the labels of @kv (encoded) to @labels and their exact values as
 * JSON to the annotation object @ann. */
int kube_labels_put(json_t *labels, json_t *ann, const sbx_kv_v1 *kv, size_t n);

/* ---- kube-watch.c: a pod becomes ready ---- */
/* Watches pod @name from resourceVersion @rv until it runs (SBX_OK), fails
 * (the reason on the host), is deleted, or @deadline_ns (monotonic)
 * passes (SBX_E_TIMEOUT; SBX_E_BUSY when unschedulable).  Resumes after
 * dropped streams and 410 Gone (from a fresh GET). */
int kube_watch_ready(struct kube_prov *p, const char *name, const char *rv,
                     uint64_t deadline_ns);
/* 1 ready, 0 pending, or minus an sbx_status (set on the host) when the
 * pod cannot become ready.  *unsched gets the scheduler's words. */
int kube_pod_readiness(struct kube_prov *p, json_t *pod, char *unsched, size_t cap);
/* The same judgement of any object: *why gets words on what it waits for
 * (then a timeout is SBX_E_BUSY, not SBX_E_TIMEOUT). */
typedef int (*kube_judge)(struct kube_prov *p, json_t *obj, char *why, size_t cap);
/* kube_watch_ready for the object @name of @collection (a path without
 * the name), judged by @judge; @noun names it in messages.  With @ready,
 * *ready gets the object as judged ready (the caller's reference). */
int kube_watch_until(struct kube_prov *p, const char *collection, const char *noun,
                     const char *name, const char *rv, uint64_t deadline_ns, kube_judge judge,
                     json_t **ready);

/* ---- kube-ws.c: one exec WebSocket ---- */
struct kube_ws_req {
    const char *path;              /* from kube_exec_path */
    const unsigned char *stdin_data;
    size_t stdin_len;
    bool close_stdin;              /* send CLOSE(0) after stdin (v5 only) */
    /* -1, or a descriptor (not ours) whose bytes follow stdin_data until
     * its end of file, read only when poll() says so and only once what
     * was read before went out; then CLOSE(0).  Needs v5: on another
     * protocol the socket is closed before anything is sent. */
    int stdin_fd;
    int version;                   /* 0: v5 with v4 offered too; 4 or 5: only it */
    uint64_t deadline_ns;          /* monotonic; 0: none */
    int cancel_fd;                 /* -1, or readable once the caller cancels */
    /* Each message's payload, without its channel byte, as it comes (a
     * long message in several pieces, each with the message's channel).
     * Return 0 to go on, non-zero to close the socket. */
    int (*on_data)(void *ud, int channel, const unsigned char *buf, size_t len);
    void *ud;
};
struct kube_ws_res {
    int version;                   /* 5, 4 or 1 once open; 0 never opened */
    long http_status;              /* the answer to a refused upgrade */
    long retry_after_ms;
    bool opened;
    bool closed;                   /* the server closed with a close frame */
    int close_code;
    bool dropped;                  /* the connection ended without one */
    bool timed_out;
    bool stopped;                  /* on_data asked to stop */
    bool cancelled;                /* cancel_fd became readable */
    bool no_stdin_close;           /* stdin_fd set, the server chose v4 (or v1) */
};
/* Runs one exec WebSocket to its end.  Returns SBX_OK when it opened and
 * ended (look at res), or the error of a connection that never opened
 * (HTTP status in res->http_status; message on the host). */
int kube_ws_run(struct kube_prov *p, const struct kube_ws_req *rq, struct kube_ws_res *res);
/* True when @cancel_fd (-1: none) is readable: the caller cancelled. */
bool kube_ws_cancelled(int cancel_fd);
int kube_ws_tls_init(struct kube_prov *p);
void kube_ws_tls_free(struct kube_prov *p);

/* ---- kube-exec.c ---- */
int kube_exec(struct kube_prov *p, struct kube_sb *sb, const sbx_exec_spec_v1 *spec,
              const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out);
/* Runs a helper script (files) to its end: @body with the positional
 * parameters @args (NULL-terminated), @in after it on stdin ($L bytes);
 * stdout into *out (up to @max bytes, malloc'd; @out may be NULL), its
 * stderr's start into @errtext, the exit code in *code. */
int kube_run_helper(struct kube_prov *p, struct kube_sb *sb, const char *what, const char *body,
                    const char *const *args, const void *in, size_t in_len, size_t max,
                    unsigned char **out, size_t *out_len, int *code, char *errtext,
                    size_t errcap);
/* Kills every process of the sandbox carrying the marker of exec @token. */
void kube_sweep(struct kube_prov *p, struct kube_sb *sb, const char *token);
/* Runs the script @body with the positional parameters @args (NULL-
 * terminated) and no stdin, its output dropped, until @deadline_ns or
 * until @cancel_fd (-1: none) is readable: 0 when it exited 0, else -1
 * (an error may be set). */
int kube_run_quiet(struct kube_prov *p, struct kube_sb *sb, const char *body,
                   const char *const *args, uint64_t deadline_ns, int cancel_fd);

/* ---- kube-signal.c: signal_fd's signals, each by an exec of kill ---- */
struct kube_signals {
    struct kube_prov *p;
    struct kube_sb *sb;
    const char *token;          /* the exec's (borrowed) */
    int fd;                     /* the spec's signal_fd, -1: none */
    uint64_t deadline_ns;
    int stop[2];                /* readable once the exec ended */
    int go[2];                  /* readable once the command runs */
    bool running, went;
    pthread_t thread;
};
/* Starts delivering what @fd (-1: nothing to do) carries to the command
 * of exec @token, from the kube_signals_go on (a signal before it is held
 * in @fd); SBX_OK or an error set (nothing started). */
int kube_signals_start(struct kube_signals *s, struct kube_prov *p, struct kube_sb *sb,
                       const char *token, int fd, uint64_t deadline_ns);
/* The command runs (the wrapper's record g): its signals may go. */
void kube_signals_go(struct kube_signals *s);
/* Stops it (a signal exec under way is cut short) and waits for it. */
void kube_signals_stop(struct kube_signals *s);

/* ---- kube-program.c: the bootstrap and the program on stdin ---- */
/* The exec path of @pod: the bootstrap as its command, stdin on. */
char *kube_exec_path(struct kube_prov *p, const char *pod);
/* The exec's stdin: the program (L=@l, `set --` @args, @body) framed for
 * the bootstrap, then the @n pieces of payload.  *out is malloc'd.
 * @l KUBE_L_STREAM: L=s, the command takes the rest of the exec's stdin
 * to its end (streamed stdin, v5). */
#define KUBE_L_STREAM ((size_t)-1)
struct kube_piece {
    const void *data;
    size_t len;
};
int kube_program(const char *body, const char *const *args, size_t l,
                 const struct kube_piece *pieces, size_t n, unsigned char **out,
                 size_t *out_len);

/* ---- kube-files.c ---- */
int kube_upload(struct kube_prov *p, struct kube_sb *sb, const char *path, const void *data,
                size_t len, uint32_t mode);
int kube_download(struct kube_prov *p, struct kube_sb *sb, const char *path, size_t max,
                  void **data, size_t *len);
/* A relative path without "..", empty or "." parts or control characters. */
int kube_path_check(struct kube_prov *p, const char *path);
/* The shell function `put W DIR NAME MODE LEN` that makes a file from the
 * next LEN bytes of stdin (exit 3: a path refused, 2: tar failed, ...). */
extern const char kube_put_fn[];
/* What `put` needs for a file: its checked path split into *dir and *base
 * (malloc'd), its mode in octal, and its one-entry tar (malloc'd). */
int kube_file_payload(struct kube_prov *p, const char *path, const void *data, size_t len,
                      uint32_t mode, char **dir, char **base, char mode_text[16],
                      unsigned char **tar, size_t *tar_len);
/* The error of a `put` or download script that exited with @code. */
int kube_file_error(struct kube_prov *p, struct kube_sb *sb, const char *op, const char *path,
                    int code, const char *errtext);

/* ---- kube-agent.c: agent-sandbox mode ---- */
int kube_agent_create(struct kube_prov *p, const sbx_create_spec_v1 *spec, struct kube_sb **out);
int kube_agent_destroy(struct kube_prov *p, struct kube_sb *sb);
/* Deletes the claim @name (foreground; gone already is fine). */
int kube_agent_delete_name(struct kube_prov *p, const char *name);
int kube_agent_attach(struct kube_prov *p, const char *name, struct kube_sb **out);
int kube_agent_list(struct kube_prov *p, const sbx_kv_v1 *filter, size_t n_filter,
                    sbx_list_cb_v1 cb, void *ud);
void kube_agent_free(struct kube_prov *p);

#endif
