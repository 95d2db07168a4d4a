/* core/run/artifacts.c - the files a template's artifacts directory holds
 * after a run, brought back with the result
 *
 * The directory and its subdirectories are listed with
 * sbx_sandbox_list_files (a command inside the sandbox, lstat semantics:
 * a link to a directory is never walked into) and each regular file read
 * with the provider's download op, which never follows a link the
 * sandbox made.  A file's path is its names below the directory joined
 * with '/' ("plots/a.png").  Nothing is dropped silently: what is not
 * kept is listed with why.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <polysandbox/sandbox.h>

#include "result-int.h"
#include "error.h"
#include "conf.h"
#include "run/artifacts.h"

/* Entries looked at in the whole tree; more are left out and said so. */
#define ARTIFACTS_MAX_ENTRIES 1000u
#define ARTIFACTS_MAX_ENTRIES_S "1000"
/* Levels of directories walked: the top is level 1, so a file's path has
 * at most this many names.  Deeper directories are left out, said so. */
#define ARTIFACTS_MAX_DEPTH 8u
#define ARTIFACTS_MAX_DEPTH_S "8"

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

/* The walk of the artifacts tree: what every directory shares. */
typedef struct walk {
    sbx_sandbox *sb;
    const core_template_conf *t;
    sbx_result *r;
    uint64_t total;     /* bytes kept so far */
    size_t seen;        /* entries listed so far, over the whole tree */
    bool more;          /* some were not listed: ARTIFACTS_MAX_ENTRIES */
} walk;

/* @rel joined to @name with a '/' ("" joins to nothing); NULL on ENOMEM. */
static char *join(const char *rel, const char *name)
{
    char *s;

    if (asprintf(&s, "%s%s%s", rel, *rel ? "/" : "", name) < 0)
        return NULL;
    return s;
}

/* Why the name @e->name may not come back as a path, or NULL when it may:
 * it goes into JSON, a terminal and the caller's file system, so it must
 * be UTF-8 without control characters (C0, DEL, C1).  The sandbox's
 * listing already has no '/', "." or "..". *@shown is the name to report
 * (transfer full): a placeholder, or the name with '?' for each control
 * character. */
static const char *name_unsafe(const entry *e, char **shown)
{
    json_t *utf8 = json_string(e->name);
    const unsigned char *u = (const unsigned char *)e->name;
    size_t j = 0;
    bool control = false;

    *shown = NULL;
    if (!utf8) {
        *shown = strdup("(a name that is not UTF-8)");
        return "its name is not valid UTF-8";
    }
    json_decref(utf8);
    if (!(*shown = malloc(strlen(e->name) + 1)))
        return "out of memory";
    for (size_t i = 0; u[i]; i++) {
        bool c1 = u[i] == 0xc2 && u[i + 1] >= 0x80 && u[i + 1] <= 0x9f;
        if (u[i] < 0x20 || u[i] == 0x7f || c1) {
            control = true;
            (*shown)[j++] = '?';
            i += c1;
        } else {
            (*shown)[j++] = (char)u[i];
        }
    }
    (*shown)[j] = '\0';
    if (control)
        return "its name holds a control character";
    free(*shown);
    *shown = NULL;
    return NULL;
}

/* Keep, or leave out with a reason, the regular file @e at @path (below
 * the artifacts directory). */
static int take(walk *w, const entry *e, const char *path)
{
    const core_template_conf *t = w->t;
    sbx_result *r = w->r;
    char why[320], *full;
    void *data = NULL;
    size_t len = 0;
    int rc;

    if (e->size > t->artifacts_max_file) {
        snprintf(why, sizeof why, "larger than artifacts_max_file (%llu bytes)",
                 (unsigned long long)t->artifacts_max_file);
        return add(r, path, e->size, NULL, NULL, why);
    }
    if (e->size > t->artifacts_max_total - w->total) {
        snprintf(why, sizeof why, "over artifacts_max_total (%llu bytes for all files)",
                 (unsigned long long)t->artifacts_max_total);
        return add(r, path, e->size, NULL, NULL, why);
    }
    if (!(full = join(t->artifacts, path)))
        return SBX_E_NOMEM;
    /* The caps again, should the file have grown since it was listed. */
    uint64_t max = t->artifacts_max_total - w->total;
    if (max > t->artifacts_max_file)
        max = t->artifacts_max_file;
    rc = sbx_sandbox_download(w->sb, full, (size_t)max, &data, &len);
    free(full);
    if (rc == SBX_E_NOMEM)
        return rc;
    if (rc != SBX_OK) {
        snprintf(why, sizeof why, "could not be read: %s", sbx_error_message(sbx_ctx_last_error(NULL)));
        return add(r, path, e->size, NULL, NULL, why);
    }
    w->total += len;
    return add(r, path, len, guess_mime(data, len), data, NULL);
}

