/* sdk/conformance/find-tests.c - finding sandboxes again: listing by
 * label, get-or-create, and get-or-create from racing threads */
#include "config.h"

#include "kit.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SEEN 16

/* What a filtered listing returned among the sandboxes this test made. */
typedef struct seen {
    const char *const *want;    /* the filter: every listed one carries it */
    size_t n_want;
    char *ids[MAX_SEEN];
    size_t n;
    bool missing_label;         /* a listed sandbox lacked a filter label */
} seen;

static bool has_label(const char *const *labels, size_t n, const char *kv)
{
    for (size_t i = 0; i < n; i++)
        if (labels[i] != NULL && strcmp(labels[i], kv) == 0)
            return true;
    return false;
}

static int on_seen(void *ud, const char *id, const char *const *labels,
                   size_t n_labels, uint64_t created)
{
    seen *s = ud;
    (void)created;
    for (size_t i = 0; i < s->n_want; i++)
        if (!has_label(labels, n_labels, s->want[i]))
            s->missing_label = true;
    if (s->n < MAX_SEEN && (s->ids[s->n] = strdup(id ? id : "(null)")) != NULL)
        s->n++;
    return 0;
}

static void seen_free(seen *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->ids[i]);
    s->n = 0;
}

static bool seen_has(const seen *s, const char *id)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->ids[i], id) == 0)
            return true;
    return false;
}

/* List with @filter and check exactly which of @a and @b come back. */
static void expect_listed(conf_kit *k, conf_case *c, const char *const *filter,
                          size_t n, const char *a, bool want_a, const char *b,
                          bool want_b)
{
    seen s = {filter, n, {NULL}, 0, false};
    char what[256];
    int rc = sbx_list_labeled(k->ctx, k->provider, filter, n, on_seen, &s);

    snprintf(what, sizeof what, "sbx_list_labeled(%s%s%s)", filter[0],
             n > 1 ? ", " : "", n > 1 ? filter[1] : "");
    if (conf_expect_rc(k, c, what, SBX_OK, rc)) {
        if (seen_has(&s, a) != want_a)
            conf_fail(c, "%s: sandbox %s %s", what, a,
                      want_a ? "not listed" : "listed, though it lacks a label");
        if (seen_has(&s, b) != want_b)
            conf_fail(c, "%s: sandbox %s %s", what, b,
                      want_b ? "not listed" : "listed, though it lacks a label");
        if (s.missing_label)
            conf_fail(c, "%s: a sandbox without every filter label was listed",
                      what);
    }
    seen_free(&s);
}

/* A sandbox labelled conformance=@token and conformance.side=@side. */
static sbx_sandbox *labelled_box(conf_kit *k, conf_case *c, const char *token,
                                 const char *side)
{
    sbx_create_opts *o = conf_copts(k, c);
    sbx_sandbox *sb = NULL;
    if (o != NULL &&
        conf_set_ok(c, "sbx_create_opts_add_label",
                    sbx_create_opts_add_label(o, "conformance", token)) &&
        conf_set_ok(c, "sbx_create_opts_add_label",
                    sbx_create_opts_add_label(o, "conformance.side", side)))
        sb = conf_box(k, c, o, false);
    sbx_create_opts_free(o);
    return sb;
}

static void t_labels_filter(conf_kit *k, conf_case *c)
{
    char token[64], tok_kv[96];
    conf_token(token, sizeof token);
    snprintf(tok_kv, sizeof tok_kv, "conformance=%s", token);
    /* Values a backend's query syntax could misread. */
    sbx_sandbox *a = labelled_box(k, c, token, "a b&c=d/%20+\"x\"");
    sbx_sandbox *b = a ? labelled_box(k, c, token, "a b") : NULL;
    if (a == NULL || b == NULL)
        goto out;
    const char *ia = sbx_sandbox_id(a), *ib = sbx_sandbox_id(b);

    const char *f_a[] = {tok_kv, "conformance.side=a b&c=d/%20+\"x\""};
    expect_listed(k, c, f_a, 2, ia, true, ib, false);
    const char *f_both[] = {tok_kv};
    expect_listed(k, c, f_both, 1, ia, true, ib, true);
    const char *f_none[] = {tok_kv, "conformance.side=c"};
    expect_listed(k, c, f_none, 2, ia, false, ib, false);
    /* An empty value is a value: it matches nobody here. */
    const char *f_empty[] = {tok_kv, "conformance.side="};
    expect_listed(k, c, f_empty, 2, ia, false, ib, false);

    const char *bad[] = {"conformance"};
    int rc = sbx_list_labeled(k->ctx, k->provider, bad, 1, on_seen,
                              &(seen){bad, 1, {NULL}, 0, false});
    conf_expect_rc(k, c, "sbx_list_labeled(\"conformance\") without '='",
                   SBX_E_INVAL, rc);
out:
    if (a != NULL)
        conf_destroy(k, c, a);
    if (b != NULL)
        conf_destroy(k, c, b);
}

