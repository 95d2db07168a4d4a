/* plugins/volcengine/volc-int.h - the volcengine provider's internal
 * interface
 *
 * Two services (README.md): the OpenAPI gateway (open.volcengineapi.com,
 * service vefaas, version 2024-06-06, every request signed with the
 * access key: volc-sign.h) makes, describes, lists and kills the sandboxes
 * of one veFaaS function; the function's API gateway routes a request with
 * ?faasInstanceName=<id> to that sandbox, whose AIO sandbox server runs
 * commands (/v1/bash/...) and writes files (/v1/file/write).
 */
#ifndef VOLC_INT_H
#define VOLC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <polysandbox/provider.h>

#include "http.h"
#include "retry-hints.h"

#define VC_NAME "volcengine"
/* A Metadata key of ours: the creation time in ns (CreatedAt has seconds). */
#define VC_CREATED_KEY "polysandbox.created-ns"
#define VC_INI "providers.d/volcengine.ini"
#define VC_SERVICE "vefaas"
#define VC_VERSION "2024-06-06"
#define VC_DEFAULT_API_URL "https://open.volcengineapi.com"
#define VC_DEFAULT_REGION "cn-beijing"
/* The AIO sandbox image's user home: its default working directory. */
#define VC_DEFAULT_WORKDIR "/home/gem"
#define VC_DEFAULT_TTL "10m"

struct vc_prov {
    const sbx_host_v1 *host;
    sbx_host_handle *h;
    ph_client *api;          /* the OpenAPI gateway */
    ph_client *gw;           /* the function's API gateway */
    char *api_url, *api_host; /* host[:port] of api_url, as signed */
    char *gateway_url, *function_id, *region, *workdir, *ca_file;
    long cpu_milli, memory_mb;  /* 0: the function's own */
    uint64_t ttl_min;        /* sandbox timeout when the request gives none */
    long request_ms;
};

struct vc_sb {
    char id[SBX_ID_MAX];
    char session[80];        /* the AIO bash session of its execs, or "" */
    pc_hints hints;          /* the retry hints of the exec running on it */
};

/* ---- volcengine.c ---- */
/* How long the service asked us to wait before trying again (@ms < 0: it
 * did not say): to the core (host->retry_after) and, for a request on @s
 * (or NULL), into the hints of the exec running on it; and that a failing
 * exec on @s never started its command (retry-hints.h). */
void vc_retry_after(struct vc_prov *p, struct vc_sb *s, long ms);
void vc_not_started(struct vc_sb *s);
uint64_t vc_now_ns(void);

/* ---- volc-api.c: the two services ---- */
/* One signed OpenAPI call: Action @action with the JSON @body (not
 * stolen).  *result (may be NULL) gets the answer's "Result" object
 * (owned by the caller).  Errors are set on the host with @what as
 * context; *status (may be NULL) gets the HTTP status (0: none). */
int vc_openapi(struct vc_prov *p, const char *what, const char *action, json_t *body,
               json_t **result, long *status);
/* Whether an OpenAPI error left by vc_openapi says "no such sandbox". */
bool vc_not_found(int rc, long status);

/* One call to the AIO sandbox server of sandbox @id through the function
 * gateway: POST @path with @body (not stolen), the answer's "data" into
 * *data (may be NULL; owned by the caller).  @timeout_ms 0: the
 * provider's.  Errors are set on the host; *status (may be NULL) gets
 * the HTTP status (0: none, the transport failed). */
int vc_aio(struct vc_prov *p, struct vc_sb *s, const char *what, const char *path, json_t *body,
           long timeout_ms, json_t **data, long *status);

/* ---- volc-exec.c: commands and files through the wrapper ---- */
int vc_exec(struct vc_prov *p, struct vc_sb *s, const sbx_exec_spec_v1 *spec,
            const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out);
int vc_upload(struct vc_prov *p, struct vc_sb *s, const char *path, const void *data, size_t len,
              uint32_t mode);
int vc_download(struct vc_prov *p, struct vc_sb *s, const char *path, size_t max, void **data,
                size_t *len);

#endif
