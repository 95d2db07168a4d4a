/* core/eval-journal.c - the results JSONL: appended and synced per record,
 * read back by a resume
 *
 * Each record is one write() of a whole line on an O_APPEND descriptor,
 * so a run killed at any moment leaves every finished record in the file
 * and at most one torn last line, which a resume cuts off.  A syncer
 * thread puts them on disk with fdatasync() as they come (one sync covers
 * every line appended before it), so that a crash of the machine loses at
 * most the last few milliseconds' records, which a resume runs again, and
 * no worker waits for the disk (a sync took 2.4 ms on average on ext4
 * here: a seventh of a sample's time).  A fresh run replaces an existing
 * file by a new one (rename), never truncating it in place, and never
 * writes over the dataset or the samples.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "eval-int.h"

static int read_all(int fd, const char *path, char **data, size_t *len)
{
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap + 1);

    if (!buf)
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    for (;;) {
        ssize_t r;
        if (n == cap) {
            char *nb = realloc(buf, cap * 2 + 1);
            if (!nb) {
                free(buf);
                return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
            }
            buf = nb;
            cap *= 2;
        }
        r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            return core_error_set(SBX_E_IO, NULL, "%s: cannot read: %s", path, strerror(e));
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return SBX_OK;
}

static int load_line(const char *path, size_t lineno, const char *p, size_t n,
                     const sbx_eval_dataset *ds, const sbx_eval_samples *s,
                     sbx_eval_record **records, size_t *n_resumed)
{
    json_error_t jerr;
    json_t *o = json_loadb(p, n, 0, &jerr);
    sbx_eval_record *r;
    const char *why, *want;
    int rc;

    if (!o)
        return core_error_set(SBX_E_INVAL, NULL, "%s:%zu:%d: bad JSON in the results: %s",
                              path, lineno, jerr.column, jerr.text);
    rc = json_is_object(o) ? core_eval_record_from_json(o, &r, &why) : SBX_E_INVAL;
    json_decref(o);
    if (rc == SBX_E_NOMEM)
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    if (rc != SBX_OK)
        return core_error_set(SBX_E_INVAL, NULL, "%s:%zu: not a result record (%s)", path,
                              lineno, why ? why : "not an object");
    if (r->sample >= s->n || strcmp(r->task_id, (want = ds->tasks[s->v[r->sample].task].id))) {
        if (r->sample >= s->n)
            core_error_set(SBX_E_INVAL, NULL,
                           "%s:%zu: sample %zu is past the %zu samples given: these results "
                           "belong to other samples", path, lineno, r->sample, s->n);
        else
            core_error_set(SBX_E_INVAL, NULL,
                           "%s:%zu: sample %zu is task \"%s\" here but \"%s\" in the samples: "
                           "these results belong to other samples", path, lineno, r->sample,
                           r->task_id, want);
        core_eval_record_free(r);
        return SBX_E_INVAL;
    }
    /* A sandbox error is no verdict: that sample runs again.  A second
     * record of a finished sample (two runs appending) is ignored. */
    if (r->verdict == SBX_VERDICT_SANDBOX_ERROR || records[r->sample]) {
        core_eval_record_free(r);
        return SBX_OK;
    }
    records[r->sample] = r;
    (*n_resumed)++;
    return SBX_OK;
}

static int resume(core_journal *j, const sbx_eval_dataset *ds, const sbx_eval_samples *s,
                  sbx_eval_record **records, size_t *n_resumed)
{
    char *data = NULL, *p, *last_nl;
    size_t len = 0, lineno = 0;
    int rc;

    if ((rc = read_all(j->fd, j->path, &data, &len)) != SBX_OK)
        return rc;
    last_nl = len ? memrchr(data, '\n', len) : NULL;
    /* A torn last line: the run was killed while writing it. */
    if ((size_t)(last_nl ? last_nl - data + 1 : 0) != len) {
        off_t keep = last_nl ? (off_t)(last_nl - data + 1) : 0;
        if (ftruncate(j->fd, keep) != 0) {
            int e = errno;
            free(data);
            return core_error_set(SBX_E_IO, NULL, "%s: cannot cut off the torn last line: %s",
                                  j->path, strerror(e));
        }
        len = (size_t)keep;
    }
    for (p = data; rc == SBX_OK && p < data + len;) {
        char *nl = memchr(p, '\n', (size_t)(data + len - p));
        lineno++;
        if (nl > p)
            rc = load_line(j->path, lineno, p, (size_t)(nl - p), ds, s, records, n_resumed);
        p = nl + 1;
    }
    free(data);
    return rc;
}