/* get-or-create with labels conformance=@token (and @extra=1 if given). */
static sbx_sandbox *goc(conf_kit *k, conf_case *c, const char *token,
                        const char *extra, bool want_created,
                        const char *what)
{
    sbx_create_opts *o = conf_copts(k, c);
    sbx_sandbox *sb = NULL;
    bool created = !want_created;
    if (o == NULL ||
        !conf_set_ok(c, "sbx_create_opts_add_label",
                     sbx_create_opts_add_label(o, "conformance", token)) ||
        (extra != NULL &&
         !conf_set_ok(c, "sbx_create_opts_add_label",
                      sbx_create_opts_add_label(o, extra, "1"))))
        goto out;
    int rc = sbx_sandbox_get_or_create(k->ctx, o, &sb, &created);
    if (!conf_expect_rc(k, c, what, SBX_OK, rc)) {
        sb = NULL;
        goto out;
    }
    if (created != want_created)
        conf_fail(c, "%s: created is %s, expected %s", what,
                  created ? "true" : "false", want_created ? "true" : "false");
out:
    sbx_create_opts_free(o);
    return sb;
}

static void expect_same(conf_case *c, const char *what, const sbx_sandbox *sb,
                        const char *id, bool same)
{
    const char *got = sbx_sandbox_id(sb);
    if ((strcmp(got, id) == 0) != same)
        conf_fail(c, "%s: got sandbox %s, expected %s%s", what, got,
                  same ? "" : "another than ", id);
}

static void t_get_or_create(conf_kit *k, conf_case *c)
{
    char token[64], first[SBX_ID_MAX] = "";
    sbx_sandbox *sb = NULL, *other = NULL;
    sbx_result *r = NULL;
    conf_token(token, sizeof token);

    sb = goc(k, c, token, NULL, true, "get-or-create of new labels");
    if (sb == NULL)
        goto out;
    snprintf(first, sizeof first, "%s", sbx_sandbox_id(sb));
    r = conf_exec_shell(k, c, sb, "echo kept > goc.txt");
    if (r == NULL || !conf_expect_status(c, "exec writes", SBX_RUN_OK, r))
        goto out;
    sbx_result_free(r);
    r = NULL;
    sbx_sandbox_close(sb);

    /* The same labels: the same sandbox, with its files. */
    sb = goc(k, c, token, NULL, false, "get-or-create again");
    if (sb == NULL)
        goto out;
    expect_same(c, "get-or-create again", sb, first, true);
    r = conf_exec_shell(k, c, sb, "cat goc.txt");
    if (r != NULL && conf_expect_status(c, "exec reads", SBX_RUN_OK, r))
        conf_expect_stdout(c, "the file the first handle wrote", "kept\n", r);

    /* One label more: none carries it, so a new one; asking with the
     * first label alone then matches both and gives the older. */
    other = goc(k, c, token, "conformance.more", true,
                "get-or-create with one more label");
    if (other == NULL)
        goto out;
    expect_same(c, "get-or-create with one more label", other, first, false);
    sbx_sandbox_close(sb);
    sb = goc(k, c, token, NULL, false, "get-or-create with two matches");
    if (sb == NULL)
        goto out;
    expect_same(c, "get-or-create with two matches (the oldest)", sb, first,
                true);

    /* Without a label there is nothing to find it by. */
    sbx_create_opts *o = conf_copts(k, c);
    sbx_sandbox *none = NULL;
    if (o != NULL) {
        int rc = sbx_sandbox_get_or_create(k->ctx, o, &none, NULL);
        if (rc == SBX_OK)
            conf_destroy(k, c, none);
        conf_expect_rc(k, c, "get-or-create without labels", SBX_E_INVAL, rc);
        sbx_create_opts_free(o);
    }

    /* Destroyed: the next call creates anew. */
    conf_destroy(k, c, sb);
    sb = NULL;
    conf_destroy(k, c, other);
    other = NULL;
    sb = goc(k, c, token, NULL, true, "get-or-create after destroy");
    if (sb != NULL)
        expect_same(c, "get-or-create after destroy", sb, first, false);
out:
    if (r != NULL)
        sbx_result_free(r);
    if (sb != NULL)
        conf_destroy(k, c, sb);
    if (other != NULL)
        conf_destroy(k, c, other);
}

