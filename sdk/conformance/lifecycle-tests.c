/* sdk/conformance/lifecycle-tests.c - persistence, labels and listing,
 * concurrent sandboxes, error reporting, unclaimed capabilities */
#include "config.h"

#include "kit.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Checks that a failed call left a usable error: a message, and the code
 * the call returned. */
static void expect_error_detail(conf_kit *k, conf_case *c, const char *call,
                                int rc)
{
    const sbx_error *e = sbx_ctx_last_error(k->ctx);
    if (e == NULL) {
        conf_fail(c, "%s: sbx_ctx_last_error returned NULL", call);
        return;
    }
    const char *msg = sbx_error_message(e);
    if (msg == NULL || *msg == '\0')
        conf_fail(c, "%s failed with %s but the error has no message", call,
                  sbx_strerror(rc));
    else
        conf_note(c, "%s: \"%s\"", call, msg);
    if (sbx_error_code(e) != rc)
        conf_fail(c, "%s returned %d but the error's code is %d", call, rc,
                  sbx_error_code(e));
}

/* ---- persistence --------------------------------------------------------- */

static void t_persistent(conf_kit *k, conf_case *c)
{
    char *id = NULL;
    sbx_result *r = NULL;
    sbx_sandbox *sb = NULL;
    /* The create-time environment is part of the sandbox: it is still
     * there after close and open. */
    sbx_create_opts *o = conf_copts(k, c);
    if (o == NULL ||
        !conf_set_ok(c, "sbx_create_opts_set_persistent",
                     sbx_create_opts_set_persistent(o, true)) ||
        !conf_set_ok(c, "sbx_create_opts_add_env(CONF_P)",
                     sbx_create_opts_add_env(o, "CONF_P", "kept")))
        goto out;
    sb = conf_box(k, c, o, true);
    if (sb == NULL)
        goto out;
    r = conf_exec_shell(k, c, sb, "echo state > persist.txt");
    if (r == NULL || !conf_expect_status(c, "exec 1 writes", SBX_RUN_OK, r))
        goto out;
    sbx_result_free(r);
    r = conf_exec_shell(k, c, sb, "cat persist.txt");
    if (r == NULL || !conf_expect_status(c, "exec 2 reads", SBX_RUN_OK, r) ||
        !conf_expect_stdout(c, "file written by exec 1", "state\n", r))
        goto out;
    sbx_result_free(r);
    r = NULL;

    const char *sid = sbx_sandbox_id(sb);
    if (sid == NULL || *sid == '\0') {
        conf_fail(c, "sbx_sandbox_id: expected non-empty, got \"%s\"",
                  sid ? sid : "(null)");
        goto out;
    }
    id = strdup(sid);
    if (id == NULL) {
        conf_fail(c, "out of memory");
        goto out;
    }
    sbx_sandbox_close(sb);
    sb = NULL;
    int rc = sbx_sandbox_open(k->ctx, k->provider, id, &sb);
    if (!conf_expect_rc(k, c, "sbx_sandbox_open after close", SBX_OK, rc)) {
        sb = NULL;
        conf_diag(c, "  the sandbox %s may be left running", id);
        goto out;
    }
    if (strcmp(sbx_sandbox_id(sb), id) != 0)
        conf_fail(c, "reopened id: expected \"%s\", got \"%s\"", id,
                  sbx_sandbox_id(sb));
    r = conf_exec_shell(k, c, sb, "cat persist.txt; echo \"$CONF_P\"");
    if (r != NULL && conf_expect_status(c, "read after reopen", SBX_RUN_OK, r))
        conf_expect_stdout(c, "file and create-time CONF_P after close and "
                              "open", "state\nkept\n", r);
    sbx_result_free(r);
    r = NULL;
    rc = sbx_sandbox_destroy(sb);
    sb = NULL;
    conf_expect_rc(k, c, "sbx_sandbox_destroy", SBX_OK, rc);

    /* Destroyed means gone: opening it again (a second destroy would go
     * through this) is SBX_E_NOT_FOUND. */
    sbx_sandbox *again = NULL;
    rc = sbx_sandbox_open(k->ctx, k->provider, id, &again);
    if (rc == SBX_OK) {
        conf_fail(c, "sbx_sandbox_open of destroyed %s: expected "
                     "SBX_E_NOT_FOUND, got SBX_OK", id);
        conf_destroy(k, c, again);
    } else if (conf_expect_rc(k, c, "sbx_sandbox_open of a destroyed id",
                              SBX_E_NOT_FOUND, rc)) {
        expect_error_detail(k, c, "sbx_sandbox_open of a destroyed id", rc);
    }
out:
    sbx_result_free(r);
    conf_destroy(k, c, sb);
    sbx_create_opts_free(o);
    free(id);
}