static void *syncer(void *arg)
{
    core_journal *j = arg;

    pthread_mutex_lock(&j->mu);
    for (;;) {
        unsigned long target = j->written;
        int r, e;
        if (target == j->synced) {
            if (j->stop)
                break;
            pthread_cond_wait(&j->cv, &j->mu);
            continue;
        }
        pthread_mutex_unlock(&j->mu);
        r = fdatasync(j->fd);
        e = errno;
        pthread_mutex_lock(&j->mu);
        if (r != 0 && e != EINVAL) {   /* EINVAL: a file that cannot be synced */
            j->sync_errno = e;
            break;
        }
        j->synced = target;
    }
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

static int start_syncer(core_journal *j)
{
    int e;

    if (pthread_mutex_init(&j->mu, NULL) != 0)
        return core_error_set(SBX_E_INTERNAL, NULL, "cannot initialise a mutex");
    if (pthread_cond_init(&j->cv, NULL) != 0) {
        pthread_mutex_destroy(&j->mu);
        return core_error_set(SBX_E_INTERNAL, NULL, "cannot initialise a condition variable");
    }
    j->sync_init = true;
    if ((e = pthread_create(&j->syncer, NULL, syncer, j)) != 0)
        return core_error_set(SBX_E_IO, NULL, "%s: cannot start the thread that syncs the "
                              "results: %s", j->path, strerror(e));
    j->syncing = true;
    return SBX_OK;
}

/* Stop the syncer (after its last sync) and wait for it. */
static void stop_syncer(core_journal *j)
{
    if (!j->syncing)
        return;
    pthread_mutex_lock(&j->mu);
    j->stop = true;
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->mu);
    pthread_join(j->syncer, NULL);
    j->syncing = false;
}

/* SBX_E_INVAL when @path is the dataset's or the samples' file (the same
 * inode, through any link): the results would overwrite the input. */
static int not_input(const char *path, const sbx_eval_dataset *ds, const sbx_eval_samples *s)
{
    struct stat st;

    if (stat(path, &st) != 0)
        return SBX_OK;
    if (st.st_dev == ds->file.dev && st.st_ino == ds->file.ino)
        return core_error_set(SBX_E_INVAL, NULL, "%s: the results file is the dataset %s "
                              "(the same file): it would be overwritten", path, ds->path);
    if (!s->canonical && st.st_dev == s->file.dev && st.st_ino == s->file.ino)
        return core_error_set(SBX_E_INVAL, NULL, "%s: the results file is the samples file "
                              "(the same file): it would be overwritten", path);
    return SBX_OK;
}

/* A fresh, empty results file at @path: made beside it under another
 * name, then renamed over it, so an existing file is replaced whole and
 * never truncated in place (its other links keep what it held).  A path
 * that is not a regular file (/dev/null, a pipe) is written as it is. */
static int open_fresh(const char *path)
{
    static const char hex[] = "0123456789abcdef";
    const char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path + 1) : 0;
    struct stat st;
    char *tmp;
    int fd = -1;

    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (!(tmp = malloc(strlen(path) + 32))) {
        errno = ENOMEM;
        return -1;
    }
    for (int tries = 0; fd < 0 && tries < 16; tries++) {
        unsigned char r[8];
        char *p;
        if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
            break;
        p = tmp + sprintf(tmp, "%.*s.%s.", (int)dir, path, path + dir);
        for (size_t i = 0; i < sizeof r; i++) {
            *p++ = hex[r[i] >> 4];
            *p++ = hex[r[i] & 15];
        }
        *p = '\0';
        fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd >= 0 && rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        close(fd);
        fd = -1;
        errno = e;
    }
    free(tmp);
    return fd;
}

int core_journal_open(core_journal *j, const char *path, bool resume_it,
                      const sbx_eval_dataset *ds, const sbx_eval_samples *s,
                      sbx_eval_record **records, size_t *n_resumed)
{
    int rc;

    *n_resumed = 0;
    memset(j, 0, sizeof *j);
    j->fd = -1;
    if ((rc = not_input(path, ds, s)) != SBX_OK)
        return rc;
    if (!(j->path = strdup(path)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    j->fd = resume_it ? open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644)
                      : open_fresh(path);
    if (j->fd < 0) {
        rc = core_error_set(SBX_E_IO, NULL, "%s: cannot open the results file: %s", path,
                            strerror(errno));
        core_journal_close(j);
        return rc;
    }
    if ((resume_it && (rc = resume(j, ds, s, records, n_resumed)) != SBX_OK) ||
        (rc = start_syncer(j)) != SBX_OK) {
        core_journal_close(j);
        return rc;
    }
    return SBX_OK;
}

/* SBX_E_IO when a sync failed, else SBX_OK.  Under j->mu. */
static int sync_error(const core_journal *j)
{
    if (!j->sync_errno)
        return SBX_OK;
    return core_error_set(SBX_E_IO, NULL, "%s: cannot sync: %s", j->path,
                          strerror(j->sync_errno));
}

int core_journal_sync(core_journal *j)
{
    int rc;

    stop_syncer(j);
    pthread_mutex_lock(&j->mu);
    rc = sync_error(j);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

int core_journal_append(core_journal *j, const sbx_eval_record *r)
{
    char *line = sbx_eval_record_to_json(r);
    size_t len, off = 0;
    int rc;

    if (!line)
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    len = strlen(line);
    line[len++] = '\n';   /* replaces the NUL: the whole line in one write */
    while (off < len) {
        ssize_t w = write(j->fd, line + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            int e = errno;
            free(line);
            return core_error_set(SBX_E_IO, NULL, "%s: cannot write a result: %s", j->path,
                                  strerror(e));
        }
        off += (size_t)w;
    }
    free(line);
    pthread_mutex_lock(&j->mu);
    j->written++;
    pthread_cond_signal(&j->cv);
    rc = sync_error(j);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

void core_journal_close(core_journal *j)
{
    stop_syncer(j);
    if (j->sync_init) {
        pthread_cond_destroy(&j->cv);
        pthread_mutex_destroy(&j->mu);
        j->sync_init = false;
    }
    if (j->fd >= 0)
        close(j->fd);
    j->fd = -1;
    free(j->path);
    j->path = NULL;
}
