/* core/server/compat-judge0-cbfile.c - the Judge0 callbacks' files: a
 * callback not yet delivered is kept in [server] state_dir as
 *
 *   judge0-callbacks/TOKEN.json
 *     {"token", "url", "body", "created", "tries", "next"}
 *
 * ("tries": the tries made that got no answer, "next": when the next
 * one is due, so a restart does not grant fresh tries) written atomically (a temporary file synced, then renamed, then the
 * directory synced, as a job's files: jobs-store.c) before it is queued,
 * again after each try that got no answer, and removed once it is
 * delivered or given up; so a server killed at
 * any moment finds at its next start every callback still owed, and
 * sends it again (at least once: one whose PUT was under way may come
 * twice).  What is read back is treated as hostile: a file that is not
 * a callback's is reported and left as it is, never sent.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compat-judge0.h"
#include "jobs.h"

#define CB_SUFFIX ".json"
/* A file bigger than this is no callback of ours (a body is a
 * submission's default fields, each bounded by the store's bytes). */
#define CB_FILE_MAX (SRV_J0_KEEP_BYTES * 2)

char *srv_j0_cb_dir(const srv *s)
{
    char *base = job_state_dir(s), *dir = base ? job_path(base, "judge0-callbacks") : NULL;

    free(base);
    if (!dir) {
        srv_log(NULL, "Judge0 callbacks: out of memory; they are not durable");
        return NULL;
    }
    if (job_make_dirs(dir) != 0 || access(dir, R_OK | W_OK | X_OK) != 0) {
        srv_log(NULL, "Judge0 callbacks: cannot use %s (%s); they are not durable (set "
                "[server] state_dir)", dir, strerror(errno));
        free(dir);
        return NULL;
    }
    return dir;
}

/* Whether @name is TOKEN.json with a token as ours (a UUID's characters):
 * never a path that leads elsewhere. */
static bool cb_name(const char *name, char token[SRV_J0_TOKEN_LEN + 1])
{
    if (strlen(name) != SRV_J0_TOKEN_LEN + strlen(CB_SUFFIX) ||
        strcmp(name + SRV_J0_TOKEN_LEN, CB_SUFFIX) != 0)
        return false;
    for (int i = 0; i < SRV_J0_TOKEN_LEN; i++)
        if (!strchr("0123456789abcdef-", name[i]))
            return false;
    memcpy(token, name, SRV_J0_TOKEN_LEN);
    token[SRV_J0_TOKEN_LEN] = '\0';
    return true;
}

int srv_j0_cb_save(const char *dir, const srv_j0_cbrec *r)
{
    char name[SRV_J0_TOKEN_LEN + sizeof CB_SUFFIX];
    json_t *j = json_pack("{s:s, s:s, s:s, s:f, s:i, s:f}", "token", r->token, "url", r->url,
                          "body", r->body, "created", r->created, "tries", (json_int_t)r->tries,
                          "next", r->next);
    int rc;

    if (!j) {
        errno = ENOMEM;
        return -1;
    }
    snprintf(name, sizeof name, "%s%s", r->token, CB_SUFFIX);
    rc = job_write_json(dir, name, j);
    json_decref(j);
    return rc;
}

void srv_j0_cb_forget(const char *dir, const char *token)
{
    char *path = NULL;

    /* Not synced: a removal lost to a crash sends the callback again,
     * which at least once allows. */
    if (asprintf(&path, "%s/%s%s", dir, token, CB_SUFFIX) < 0)
        return;
    if (unlink(path) != 0 && errno != ENOENT)
        srv_log(NULL, "Judge0 submission %s: cannot remove %s: %s (its callback may be "
                "sent again at the next start)", token, path, strerror(errno));
    free(path);
}

static bool body_ok(const char *b)
{
    json_t *parsed = json_loads(b, JSON_REJECT_DUPLICATES, NULL);
    bool ok = json_is_object(parsed);

    json_decref(parsed);
    return ok;
}

/* A time read back: a number, 0 when there is none. */
static bool time_ok(const json_t *t)
{
    return !t || (json_is_number(t) && json_number_value(t) >= 0 && json_number_value(t) < 1e11);
}