/* ---- labels -------------------------------------------------------------- */

typedef struct list_find {
    const char *id;
    const char *key, *value;
    bool found;
    bool has_label;
    size_t seen;
} list_find;

static int list_cb(void *ud, const char *id, const char *const *labels,
                   size_t n_labels, uint64_t created)
{
    list_find *f = ud;
    (void)created;
    f->seen++;
    if (id == NULL || strcmp(id, f->id) != 0)
        return 0;
    f->found = true;
    size_t kl = strlen(f->key);
    for (size_t i = 0; i < n_labels; i++) {
        const char *l = labels[i];
        if (l == NULL)
            continue;
        /* Labels come as "key=value" strings. */
        if (strncmp(l, f->key, kl) == 0 && l[kl] == '=' &&
            strcmp(l + kl + 1, f->value) == 0)
            f->has_label = true;
    }
    return 0;
}

static void t_labels(conf_kit *k, conf_case *c)
{
    char token[64];
    conf_token(token, sizeof token);
    sbx_create_opts *o = conf_copts(k, c);
    sbx_sandbox *sb = NULL;
    char *id = NULL;
    if (o == NULL ||
        !conf_set_ok(c, "sbx_create_opts_add_label",
                     sbx_create_opts_add_label(o, "conformance", token)))
        goto out;
    sb = conf_box(k, c, o, false);
    if (sb == NULL)
        goto out;
    id = strdup(sbx_sandbox_id(sb));
    if (id == NULL) {
        conf_fail(c, "out of memory");
        goto out;
    }
    list_find f = {id, "conformance", token, false, false, 0};
    int rc = sbx_list(k->ctx, k->provider, list_cb, &f);
    if (conf_expect_rc(k, c, "sbx_list", SBX_OK, rc)) {
        if (!f.found)
            conf_fail(c, "sbx_list: sandbox %s not listed (%zu listed)", id,
                      f.seen);
        else if (!f.has_label)
            conf_fail(c, "sbx_list: sandbox %s listed without its label "
                         "conformance=%s", id, token);
    }
    rc = sbx_sandbox_destroy(sb);
    sb = NULL;
    conf_expect_rc(k, c, "sbx_sandbox_destroy", SBX_OK, rc);
    f = (list_find){id, "conformance", token, false, false, 0};
    rc = sbx_list(k->ctx, k->provider, list_cb, &f);
    if (conf_expect_rc(k, c, "sbx_list after destroy", SBX_OK, rc) && f.found)
        conf_fail(c, "sbx_list: destroyed sandbox %s still listed", id);
out:
    conf_destroy(k, c, sb);
    sbx_create_opts_free(o);
    free(id);
}

/* ---- concurrency --------------------------------------------------------- */

#define CONC_THREADS 8
#define CONC_RUNS 5

typedef struct conc_arg {
    conf_kit *k;
    conf_case *c;
    int thread;
} conc_arg;

static void *conc_worker(void *p)
{
    conc_arg *a = p;
    for (int i = 0; i < CONC_RUNS; i++) {
        char token[64], line[128], want[128], what[64];
        conf_token(token, sizeof token);
        snprintf(line, sizeof line, "echo %s-t%d-r%d", token, a->thread, i);
        snprintf(want, sizeof want, "%s-t%d-r%d\n", token, a->thread, i);
        snprintf(what, sizeof what, "thread %d run %d", a->thread, i);
        sbx_result *r = conf_run_shell(a->k, a->c, line);
        if (r == NULL)
            continue;
        if (conf_expect_status(a->c, what, SBX_RUN_OK, r))
            conf_expect_stdout(a->c, what, want, r);
        sbx_result_free(r);
    }
    return NULL;
}