/* ---- racing ------------------------------------------------------------------ */

#define RACE_THREADS 6

typedef struct race_arg {
    conf_kit *k;
    conf_case *c;
    const char *token;
    sbx_sandbox *sb;
    bool created;
    int rc;
} race_arg;

static void *race_worker(void *p)
{
    race_arg *a = p;
    sbx_create_opts *o = sbx_create_opts_new();
    a->rc = SBX_E_NOMEM;
    if (o != NULL && (a->k->provider == NULL ||
                      sbx_create_opts_set_provider(o, a->k->provider) == SBX_OK) &&
        (a->k->template_name == NULL ||
         sbx_create_opts_set_template(o, a->k->template_name) == SBX_OK) &&
        sbx_create_opts_add_label(o, "conformance", a->token) == SBX_OK)
        a->rc = sbx_sandbox_get_or_create(a->k->ctx, o, &a->sb, &a->created);
    sbx_create_opts_free(o);
    return NULL;
}

static void t_get_or_create_race(conf_kit *k, conf_case *c)
{
    pthread_t th[RACE_THREADS];
    race_arg args[RACE_THREADS];
    bool started[RACE_THREADS] = {false};
    char token[64];
    const char *id = NULL;
    int n_created = 0;
    conf_token(token, sizeof token);

    for (int i = 0; i < RACE_THREADS; i++) {
        args[i] = (race_arg){k, c, token, NULL, false, SBX_OK};
        started[i] = pthread_create(&th[i], NULL, race_worker, &args[i]) == 0;
        if (!started[i])
            conf_fail(c, "pthread_create failed for thread %d", i);
    }
    for (int i = 0; i < RACE_THREADS; i++) {
        if (!started[i])
            continue;
        pthread_join(th[i], NULL);
        if (args[i].rc != SBX_OK || args[i].sb == NULL) {
            conf_fail(c, "thread %d: sbx_sandbox_get_or_create returned %s", i,
                      sbx_strerror(args[i].rc));
            continue;
        }
        n_created += args[i].created;
        if (id == NULL)
            id = sbx_sandbox_id(args[i].sb);
        else if (strcmp(id, sbx_sandbox_id(args[i].sb)) != 0)
            conf_fail(c, "thread %d got sandbox %s, another thread %s", i,
                      sbx_sandbox_id(args[i].sb), id);
    }
    conf_expect_int(c, "threads that created the sandbox", 1, n_created);
    /* Every distinct sandbox made is destroyed once; the other handles
     * to it closed first. */
    bool dup[RACE_THREADS] = {false};
    for (int i = 0; i < RACE_THREADS; i++)
        for (int j = 0; args[i].sb != NULL && j < i; j++)
            if (args[j].sb != NULL &&
                strcmp(sbx_sandbox_id(args[j].sb), sbx_sandbox_id(args[i].sb)) == 0)
                dup[i] = true;
    for (int i = 0; i < RACE_THREADS; i++)
        if (dup[i])
            sbx_sandbox_close(args[i].sb);
    for (int i = 0; i < RACE_THREADS; i++)
        if (args[i].sb != NULL && !dup[i])
            conf_destroy(k, c, args[i].sb);
}

const conf_test conf_find_tests[] = {
    {"labels_filter", SBX_CAP_LABELS | SBX_CAP_LIST, t_labels_filter,
     "sbx_list_labeled lists exactly the sandboxes carrying every label"},
    {"get_or_create", SBX_CAP_LABELS | SBX_CAP_LIST | SBX_CAP_PERSISTENT,
     t_get_or_create,
     "get-or-create finds the oldest sandbox with the labels, else makes one"},
    {"get_or_create_race",
     SBX_CAP_LABELS | SBX_CAP_LIST | SBX_CAP_PERSISTENT | SBX_CAP_CONCURRENT,
     t_get_or_create_race,
     "6 threads get-or-create the same labels: one sandbox, created once"},
    {NULL, 0, NULL, NULL},
};