int srv_j0_cb_read(const char *dir, const char *token, srv_j0_cbrec *r, char *why,
                   size_t why_size)
{
    char name[SRV_J0_TOKEN_LEN + sizeof CB_SUFFIX], *path;
    const char *u, *b, *bad;
    const json_t *tries, *created, *next;
    struct stat st;
    json_t *j = NULL;
    bool gone = false;
    int rc = -1;

    memset(r, 0, sizeof *r);
    why[0] = '\0';
    snprintf(name, sizeof name, "%s%s", token, CB_SUFFIX);
    if (!(path = job_path(dir, name))) {
        snprintf(why, why_size, "out of memory");
        return -1;
    }
    if (lstat(path, &st) != 0) {
        gone = errno == ENOENT;
        snprintf(why, why_size, "%s", strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        snprintf(why, why_size, "not a regular file");
    } else if (st.st_size > (off_t)CB_FILE_MAX) {
        snprintf(why, why_size, "%lld bytes: more than a callback's", (long long)st.st_size);
    } else if (!(j = job_read_json(dir, name, why, why_size)) && !why[0]) {
        gone = errno == ENOENT;
        snprintf(why, why_size, "%s", strerror(errno));
    }
    free(path);
    if (!j)
        return gone ? -2 : -1;
    u = json_string_value(json_object_get(j, "url"));
    b = json_string_value(json_object_get(j, "body"));
    tries = json_object_get(j, "tries");   /* (none in a file of 0.x: no try counted) */
    created = json_object_get(j, "created");
    next = json_object_get(j, "next");
    if (strcmp(json_string_value(json_object_get(j, "token")) ?: "", token) != 0)
        snprintf(why, why_size, "its \"token\" is not its name's");
    else if (!u || strlen(u) > SRV_J0_CB_URL_MAX || !srv_j0_cb_url_ok(u, &bad))
        snprintf(why, why_size, "its \"url\" is not an http(s) URL");
    else if (!b || !body_ok(b))
        snprintf(why, why_size, "its \"body\" is not a JSON object's text");
    else if (tries && (!json_is_integer(tries) || json_integer_value(tries) < 0 ||
                       json_integer_value(tries) > SRV_J0_CB_TRIES))
        snprintf(why, why_size, "its \"tries\" is not a count of 0 to %d", SRV_J0_CB_TRIES);
    else if (!time_ok(created) || !time_ok(next))
        snprintf(why, why_size, "its \"created\" or \"next\" is not a time");
    else if (!(r->url = strdup(u)) || !(r->body = strdup(b))) {
        free(r->url);
        r->url = NULL;
        snprintf(why, why_size, "out of memory");
    } else {
        memcpy(r->token, token, sizeof r->token);
        r->tries = (unsigned)json_integer_value(tries);
        r->created = created ? json_number_value(created) : 0;
        r->next = next ? json_number_value(next) : 0;
        rc = 0;
    }
    json_decref(j);
    return rc;
}

/* A callback's file found at start: its token and when it was written. */
struct found {
    char token[SRV_J0_TOKEN_LEN + 1];
    struct timespec mtime;
};

static int older(const void *a, const void *b)
{
    const struct found *x = a, *y = b;

    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec)
        return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
    return strcmp(x->token, y->token);
}

size_t srv_j0_cb_load(const char *dir, size_t max, srv_j0_cb_each each, void *ud)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    struct found *all = NULL;
    size_t n = 0, cap = 0, taken = 0, bad = 0, left = 0;

    if (!d) {
        srv_log(NULL, "Judge0 callbacks: cannot read %s: %s", dir, strerror(errno));
        return 0;
    }
    while ((e = readdir(d))) {
        char token[SRV_J0_TOKEN_LEN + 1];
        struct stat st;
        if (e->d_name[0] == '.') {
            /* A temporary file of a write a kill cut short: never renamed,
             * so never a callback (its submission's reply was not sent). */
            if (job_is_tmp_name(e->d_name) && unlinkat(dirfd(d), e->d_name, 0) == 0)
                srv_log(NULL, "Judge0 callbacks: removed %s/%s (a write cut short)", dir,
                        e->d_name);
            continue;
        }
        if (!cb_name(e->d_name, token)) {
            srv_log(NULL, "Judge0 callbacks: %s/%s is not a callback's file; left as it is",
                    dir, e->d_name);
            bad++;
            continue;
        }
        /* (what it is is checked when it is read, srv_j0_cb_read) */
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;   /* gone meanwhile */
        if (n == cap) {
            struct found *more = realloc(all, (cap = cap ? cap * 2 : 64) * sizeof *all);
            if (!more) {
                srv_log(NULL, "Judge0 callbacks: out of memory reading %s; the others are "
                        "left for the next start", dir);
                break;
            }
            all = more;
        }
        memcpy(all[n].token, token, sizeof token);
        all[n++].mtime = st.st_mtim;
    }
    closedir(d);
    if (n)
        qsort(all, n, sizeof *all, older);
    for (size_t i = 0; i < n; i++) {
        if (taken == max)
            left++;
        else if (each(ud, all[i].token) == 0)
            taken++;
    }
    free(all);
    if (taken || bad || left)
        srv_log(NULL, "Judge0 callbacks: %zu kept in %s to send; %zu left as they are, %zu "
                "for a later start (past [server] judge0_callbacks_kept)", taken, dir, bad,
                left);
    return taken;
}
