/* core/server/jobs-store.c - a job's files: written atomically and
 * synced, so a server killed at any moment finds each whole or absent
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jobs.h"

char *job_path(const char *dir, const char *name)
{
    char *p;

    return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

char *job_tmp_path(const char *dir, const char *name)
{
    char *p;

    return asprintf(&p, "%s/.%s.tmp", dir, name) < 0 ? NULL : p;
}

bool job_is_tmp_name(const char *file)
{
    size_t len = strlen(file);

    return file[0] == '.' && len > 4 && !strcmp(file + len - 4, ".tmp");
}

static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;

    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

static int sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc;

    if (fd < 0)
        return -1;
    rc = fsync(fd);
    close(fd);
    return rc;
}

int job_write_file(const char *dir, const char *name, const void *data, size_t len)
{
    char *path = job_path(dir, name);
    int fd, e;

    if (!path) {
        errno = ENOMEM;
        return -1;
    }
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    free(path);
    if (fd < 0)
        return -1;
    if (write_all(fd, data, len) != 0 || fsync(fd) != 0) {
        e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return close(fd);
}

int job_copy_file(int fd, const char *dir, const char *name)
{
    char *path = job_path(dir, name), *buf = malloc(1u << 20);
    int out = -1, rc = JOB_COPY_WRITE, e = ENOMEM;

    if (!path || !buf)
        goto done;
    if ((out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0) {
        e = errno;
        goto done;
    }
    for (;;) {
        ssize_t n = read(fd, buf, 1u << 20);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            e = errno;
            rc = JOB_COPY_READ;
            goto done;
        }
        if (n == 0)
            break;
        if (write_all(out, buf, (size_t)n) != 0) {
            e = errno;
            goto done;
        }
    }
    if (fsync(out) != 0) {
        e = errno;
        goto done;
    }
    rc = 0;
done:
    if (out >= 0 && close(out) != 0 && rc == 0) {
        e = errno;
        rc = JOB_COPY_WRITE;
    }
    free(buf);
    free(path);
    if (rc)
        errno = e;
    return rc;
}

int job_write_json(const char *dir, const char *name, json_t *j)
{
    char *text = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17));
    char *tmp = NULL, *path = job_path(dir, name);
    int rc = -1, e = ENOMEM;
    size_t len;

    if (!text || !path || !(tmp = job_tmp_path(dir, name)))
        goto out;
    len = strlen(text);
    text[len++] = '\n';   /* replaces the NUL: the file ends with a newline */
    {
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) {
            e = errno;
            goto out;
        }
        if (write_all(fd, text, len) != 0 || fsync(fd) != 0) {
            e = errno;
            close(fd);
            unlink(tmp);
            goto out;
        }
        close(fd);
    }
    if (rename(tmp, path) != 0 || sync_dir(dir) != 0) {
        e = errno;
        unlink(tmp);
        goto out;
    }
    rc = 0;
out:
    free(text);
    free(tmp);
    free(path);
    if (rc)
        errno = e;
    return rc;
}

json_t *job_read_json(const char *dir, const char *name, char *why, size_t why_size)
{
    char *path = job_path(dir, name);
    json_error_t err;
    json_t *j;

    why[0] = '\0';
    if (!path) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    if (access(path, F_OK) != 0) {
        free(path);
        errno = ENOENT;
        return NULL;
    }
    j = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
    if (!j)
        snprintf(why, why_size, "%s:%d: %s", path, err.line, err.text);
    else if (!json_is_object(j)) {
        snprintf(why, why_size, "%s: not a JSON object", path);
        json_decref(j);
        j = NULL;
    }
    free(path);
    errno = EINVAL;
    return j;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return (flag == FTW_DP ? rmdir(path) : unlink(path)) != 0 && errno != ENOENT ? -1 : 0;
}

int job_remove_dir(const char *dir)
{
    return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

char *job_read_line(const srv_job *j, uint64_t off, uint32_t len)
{
    char *buf = malloc((size_t)len + 1);
    size_t got = 0;

    if (!buf || j->results_fd < 0) {
        free(buf);
        return NULL;
    }
    while (got < len) {
        ssize_t r = pread(j->results_fd, buf + got, len - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            free(buf);
            return NULL;
        }
        got += (size_t)r;
    }
    buf[len] = '\0';
    return buf;
}

/* mkdir -p, 0700 for what it makes. */
int job_make_dirs(const char *path)
{
    char *p = strdup(path);

    if (!p)
        return -1;
    for (char *c = p + 1; *c; c++) {
        if (*c != '/')
            continue;
        *c = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST) {
            free(p);
            return -1;
        }
        *c = '/';
    }
    free(p);
    return mkdir(path, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

char *job_state_dir(const srv *s)
{
    const char *sd = getenv("STATE_DIRECTORY"), *x = getenv("XDG_STATE_HOME");
    const char *home = getenv("HOME");
    char *d = NULL;
    int n = -1;

    if (s->conf.state_dir)
        return strdup(s->conf.state_dir);
    if (sd && sd[0] == '/')      /* systemd's StateDirectory= (the first one) */
        n = asprintf(&d, "%.*s/server", (int)strcspn(sd, ":"), sd);
    else if (x && x[0] == '/')   /* where XDG says state goes, root's too */
        n = asprintf(&d, "%s/polysandbox/server", x);
    else if (geteuid() == 0)
        return strdup(STATEDIR "/server");
    else if (home && home[0] == '/')
        n = asprintf(&d, "%s/.local/state/polysandbox/server", home);
    else
        n = asprintf(&d, "/tmp/polysandbox-%u/server", (unsigned)geteuid());
    return n < 0 ? NULL : d;
}
