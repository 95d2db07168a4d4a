/* core/server/compat-fusion.h - what the SandboxFusion routes' files share
 * (compat-fusion.c: /run_code, /v1/ping; compat-fusion-data.c: datasets) */
#ifndef POLYSANDBOX_SERVER_COMPAT_FUSION_H
#define POLYSANDBOX_SERVER_COMPAT_FUSION_H

#include "compat.h"

/* A /run_code request made into options. */
typedef struct srv_fusion_job {
    const char *tmpl;         /* our template */
    sbx_create_opts *create;  /* (owned) */
    sbx_exec_opts *exec;      /* (owned) */
    const char **fetch;       /* fetch_files (owned array, borrowed strings) */
    size_t n_fetch;
} srv_fusion_job;

/* Our template for SandboxFusion's language name, or NULL. */
const char *srv_fusion_template(const sbx_ctx *ctx, const char *language);
/* The body, or NULL having replied FastAPI's 422 json_invalid. */
json_t *srv_fusion_body(srv_req *r);
/* FastAPI's 422 {"detail": [{type, loc: ["body", field], msg, input}]};
 * @field NULL: the body itself. */
void srv_fusion_detail(srv_req *r, const char *type, const char *field, const char *msg,
                       json_t *input);
/* Parse a RunCodeRequest; -1 having replied. */
int srv_fusion_request(srv_req *r, json_t *j, srv_fusion_job *job);
void srv_fusion_job_free(srv_fusion_job *job);
/* A RunCodeResponse of a finished capture (new reference). */
json_t *srv_fusion_response(const srv_capture *cap);

/* compat-fusion-data.c */
int srv_routes_fusion_data(struct srv_router *rt);

#endif
