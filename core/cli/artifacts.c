/* core/cli/artifacts.c - run --artifacts DIR: the result's artifacts saved
 * under DIR
 *
 * A name is a relative path of plain names ("plots/a.png"), checked again
 * here with the library's rule (sbx_path_check).  Its
 * directories are made (or opened) one at a time beneath DIR with
 * O_NOFOLLOW, and the file created with O_EXCL | O_NOFOLLOW, so nothing
 * is written outside DIR, even through a link that is already there, and
 * nothing that exists is overwritten.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* The directory of @name's path beneath @dfd, made where missing, never
 * through a link; *@base is set to its last name.  Returns a descriptor
 * (close it) or -1 with errno set. */
static int open_parent(int dfd, char *name, const char **base)
{
    int fd = dup(dfd);
    char *p = name, *slash;

    while (fd >= 0 && (slash = strchr(p, '/'))) {
        int sub;
        *slash = '\0';
        if (mkdirat(fd, p, 0755) != 0 && errno != EEXIST)
            sub = -1;
        else
            sub = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        *slash = '/';
        int e = errno;
        close(fd);
        errno = e;
        fd = sub;
        p = slash + 1;
    }
    *base = p;
    return fd;
}

static int save_one(int dfd, const char *dir, const char *name, const void *data, size_t len)
{
    const char *base;
    char *copy;
    int fd, pfd, e;

    char why[512];
    if (sbx_path_check(name, why, sizeof why) != SBX_OK) {
        cli_err("artifact not saved: %s", why);
        return -1;
    }
    if (!(copy = strdup(name))) {
        cli_err("artifact '%s' not saved: out of memory", name);
        return -1;
    }
    pfd = open_parent(dfd, copy, &base);
    fd = pfd < 0 ? -1 : openat(pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                               0644);
    e = errno;
    free(copy);
    if (pfd >= 0)
        close(pfd);
    if (fd < 0) {
        cli_err("artifact '%s' not saved: %s/%s: %s", name, dir, name,
                e == EEXIST ? "it exists already (not overwritten)"
                : e == ENOTDIR || e == ELOOP ? "a directory of its path is not one "
                  "(a link is not followed)" : strerror(e));
        return -1;
    }
    e = cli_write_all(fd, data, len);
    if (close(fd) != 0 && e == 0)
        e = errno;
    if (e != 0) {
        cli_err("artifact '%s' not saved: writing %s/%s: %s", name, dir, name, strerror(e));
        return -1;
    }
    return 0;
}

int cli_save_artifacts(const char *dir, const sbx_result *r, bool quiet)
{
    size_t n = sbx_result_artifact_count(r);
    int dfd, failed = 0;

    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        cli_err("--artifacts %s: %s", dir, strerror(errno));
        return -1;
    }
    if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        cli_err("--artifacts %s: %s", dir, strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const void *data;
        const char *mime, *why;
        size_t len;
        const char *name = sbx_result_artifact(r, i, &data, &len, &mime, &why);

        if (why) {
            cli_err("artifact '%s' left out: %s", name, why);
            continue;
        }
        if (save_one(dfd, dir, name, data, len) != 0)
            failed = -1;
        else if (!quiet)
            cli_err("saved %s/%s (%s, %zu bytes)", dir, name, mime, len);
    }
    close(dfd);
    return failed;
}
