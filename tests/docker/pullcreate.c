/* tests/docker/pullcreate.c - creates sandboxes of one image on the docker
 * provider from several threads of one process at once (one context: one
 * provider instance, as a pool filling), runs a command in each, and
 * prints each outcome for tests/docker/pull.sh:
 *
 *   thread N: ok OUTPUT
 *   thread N: error CODE-NUMBER MESSAGE
 *
 * Usage: test-docker-pullcreate IMAGE THREADS [SECTION.KEY=VALUE...]
 * (configuration overrides, e.g. provider.docker.pull=never).  Exits 0
 * when every thread succeeded, 1 otherwise, 2 on bad usage.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

struct job {
    sbx_ctx *ctx;
    const char *image;
    int n;
    char line[1200];
    int failed;
};

static void *one(void *ud)
{
    struct job *j = ud;
    sbx_create_opts *co = sbx_create_opts_new();
    sbx_exec_opts *x = sbx_exec_opts_new();
    sbx_sandbox *sb = NULL;
    sbx_result *r = NULL;
    const char *argv[] = {"python3", "-c", "print(6*7)", NULL};
    j->failed = 1;
    if (!co || !x || sbx_create_opts_set_provider(co, "docker") ||
        sbx_create_opts_set_image(co, j->image) || sbx_exec_opts_set_argv(x, argv)) {
        snprintf(j->line, sizeof j->line, "thread %d: error %d out of memory", j->n, SBX_E_NOMEM);
    } else if (sbx_sandbox_create(j->ctx, co, &sb) != SBX_OK) {
        const sbx_error *e = sbx_ctx_last_error(j->ctx);
        snprintf(j->line, sizeof j->line, "thread %d: error %d %s", j->n, sbx_error_code(e),
                 sbx_error_message(e));
    } else if (sbx_sandbox_exec(sb, x, &r) != SBX_OK || sbx_result_status(r) != SBX_RUN_OK) {
        snprintf(j->line, sizeof j->line, "thread %d: error %d exec: %s", j->n, SBX_E_BACKEND,
                 r && sbx_result_error(r) ? sbx_result_error(r) : "failed");
    } else {
        size_t n = 0;
        const char *o = sbx_result_stdout(r, &n);
        while (n > 0 && o[n - 1] == '\n')
            n--;
        snprintf(j->line, sizeof j->line, "thread %d: ok %.*s", j->n, (int)n, o);
        j->failed = 0;
    }
    sbx_result_free(r);
    if (sb)
        sbx_sandbox_destroy(sb);
    sbx_exec_opts_free(x);
    sbx_create_opts_free(co);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3 || atoi(argv[2]) < 1 || atoi(argv[2]) > 16) {
        fprintf(stderr, "usage: test-docker-pullcreate IMAGE THREADS(1-16) [SECTION.KEY=VALUE...]\n");
        return 2;
    }
    int n = atoi(argv[2]);
    sbx_ctx *ctx = NULL;
    if (sbx_ctx_new_with(&ctx, NULL, (const char *const *)argv + 3) != SBX_OK) {
        printf("context: error %d %s\n", ctx ? sbx_error_code(sbx_ctx_last_error(ctx)) : 1,
               ctx ? sbx_error_message(sbx_ctx_last_error(ctx)) : "no context");
        sbx_ctx_free(ctx);
        return 1;
    }
    struct job jobs[16];
    pthread_t th[16];
    int started = 0, failed = 0;
    for (int i = 0; i < n; i++) {
        jobs[i] = (struct job){.ctx = ctx, .image = argv[1], .n = i + 1};
        if (pthread_create(&th[i], NULL, one, &jobs[i])) {
            snprintf(jobs[i].line, sizeof jobs[i].line, "thread %d: error %d cannot start",
                     i + 1, SBX_E_INTERNAL);
            jobs[i].failed = 1;
            continue;
        }
        started |= 1 << i;
    }
    for (int i = 0; i < n; i++) {
        if (started & (1 << i))
            pthread_join(th[i], NULL);
        printf("%s\n", jobs[i].line);
        failed += jobs[i].failed;
    }
    sbx_ctx_free(ctx);
    return failed ? 1 : 0;
}
