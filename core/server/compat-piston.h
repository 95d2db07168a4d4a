/* core/server/compat-piston.h - what the Piston routes' two files share
 * (compat-piston.c: runtimes, execute; compat-piston-ws.c: connect) */
#ifndef POLYSANDBOX_SERVER_COMPAT_PISTON_H
#define POLYSANDBOX_SERVER_COMPAT_PISTON_H

#include "compat.h"

/* A template as a Piston runtime (kept for the life of the process). */
typedef struct srv_piston_runtime {
    const char *tmpl;         /* our template */
    const char *language;     /* Piston's name for it */
    const char *runtime;      /* or NULL */
    char version[32];         /* asked of the runtime, or "0.0.0" */
    json_t *aliases;          /* array of strings */
    bool compiled;
} srv_piston_runtime;

/* The runtimes (probed on the first call; NULL with *n 0 on ENOMEM). */
const srv_piston_runtime *srv_piston_runtimes(srv_req *r, size_t *n);
/* The runtime named @language (or an alias) whose version matches the
 * SemVer selector @version, or NULL. */
const srv_piston_runtime *srv_piston_find(srv_req *r, const char *language,
                                          const char *version);

/* An execute (or WebSocket init) body made into options. */
typedef struct srv_piston_job {
    const srv_piston_runtime *rt;
    sbx_create_opts *create;  /* (owned) */
    sbx_exec_opts *exec;      /* (owned) */
    const char *stdin_data;   /* (borrowed from the JSON) or NULL */
    size_t stdin_len;
} srv_piston_job;

/* -1 with Piston's message for the request in @err. */
int srv_piston_request(srv_req *r, json_t *j, srv_piston_job *job, char *err, size_t errsz);
void srv_piston_job_free(srv_piston_job *job);

/* A stage object; @with_output: the interleaved "output" too;
 * @figures: memory and cpu_time from @res (they are the last step's). */
json_t *srv_piston_stage(sbx_run_status st, const sbx_result *res, const srv_phase *ph,
                         bool with_output, bool figures);
/* {compile?, run} of a finished capture. */
json_t *srv_piston_stages(const srv_capture *cap);
/* The library refused a run (rc): the reply Piston would give. */
void srv_piston_refused(srv_req *r, int rc);
/* Piston's 415 unless the body says it is JSON (or text, or nothing). */
bool srv_piston_json_type(srv_req *r);

/* WS /api/v2/connect (compat-piston-ws.c) */
int srv_routes_piston_ws(struct srv_router *rt);

#endif
