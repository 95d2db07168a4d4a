/* core/artifacts.c - the files a template's artifacts directory holds
 * after a run, brought back with the result
 *
 * The directory is listed with sbx_sandbox_list_files (a command inside
 * the sandbox, lstat semantics) and each regular file read with the
 * provider's download op, which never follows a link the sandbox made.
 * Nothing is dropped silently: what is not kept is listed with why.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "result-int.h"

/* Entries looked at in the directory; more are left out and said so. */
#define ARTIFACTS_MAX_ENTRIES 1000u

typedef struct entry {
    char *name;
    sbx_file_type type;
    uint64_t size;
} entry;

typedef struct listing {
    entry *v;
    size_t n;
} listing;

static int list_one(void *ud, const char *name, size_t name_len, sbx_file_type type,
                    uint64_t size, int64_t mtime_unix)
{
    listing *l = ud;
    entry *nv = realloc(l->v, (l->n + 1) * sizeof *nv);

    (void)mtime_unix;
    if (!nv)
        return SBX_E_NOMEM;
    l->v = nv;
    if (!(nv[l->n].name = strndup(name, name_len)))
        return SBX_E_NOMEM;
    nv[l->n].type = type;
    nv[l->n].size = size;
    l->n++;
    return 0;
}

/* The MIME type of @data by its first bytes: a small table of ours. */
static const char *guess_mime(const unsigned char *d, size_t n)
{
    static const struct { const char *magic; size_t len; const char *mime; } tab[] = {
        { "\x89PNG\r\n\x1a\n", 8, "image/png" },
        { "\xff\xd8\xff", 3, "image/jpeg" },
        { "GIF87a", 6, "image/gif" },
        { "GIF89a", 6, "image/gif" },
        { "%PDF-", 5, "application/pdf" },
    };
    size_t i = 0;
    json_t *j;

    for (size_t k = 0; k < sizeof tab / sizeof tab[0]; k++)
        if (n >= tab[k].len && !memcmp(d, tab[k].magic, tab[k].len))
            return tab[k].mime;
    if (n == 0 || memchr(d, '\0', n))
        return "application/octet-stream";
    /* Text is valid UTF-8 with no NUL; JSON is text that parses as JSON. */
    if (!(j = json_stringn((const char *)d, n)))
        return "application/octet-stream";
    json_decref(j);
    while (i < n && (d[i] == ' ' || d[i] == '\n' || d[i] == '\r' || d[i] == '\t'))
        i++;
    if (i < n && (d[i] == '{' || d[i] == '[') &&
        (j = json_loadb((const char *)d, n, JSON_DECODE_ANY, NULL))) {
        json_decref(j);
        return "application/json";
    }
    return "text/plain";
}

static int add(sbx_result *r, const char *path, uint64_t size, const char *mime,
               unsigned char *data, const char *why)
{
    core_artifact *nv = realloc(r->artifacts, (r->n_artifacts + 1) * sizeof *nv);
    core_artifact *a;

    if (!nv) {
        free(data);
        return SBX_E_NOMEM;
    }
    r->artifacts = nv;
    a = &nv[r->n_artifacts];
    *a = (core_artifact){ strdup(path), size, mime, data, why ? strdup(why) : NULL };
    r->n_artifacts++;
    if (!a->path || (why && !a->why))
        return SBX_E_NOMEM;
    return SBX_OK;
}