static void t_concurrent(conf_kit *k, conf_case *c)
{
    pthread_t th[CONC_THREADS];
    conc_arg args[CONC_THREADS];
    bool started[CONC_THREADS] = {false};
    for (int i = 0; i < CONC_THREADS; i++) {
        args[i] = (conc_arg){k, c, i};
        started[i] = pthread_create(&th[i], NULL, conc_worker, &args[i]) == 0;
        if (!started[i])
            conf_fail(c, "pthread_create failed for thread %d", i);
    }
    for (int i = 0; i < CONC_THREADS; i++)
        if (started[i])
            pthread_join(th[i], NULL);
}

/* ---- errors -------------------------------------------------------------- */

static void t_error_message(conf_kit *k, conf_case *c)
{
    char id[96], token[64];
    conf_token(token, sizeof token);
    snprintf(id, sizeof id, "conformance-no-such-sandbox-%s", token);
    sbx_sandbox *sb = NULL;
    int rc = sbx_sandbox_open(k->ctx, k->provider, id, &sb);
    if (rc == SBX_OK) {
        conf_fail(c, "sbx_sandbox_open(\"%s\"): expected an error, got SBX_OK",
                  id);
        sbx_sandbox_close(sb);
        return;
    }
    /* With attach the answer is "no such sandbox"; without, "not
     * supported".  Either way it must say so in words. */
    int want = (k->caps & SBX_CAP_PERSISTENT) ? SBX_E_NOT_FOUND : SBX_E_NOTSUP;
    if (conf_expect_rc(k, c, "sbx_sandbox_open of a nonexistent id", want, rc))
        expect_error_detail(k, c, "sbx_sandbox_open of a nonexistent id", rc);
}

static int list_nothing(void *ud, const char *id, const char *const *labels,
                        size_t n, uint64_t created)
{
    (void)ud, (void)id, (void)labels, (void)n, (void)created;
    return 0;
}

static void t_unclaimed_notsup(conf_kit *k, conf_case *c)
{
    bool checked = false;
    if (!(k->caps & SBX_CAP_LIST)) {
        checked = true;
        int rc = sbx_list(k->ctx, k->provider, list_nothing, NULL);
        if (conf_expect_rc(k, c, "sbx_list without SBX_CAP_LIST",
                           SBX_E_NOTSUP, rc))
            expect_error_detail(k, c, "sbx_list", rc);
    }
    if (!(k->caps & SBX_CAP_PERSISTENT)) {
        checked = true;
        sbx_sandbox *sb = NULL;
        int rc = sbx_sandbox_open(k->ctx, k->provider, "conformance-x", &sb);
        if (rc == SBX_OK)
            sbx_sandbox_close(sb);
        conf_expect_rc(k, c, "sbx_sandbox_open without SBX_CAP_PERSISTENT",
                       SBX_E_NOTSUP, rc);
    }
    if (!(k->caps & SBX_CAP_FILES)) {
        checked = true;
        sbx_sandbox *sb = conf_box(k, c, NULL, false);
        if (sb != NULL) {
            void *data = NULL;
            size_t len = 0;
            int rc = sbx_sandbox_upload(sb, "x", "x", 1, 0644);
            conf_expect_rc(k, c, "sbx_sandbox_upload without SBX_CAP_FILES",
                           SBX_E_NOTSUP, rc);
            rc = sbx_sandbox_download(sb, "x", 16, &data, &len);
            if (rc == SBX_OK)
                free(data);
            conf_expect_rc(k, c, "sbx_sandbox_download without SBX_CAP_FILES",
                           SBX_E_NOTSUP, rc);
            conf_destroy(k, c, sb);
        }
    }
    if (!checked)
        conf_note(c, "the provider claims files, persistent and list");
}

const conf_test conf_lifecycle_tests[] = {
    {"persistent", SBX_CAP_PERSISTENT, t_persistent,
     "state kept between execs and across close/open; destroyed means "
     "SBX_E_NOT_FOUND"},
    {"labels_list", SBX_CAP_LABELS | SBX_CAP_LIST, t_labels,
     "a labelled sandbox is listed with its label, and gone after destroy"},
    {"concurrent", SBX_CAP_CONCURRENT, t_concurrent,
     "8 threads x 5 sbx_run on one context each get their own output"},
    {"error_message", 0, t_error_message,
     "opening a nonexistent id fails with a code and a message"},
    {"unclaimed_notsup", 0, t_unclaimed_notsup,
     "operations of capabilities not claimed answer SBX_E_NOTSUP"},
    {NULL, 0, NULL, NULL},
};
