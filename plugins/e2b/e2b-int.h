/* plugins/e2b/e2b-int.h - the E2B provider's internal interface
 *
 * Two services: the control plane (REST, X-API-KEY) makes, lists and kills
 * sandboxes; envd, the daemon in each sandbox (X-Access-Token), runs
 * processes over Connect RPC (JSON) and moves files over REST.  See
 * README.md and doc ../shared/reference/wire-apis.md section 3.
 */
#ifndef E2B_INT_H
#define E2B_INT_H

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

#define E2B_ENVD_PORT 49983
#define E2B_DEFAULT_DOMAIN "e2b.app"
#define E2B_DEFAULT_TEMPLATE "base"
#define E2B_DEFAULT_USER "user"
#define E2B_DEFAULT_WORKDIR "/home/user"
#define E2B_DEFAULT_TTL "300s"
#define E2B_DEFAULT_KEEPALIVE "50s"
#define E2B_DEFAULT_REQUEST_TIMEOUT "60s"
/* How long past an exec's own time limit the provider waits for envd to
 * end the stream (it kills the process at the limit itself). */
#define E2B_EXEC_GRACE_MS 15000L
/* The environment variable each exec carries so that what it leaves
 * behind after a kill can be found (see e2b_exec_cleanup). */
#define E2B_EXEC_MARKER "POLYSANDBOX_EXEC_ID"

struct e2b_prov {
    const sbx_host_v1 *host;
    sbx_host_handle *h;
    ph_client *api;          /* the control plane */
    ph_client *envd;         /* envd of every sandbox reached at one address
                              * (envd_url, or sandbox.<domain>), or NULL */
    char *api_url;
    char *domain;
    char *envd_url;          /* override of the envd address, or NULL */
    char *ca_file;
    char *template_id;
    char *user;
    char *workdir;           /* absolute, no trailing slash */
    char *auth_basic;        /* "Authorization: Basic ..." for the user */
    const char *templates;   /* "lang:id, ..." (the core's, valid until fini), or NULL */
    uint64_t ttl_s;          /* sandbox timeout when the request gives none */
    unsigned keepalive_s;
    long request_timeout_ms;
    long connect_timeout_ms;
    bool allow_internet;     /* may a sandbox ask for SBX_NET_HOST */
};

#define E2B_SB_HEADERS 5
struct e2b_sb {
    char id[SBX_ID_MAX];
    ph_client *envd;         /* the provider's shared client, or own_envd */
    ph_client *own_envd;     /* a client of this sandbox's own host, or NULL */
    /* "Name: value" lines of every envd request (routing, access token,
     * user); the token's line is wiped on free. */
    char *headers[E2B_SB_HEADERS];
    size_t n_headers;
    bool octet_upload;       /* envd >= 0.5.7 takes raw upload bodies */
    pc_hints hints;          /* the retry hints of the exec running on it */
};

/* ---- e2b.c ---- */
void e2b_sb_free(struct e2b_sb *sb);
/* How long the backend asked us to wait before trying again (@ms < 0: it
 * did not say): to the core (host->retry_after) and, for a request on
 * @sb (or NULL), into the hints of the exec running on it; and that a
 * failing exec on @sb never started its command (retry-hints.h). */
void e2b_retry_after(struct e2b_prov *p, struct e2b_sb *sb, long ms);
void e2b_not_started(struct e2b_sb *sb);

/* ---- e2b-api.c: the control plane ---- */
/* One JSON call with the API key.  *out (may be NULL) gets the parsed
 * answer of a 2xx; errors are set on the host with @what as context. */
int e2b_api(struct e2b_prov *p, const char *what, const char *method, const char *path,
            json_t *body, json_t **out);
/* A sandbox object (create, get, connect) into a handle. */
int e2b_sb_from_json(struct e2b_prov *p, json_t *j, const char *want_id, struct e2b_sb **out);
int e2b_api_list(struct e2b_prov *p, const sbx_kv_v1 *filter, size_t n_filter,
                 sbx_list_cb_v1 cb, void *ud);
/* Appends @s percent-encoded (RFC 3986 unreserved kept) to @buf. */
int e2b_pct_append(char **buf, size_t *len, size_t *cap, const char *s);

/* ---- e2b-envd.c: Connect RPC ---- */
/* The shared envd client of init, when one address serves every sandbox. */
int e2b_envd_shared(struct e2b_prov *p);
int e2b_envd_client(struct e2b_prov *p, struct e2b_sb *sb, const char *token,
                    const char *domain, const char *version);
void e2b_envd_free(struct e2b_sb *sb);
/* The sandbox's header lines followed by @extra (NULL-terminated, at most
 * 4) into @out, NULL-terminated. */
void e2b_envd_headers(const struct e2b_sb *sb, const char *const *extra,
                      const char *out[E2B_SB_HEADERS + 5]);
/* A unary RPC ("/process.Process/SendSignal"); errors are set on the host
 * except the status @quiet (-1: none at all).  *out may be NULL. */
int e2b_rpc(struct e2b_prov *p, struct e2b_sb *sb, const char *method, json_t *req,
            long timeout_ms, int quiet, json_t **out);
/* Maps a Connect error code ("not_found") to an sbx_status. */
int e2b_connect_code(const char *code);

/* ---- e2b-exec.c ---- */
int e2b_exec(struct e2b_prov *p, struct e2b_sb *sb, const sbx_exec_spec_v1 *spec,
             const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out);
/* Runs argv to completion, discarding output; *exit_code gets its code. */
int e2b_run_quiet(struct e2b_prov *p, struct e2b_sb *sb, const char *const *argv,
                  long timeout_ms, int *exit_code);

/* ---- e2b-files.c ---- */
int e2b_upload(struct e2b_prov *p, struct e2b_sb *sb, const char *path, const void *data,
               size_t len, uint32_t mode);
int e2b_download(struct e2b_prov *p, struct e2b_sb *sb, const char *path, size_t max,
                 void **data, size_t *len);
/* "<workdir>/<rel>" for a relative path without "..": SBX_E_PATH else. */
int e2b_sandbox_path(struct e2b_prov *p, const char *rel, char **out);

/* ---- e2b-util.c ---- */
uint64_t e2b_now_ns(void);

#endif
