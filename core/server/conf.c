/* core/server/conf.c - [server] in polysandbox.ini and the command line
 *
 * The library keeps [server] for us (sbx_ctx_settings), with where each
 * key was set, so a bad value is reported as FILE:LINE like the rest of
 * the configuration; "-o server.KEY=VALUE" arrives the same way.  The
 * command line's --listen and --token-file come last.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "server.h"

enum kind { K_STRING, K_SIZE, K_DURATION, K_COUNT, K_SECONDS, K_BOOL };

#define OFF(f) offsetof(srv_conf, f)

static const struct key {
    const char *name;
    enum kind kind;
    size_t off;
} keys[] = {
    { "listen", K_STRING, OFF(listen) },
    { "token_file", K_STRING, OFF(token_file) },
    { "tokens", K_STRING, OFF(tokens) },
    { "max_body", K_SIZE, OFF(max_body) },
    { "workers", K_COUNT, OFF(workers) },
    { "queue", K_COUNT, OFF(queue) },
    { "io_threads", K_COUNT, OFF(io_threads) },
    { "token_concurrency", K_COUNT, OFF(token_concurrency) },
    { "max_connections", K_COUNT, OFF(max_connections) },
    { "connection_timeout", K_SECONDS, OFF(connection_timeout_s) },
    { "request_timeout", K_DURATION, OFF(request_timeout_ns) },
    { "grace", K_DURATION, OFF(grace_ns) },
    { "heartbeat", K_DURATION, OFF(heartbeat_ns) },
    { "retry_after", K_SECONDS, OFF(retry_after_s) },
    { "max_download", K_SIZE, OFF(max_download) },
    { "idempotency_keys", K_COUNT, OFF(idempotency_max) },
    { "idempotency_memory", K_SIZE, OFF(idempotency_memory) },
    { "idempotency_ttl", K_DURATION, OFF(idempotency_ttl_ns) },
    { "keep_sandboxes", K_BOOL, OFF(keep_sandboxes) },
    { "sandbox_ttl", K_DURATION, OFF(sandbox_ttl_ns) },
    /* jobs (jobs.c) */
    { "state_dir", K_STRING, OFF(state_dir) },
    { "eval_dir", K_STRING, OFF(eval_dir) },
    { "job_workers", K_COUNT, OFF(job_workers) },
    { "jobs_running", K_COUNT, OFF(jobs_running) },
    { "jobs_max", K_COUNT, OFF(jobs_max) },
    { "job_items_max", K_COUNT, OFF(job_items_max) },
    { "job_output_max", K_SIZE, OFF(job_output_max) },
    { "job_ttl", K_DURATION, OFF(job_ttl_ns) },
    /* Judge0's routes (compat-judge0.c) */
    { "judge0_delete", K_BOOL, OFF(judge0_delete) },
    { "judge0_callbacks", K_BOOL, OFF(judge0_callbacks) },
    { "judge0_callbacks_pending", K_COUNT, OFF(judge0_callbacks_pending) },
    { "judge0_callbacks_kept", K_COUNT, OFF(judge0_callbacks_kept) },
    { "judge0_callbacks_timeout", K_DURATION, OFF(judge0_callbacks_timeout_ns) },
};
#define N_KEYS (sizeof keys / sizeof keys[0])

void srv_conf_defaults(srv_conf *c)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

    memset(c, 0, sizeof *c);
    c->listen = strdup("127.0.0.1:8780");
    c->max_body = 16u << 20;
    c->workers = ncpu > 2 ? (unsigned)ncpu * 2 : 4;
    c->queue = 256;
    c->io_threads = 2;
    c->max_connections = 1024;
    c->connection_timeout_s = 30;
    c->request_timeout_ns = UINT64_C(60000000000);
    c->grace_ns = UINT64_C(30000000000);
    c->heartbeat_ns = UINT64_C(15000000000);
    c->retry_after_s = 1;
    c->max_download = 64u << 20;
    c->idempotency_max = 10000;
    c->idempotency_memory = 64u << 20;
    c->idempotency_ttl_ns = UINT64_C(86400000000000);
    c->sandbox_ttl_ns = UINT64_C(86400000000000);
    c->jobs_running = 4;
    c->jobs_max = 1000;
    c->job_items_max = 100000;
    c->job_output_max = 64u << 10;
    c->job_ttl_ns = UINT64_C(7) * 86400 * 1000000000u;
    c->judge0_callbacks = true;   /* Judge0's defaults: callbacks on, DELETE off */
    c->judge0_callbacks_pending = 1024;
    c->judge0_callbacks_kept = 10000;
    c->judge0_callbacks_timeout_ns = UINT64_C(5000000000);
}

void srv_conf_free(srv_conf *c)
{
    free(c->listen);
    free(c->token_file);
    free(c->tokens);
    free(c->families_off);
    free(c->state_dir);
    free(c->eval_dir);
    memset(c, 0, sizeof *c);
}