/* Keep, or leave out with a reason, one entry of the listing. */
static int take(sbx_sandbox *sb, const core_template_conf *t, sbx_result *r, const entry *e,
                uint64_t *total)
{
    char why[320], *path;
    void *data = NULL;
    size_t len = 0;
    json_t *utf8 = json_string(e->name);
    int rc;

    if (!utf8)
        return add(r, "(a name that is not UTF-8)", e->size, NULL, NULL,
                   "its name is not valid UTF-8");
    json_decref(utf8);
    if (e->type == SBX_FILE_DIRECTORY)
        return add(r, e->name, 0, NULL, NULL,
                   "a directory: only the files at the top of artifacts are collected");
    if (e->type == SBX_FILE_SYMLINK)
        return add(r, e->name, e->size, NULL, NULL, "a symbolic link: links are not followed");
    if (e->type != SBX_FILE_REGULAR)
        return add(r, e->name, e->size, NULL, NULL, "not a regular file");
    if (e->size > t->artifacts_max_file) {
        snprintf(why, sizeof why, "larger than artifacts_max_file (%llu bytes)",
                 (unsigned long long)t->artifacts_max_file);
        return add(r, e->name, e->size, NULL, NULL, why);
    }
    if (e->size > t->artifacts_max_total - *total) {
        snprintf(why, sizeof why, "over artifacts_max_total (%llu bytes for all files)",
                 (unsigned long long)t->artifacts_max_total);
        return add(r, e->name, e->size, NULL, NULL, why);
    }
    if (asprintf(&path, "%s/%s", t->artifacts, e->name) < 0)
        return SBX_E_NOMEM;
    /* The caps again, should the file have grown since it was listed. */
    uint64_t max = t->artifacts_max_total - *total;
    if (max > t->artifacts_max_file)
        max = t->artifacts_max_file;
    rc = sbx_sandbox_download(sb, path, (size_t)max, &data, &len);
    free(path);
    if (rc == SBX_E_NOMEM)
        return rc;
    if (rc != SBX_OK) {
        snprintf(why, sizeof why, "could not be read: %s", sbx_error_message(sbx_ctx_last_error(NULL)));
        return add(r, e->name, e->size, NULL, NULL, why);
    }
    *total += len;
    return add(r, e->name, len, guess_mime(data, len), data, NULL);
}

int core_artifacts_collect(sbx_sandbox *sb, const core_template_conf *t, sbx_result *r)
{
    listing l = {0};
    bool more = false;
    uint64_t total = 0;
    char why[320];
    int rc = sbx_sandbox_list_files(sb, t->artifacts, ARTIFACTS_MAX_ENTRIES, list_one, &l,
                                    &more);

    if (rc == SBX_E_NOT_FOUND) {
        rc = SBX_OK;    /* the program wrote none */
    } else if (rc != SBX_OK && rc != SBX_E_NOMEM) {
        snprintf(why, sizeof why, "the directory could not be listed: %s",
                 sbx_error_message(sbx_ctx_last_error(NULL)));
        rc = add(r, ".", 0, NULL, NULL, why);
    }
    for (size_t i = 0; rc == SBX_OK && i < l.n; i++)
        rc = take(sb, t, r, &l.v[i], &total);
    if (rc == SBX_OK && more)
        rc = add(r, "...", 0, NULL, NULL, "more than 1000 entries: the rest were not looked at");
    for (size_t i = 0; i < l.n; i++)
        free(l.v[i].name);
    free(l.v);
    return rc == SBX_OK ? rc : core_error_set(SBX_E_NOMEM, NULL, "out of memory");
}

void core_artifacts_free(sbx_result *r)
{
    for (size_t i = 0; i < r->n_artifacts; i++) {
        free(r->artifacts[i].path);
        free(r->artifacts[i].data);
        free(r->artifacts[i].why);
    }
    free(r->artifacts);
    r->artifacts = NULL;
    r->n_artifacts = 0;
}

size_t sbx_result_artifact_count(const sbx_result *r)
{
    return r ? r->n_artifacts : 0;
}

const char *sbx_result_artifact(const sbx_result *r, size_t i, const void **data, size_t *len,
                                const char **mime, const char **left_out)
{
    const core_artifact *a = r && i < r->n_artifacts ? &r->artifacts[i] : NULL;

    if (data)
        *data = a && a->data ? a->data : a && !a->why ? (const void *)"" : NULL;
    if (len)
        *len = a ? (size_t)a->size : 0;
    if (mime)
        *mime = a ? a->mime : NULL;
    if (left_out)
        *left_out = a ? a->why : NULL;
    return a ? a->path : NULL;
}
