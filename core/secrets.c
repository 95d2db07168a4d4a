/* core/secrets.c - credential references opened into secure memory
 *
 * A credential setting is "env:NAME", "file:PATH" or (issue 6)
 * "sealed:v1:...".  Values are copied into libsodium guarded memory and
 * wiped on release; they never reach a log line or an error message.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "core-int.h"

#define SECRET_MAX (64 * 1024)

static int secure_copy(const char *src, size_t len, const char **out, size_t *outlen)
{
    char *p = sodium_malloc(len + 1);
    if (!p)
        return core_error_set(SBX_E_NOMEM, NULL, "cannot allocate secure memory");
    memcpy(p, src, len);
    p[len] = '\0';
    *out = p;
    *outlen = len;
    return SBX_OK;
}

static int read_secret_file(const core_setting *s, const char *path,
                            const char **out, size_t *outlen)
{
    char *buf;
    ssize_t n;
    size_t len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

    if (fd < 0)
        return core_error_set(SBX_E_CONFIG, NULL, "%s:%d: %s: cannot open %s: %s",
                              s->file, s->line, s->key, path, strerror(errno));
    buf = sodium_malloc(SECRET_MAX + 1);
    if (!buf) {
        close(fd);
        return core_error_set(SBX_E_NOMEM, NULL, "cannot allocate secure memory");
    }
    while ((n = read(fd, buf + len, SECRET_MAX - len)) > 0)
        len += (size_t)n;
    close(fd);
    if (n < 0) {
        sodium_free(buf);
        return core_error_set(SBX_E_IO, NULL, "%s:%d: %s: cannot read %s",
                              s->file, s->line, s->key, path);
    }
    /* A trailing newline is an artefact of editors, not part of the key. */
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
        len--;
    buf[len] = '\0';
    *out = buf;
    *outlen = len;
    return SBX_OK;
}

int core_secret_open(const struct sbx_ctx *ctx, const core_setting *s,
                     const char **out, size_t *len)
{
    const char *v = s->value;

    (void)ctx;
    if (sodium_init() < 0)
        return core_error_set(SBX_E_INTERNAL, NULL, "libsodium failed to initialise");
    if (!strncmp(v, "env:", 4)) {
        const char *e = secure_getenv(v + 4);
        if (!e)
            return core_error_set(SBX_E_CONFIG, NULL,
                                  "%s:%d: %s: environment variable %s is not set",
                                  s->file, s->line, s->key, v + 4);
        return secure_copy(e, strlen(e), out, len);
    }
    if (!strncmp(v, "file:", 5))
        return read_secret_file(s, v + 5, out, len);
    if (!strncmp(v, "sealed:", 7))
        return core_error_set(SBX_E_NOTSUP, NULL,
                              "%s:%d: %s: sealed credentials are not supported yet",
                              s->file, s->line, s->key);
    /* A clear-text value is accepted but discouraged. */
    return secure_copy(v, strlen(v), out, len);
}

void core_secret_release(const char *value)
{
    if (value)
        sodium_free((void *)value);
}