static int parse_bool(const char *v, bool *out)
{
    static const char *const yes[] = { "true", "yes", "on", "1" };
    static const char *const no[] = { "false", "no", "off", "0" };

    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0) {
            *out = true;
            return 0;
        }
        if (strcasecmp(v, no[i]) == 0) {
            *out = false;
            return 0;
        }
    }
    return -1;
}

/* A family's switch (compat_NAME = false) */
static int set_family(srv_conf *c, const char *key, bool on)
{
    size_t klen = strlen(key) + 1;
    bool listed = false;
    char *p = c->families_off;

    for (size_t off = 0; off < c->families_off_len; off += strlen(p + off) + 1)
        listed = listed || strcmp(p + off, key) == 0;
    if (on || listed) {
        /* a later "true" wins: drop the key */
        if (on && listed) {
            size_t w = 0;
            for (size_t off = 0; off < c->families_off_len;) {
                size_t n = strlen(p + off) + 1;
                if (strcmp(p + off, key) != 0) {
                    memmove(p + w, p + off, n);
                    w += n;
                }
                off += n;
            }
            c->families_off_len = w;
        }
        return 0;
    }
    if (!(p = realloc(c->families_off, c->families_off_len + klen)))
        return -1;
    memcpy(p + c->families_off_len, key, klen);
    c->families_off = p;
    c->families_off_len += klen;
    return 0;
}

bool srv_conf_family_on(const srv_conf *c, const char *family_key)
{
    const char *p = c->families_off;

    for (size_t off = 0; off < c->families_off_len; off += strlen(p + off) + 1)
        if (strcmp(p + off, family_key) == 0)
            return false;
    return true;
}

static void known_keys(char *buf, size_t size)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < N_KEYS + srv_family_count() && used + 1 < size; i++) {
        const char *k = i < N_KEYS ? keys[i].name : srv_family_key(i - N_KEYS);
        if (!k)
            continue;
        int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", k);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

int srv_conf_set(srv_conf *c, const char *key, const char *value, const char *where)
{
    const char *why = "is not valid";
    uint64_t v = 0;
    bool b;
    size_t i;
    char *base = (char *)c;

    for (i = 0; i < N_KEYS && strcmp(keys[i].name, key) != 0; i++)
        ;
    if (i == N_KEYS) {
        for (size_t f = 0; f < srv_family_count(); f++) {
            const char *fk = srv_family_key(f);
            if (!fk || strcmp(fk, key) != 0)
                continue;
            if (parse_bool(value, &b) != 0)
                goto bad;
            return set_family(c, key, b);
        }
        char known[1024];
        known_keys(known, sizeof known);
        fprintf(stderr, "polysandboxd: %s: unknown key '%s' in [server] (known: %s)\n", where,
                key, known);
        return -1;
    }
    switch (keys[i].kind) {
    case K_STRING: {
        char **slot = (char **)(base + keys[i].off), *copy;
        if (!*value) {
            why = "must not be empty";
            goto bad;
        }
        if (!(copy = strdup(value)))
            return -1;
        free(*slot);
        *slot = copy;
        return 0;
    }
    case K_SIZE:
        if (!cli_parse_size(value, &v, &why))
            goto bad;
        if (v > SIZE_MAX / 2) {
            why = "is too large";
            goto bad;
        }
        *(size_t *)(base + keys[i].off) = (size_t)v;
        return 0;
    case K_DURATION:
        if (!cli_parse_duration(value, &v, &why))
            goto bad;
        *(uint64_t *)(base + keys[i].off) = v;
        return 0;
    case K_SECONDS:
        if (!cli_parse_duration(value, &v, &why))
            goto bad;
        if (v < UINT64_C(1000000000) || v / 1000000000u > 86400) {
            why = "must be between 1s and 24h (whole seconds)";
            goto bad;
        }
        *(unsigned *)(base + keys[i].off) = (unsigned)(v / 1000000000u);
        return 0;
    case K_COUNT:
        /* 0 is allowed only where it means "none" */
        if (strcmp(key, "token_concurrency") == 0 && strcmp(value, "0") == 0) {
            *(unsigned *)(base + keys[i].off) = 0;
            return 0;
        }
        if (!cli_parse_count(value, &v, &why))
            goto bad;
        if (v > 1000000) {
            why = "is too large (at most 1000000)";
            goto bad;
        }
        *(unsigned *)(base + keys[i].off) = (unsigned)v;
        return 0;
    case K_BOOL:
        if (parse_bool(value, &b) != 0) {
            why = "must be true or false";
            goto bad;
        }
        *(bool *)(base + keys[i].off) = b;
        return 0;
    }
bad:
    fprintf(stderr, "polysandboxd: %s: invalid value '%s' for %s in [server]: %s\n", where,
            value, key, why);
    return -1;
}

static int one(void *ud, const char *key, const char *value, const char *where)
{
    return srv_conf_set(ud, key, value, where) != 0 ? 1 : 0;
}

int srv_conf_load(srv_conf *c, const sbx_ctx *ctx)
{
    return sbx_ctx_settings(ctx, "server", one, c) == SBX_OK ? 0 : -1;
}
