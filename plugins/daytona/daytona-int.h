/* plugins/daytona/daytona-int.h - the daytona provider's internals
 *
 * The provider talks to two HTTP services (wire-apis.md section 4): the
 * Daytona API (sandboxes: create, get, list, delete, start, labels) with
 * one client per provider, and each sandbox's toolbox behind the
 * Daytona proxy (process execution, files) with one client per sandbox
 * handle.  Both take "Authorization: Bearer <api_key>".
 */
#ifndef SBX_DAYTONA_INT_H
#define SBX_DAYTONA_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <polysandbox/provider.h>

#include "http.h"
#include "randhex.h"
#include "retry-hints.h"
#include "rfc3339.h"
#include "shwrap.h"

#define DT_NAME "daytona"
#define DT_INI "providers.d/daytona.ini"

struct dt_prov {
    const sbx_host_v1 *host;
    sbx_host_handle *h;
    ph_client *api;             /* the API, base api_url */
    char *api_url;
    char *toolbox_url;          /* override of the sandboxes' toolboxProxyUrl, or NULL */
    char *snapshot;             /* default snapshot, or NULL (the service's default) */
    char *target;               /* region, or NULL */
    char *org_id;               /* X-Daytona-Organization-ID, or NULL */
    char *ca_file;
    long request_ms;            /* one API or toolbox call (exec: plus its timeout) */
    long start_ms;              /* waiting for a sandbox to be started */
    long auto_stop_min;         /* autoStopInterval without a ttl */
    long auto_delete_min;       /* autoDeleteInterval of persistent sandboxes without a ttl */
    long cpu, memory_gb, disk_gb; /* 0: not sent */
    enum { DT_IMG_BUILD, DT_IMG_SNAPSHOT, DT_IMG_IGNORE } images; /* what an image becomes */
};

struct dt_sb {
    char id[SBX_ID_MAX];
    ph_client *tb;              /* the sandbox's toolbox */
    char *workdir;              /* absolute, from GET /work-dir; NULL until known */
    uint64_t seq;               /* makes scratch names unique within the handle */
    pc_hints hints;             /* the retry hints of the exec running on it */
};

/* ---- daytona-util.c ---- */

/* The growing string and shell quoting of plugins/common/shwrap.h. */
typedef sw_buf dt_buf;
#define dt_buf_add sw_buf_add
#define dt_buf_adds sw_buf_adds
#define dt_buf_addf sw_buf_addf
#define dt_buf_addq sw_buf_addq
#define dt_buf_free sw_buf_free
/* s percent-encoded for a URL query value ('/' kept). */
void dt_buf_addurl(dt_buf *b, const char *s);
void dt_buf_free(dt_buf *b);

/* Base64 (RFC 4648, with padding); NULL on allocation failure. */
char *dt_base64(const void *data, size_t len);
/* Decodes base64 ignoring blanks and newlines into a malloc'd buffer; -1
 * on bad input or allocation failure. */
int dt_unbase64(const char *s, size_t n, unsigned char **out, size_t *outlen);
uint64_t dt_now_ns(void);
#define dt_path_ok sw_path_ok
/* Whether an id is usable as ours: [A-Za-z0-9._-], shorter than SBX_ID_MAX. */
bool dt_id_ok(const char *id);

/* ---- daytona-api.c ---- */

/* The backend asked for a pause (@ms < 0: it did not say): to the core
 * (host->retry_after) and, for a request on @s (or NULL), into the hints
 * of the exec running on it; and that a failed exec on @s never started
 * its command (retry-hints.h). */
void dt_retry_after(struct dt_prov *p, struct dt_sb *s, long ms);
void dt_not_started(struct dt_sb *s);
/* A toolbox answer outside 2xx: passes on the pause it asks for and sets
 * the error "daytona: sandbox ID: WHAT: HTTP N: message" (WHAT from @fmt);
 * returns the error's code. */
int dt_toolbox_refused(struct dt_prov *p, struct dt_sb *s, const ph_response *r,
                       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Sets the API key (and organization) headers on a client. */
int dt_client_auth(struct dt_prov *p, ph_client *c);
/* A JSON call on the API; on failure set_error with what and the answer. */
int dt_api(struct dt_prov *p, const char *what, const char *method, const char *path,
           json_t *body, long *status, json_t **out);
/* Waits until the sandbox is started (starting it when stopped);
 * *sandbox gets its last JSON (owned by the caller). */
int dt_wait_started(struct dt_prov *p, const char *id, json_t *first, json_t **sandbox);
/* Makes the toolbox client of a sandbox whose JSON is j. */
int dt_toolbox_open(struct dt_prov *p, struct dt_sb *s, json_t *j);
/* The working directory (GET /work-dir), cached on the handle. */
int dt_workdir(struct dt_prov *p, struct dt_sb *s);
/* After a toolbox refusal with HTTP @status: when the sandbox turns out
 * to be stopped (auto-stop), starts it again and returns true (the call
 * may be made once more). */
bool dt_revive(struct dt_prov *p, struct dt_sb *s, long status);
void dt_sb_free(struct dt_sb *s);

/* ---- daytona-exec.c ---- */

int dt_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
            const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out);
/* Runs a wrapper script; *result gets the text it printed (malloc'd), or
 * *timed_out is set on a 408.  timeout_s 0: the provider's request time. */
int dt_run_script(struct dt_prov *p, struct dt_sb *s, const char *what, const char *script,
                  unsigned timeout_s, size_t max_body, char **result, size_t *result_len,
                  bool *timed_out);
/* Places files (already at scratch/f<i>, or inline) under the work dir;
 * shared by exec and upload.  See daytona-exec.c. */
struct dt_place {
    const char *path;           /* relative to the work directory */
    const void *data;           /* inline content, or NULL when uploaded */
    size_t len;
    uint32_t mode;
};
void dt_script_begin(dt_buf *b, const char *scratch);
void dt_script_place(dt_buf *b, size_t i, const struct dt_place *f);
/* Interprets "SBX1 P why i" lines; SBX_OK when there is none. */
int dt_place_failed(struct dt_prov *p, const char *what, const char *res,
                    const struct dt_place *files, size_t n);
/* A fresh scratch directory name under the work directory. */
int dt_scratch(struct dt_prov *p, struct dt_sb *s, char **out);

/* ---- daytona-files.c ---- */

/* Uploads data to an absolute sandbox path (multipart, field "file"). */
int dt_upload_raw(struct dt_prov *p, struct dt_sb *s, const char *abspath, const void *data,
                  size_t len);
int dt_upload(void *prov, void *sb, const char *path, const void *data, size_t len,
              uint32_t mode);
int dt_download(void *prov, void *sb, const char *path, size_t max, void **data, size_t *len);

/* Bytes of a file inlined in a wrapper script instead of uploaded. */
#define DT_INLINE_MAX (24 * 1024)

#endif
