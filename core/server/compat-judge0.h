/* core/server/compat-judge0.h - what the Judge0 routes' two files share
 * (compat-judge0.c: the routes; compat-judge0-store.c: the finished
 * submissions kept for GET /submissions/{token}, and how a submission is
 * shown) */
#ifndef POLYSANDBOX_SERVER_COMPAT_JUDGE0_H
#define POLYSANDBOX_SERVER_COMPAT_JUDGE0_H

#include "compat.h"

/* The attributes that are bytes (base64 when base64_encoded=true). */
enum srv_j0_text {
    J0_SOURCE_CODE, J0_STDIN, J0_EXPECTED_OUTPUT, J0_STDOUT, J0_STDERR,
    J0_COMPILE_OUTPUT, J0_MESSAGE, J0_N_TEXT
};

#define SRV_J0_TOKEN_LEN 36    /* a UUID, as Judge0's tokens */

/* A finished submission. */
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
/* srv_j0_show of the submission @token kept, under the store's lock:
 * 0, -1 when there is none (kept), 1 when not UTF-8, 2 on ENOMEM. */
int srv_j0_find(const char *token, bool base64, const char *fields, json_t **out);

/* The store's bounds (documented in polysandboxd(8)). */
#define SRV_J0_KEEP_MAX 1024
#define SRV_J0_KEEP_BYTES ((size_t)64 << 20)

#endif