static int walk_dir(walk *w, const char *rel, unsigned depth);

/* One entry of the directory @rel (@depth levels below the top). */
static int walk_entry(walk *w, const char *rel, unsigned depth, const entry *e)
{
    char *shown, *path;
    const char *why = name_unsafe(e, &shown);
    int rc;

    if (why) {
        path = shown ? join(rel, shown) : NULL;
        rc = path ? add(w->r, path, e->size, NULL, NULL, why) : SBX_E_NOMEM;
        free(path);
        free(shown);
        return rc;
    }
    if (!(path = join(rel, e->name)))
        return SBX_E_NOMEM;
    if (e->type == SBX_FILE_DIRECTORY && depth + 1 >= ARTIFACTS_MAX_DEPTH)
        rc = add(w->r, path, 0, NULL, NULL, "a directory deeper than "
                 ARTIFACTS_MAX_DEPTH_S " levels: its files are not collected");
    else if (e->type == SBX_FILE_DIRECTORY)
        rc = walk_dir(w, path, depth + 1);
    else if (e->type == SBX_FILE_SYMLINK)
        rc = add(w->r, path, e->size, NULL, NULL, "a symbolic link: links are not followed");
    else if (e->type != SBX_FILE_REGULAR)
        rc = add(w->r, path, e->size, NULL, NULL, "not a regular file");
    else
        rc = take(w, e, path);
    free(path);
    return rc;
}

/* List the directory @rel of the artifacts tree ("" for the top) and
 * take its entries in the listing's order, a subdirectory's files where
 * it is listed; at most ARTIFACTS_MAX_ENTRIES entries in all. */
static int walk_dir(walk *w, const char *rel, unsigned depth)
{
    listing l = {0};
    bool more = false;
    char why[320], *dir;
    int rc;

    if (w->seen >= ARTIFACTS_MAX_ENTRIES) {
        w->more = true;
        return SBX_OK;
    }
    if (!(dir = join(w->t->artifacts, rel)))
        return SBX_E_NOMEM;
    rc = sbx_sandbox_list_files(w->sb, dir, ARTIFACTS_MAX_ENTRIES - w->seen, list_one, &l,
                                &more);
    free(dir);
    if (rc == SBX_E_NOT_FOUND && !*rel) {
        rc = SBX_OK;    /* the program wrote none */
    } else if (rc != SBX_OK && rc != SBX_E_NOMEM) {
        snprintf(why, sizeof why, "the directory could not be listed: %s",
                 sbx_error_message(sbx_ctx_last_error(NULL)));
        rc = add(w->r, *rel ? rel : ".", 0, NULL, NULL, why);
    }
    w->seen += l.n;
    w->more |= more;
    for (size_t i = 0; rc == SBX_OK && i < l.n; i++)
        rc = walk_entry(w, rel, depth, &l.v[i]);
    for (size_t i = 0; i < l.n; i++)
        free(l.v[i].name);
    free(l.v);
    return rc;
}

int core_artifacts_collect(sbx_sandbox *sb, const core_template_conf *t, sbx_result *r)
{
    walk w = { sb, t, r, 0, 0, false };
    int rc = walk_dir(&w, "", 0);

    if (rc == SBX_OK && w.more)
        rc = add(r, "...", 0, NULL, NULL, "more than " ARTIFACTS_MAX_ENTRIES_S
                 " entries: the rest were not looked at");
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
