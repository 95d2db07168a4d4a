/* core/cli/artifacts.c - run --artifacts DIR: the result's artifacts saved
 * under DIR
 *
 * Every name is one path component (the core collects the top of the
 * template's artifacts directory only), checked again here; files are
 * created with O_EXCL | O_NOFOLLOW beneath DIR, so nothing is written
 * outside it and nothing that exists is overwritten.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static bool name_ok(const char *s)
{
    return *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

static int save_one(int dfd, const char *dir, const char *name, const void *data, size_t len)
{
    int fd, e;

    if (!name_ok(name)) {
        cli_err("artifact '%s' not saved: its name is not a plain file name", name);
        return -1;
    }
    fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        cli_err("artifact '%s' not saved: %s/%s: %s", name, dir, name,
                errno == EEXIST ? "it exists already (not overwritten)" : strerror(errno));
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
