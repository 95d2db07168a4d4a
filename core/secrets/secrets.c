/* core/secrets/secrets.c - credential references opened into secure memory
 *
 * A credential setting is "env:NAME", "file:PATH" or "sealed:v1:..." (see
 * sealed.c).  Values are opened into libsodium guarded memory, lent to the
 * provider and wiped on release; they never reach a log line or an error
 * message.  The first open makes the process undumpable.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "owner.h"
#include "context.h"
#include "secrets/secrets.h"
#include "settings-read.h"

#define SECRET_MAX (64 * 1024)

void (*core_secret_wipe_hook)(const void *value, size_t len);

/*
 * Guarded memory for a value of up to @cap bytes: the capacity is kept in
 * front of the value, so release can wipe all of it whatever the value
 * holds (it may hold NUL bytes).
 */
static char *secure_alloc(size_t cap)
{
    unsigned char *region = sodium_malloc(sizeof(size_t) + cap + 1);

    if (!region)
        return NULL;
    memcpy(region, &cap, sizeof cap);
    return (char *)region + sizeof(size_t);
}

static void secure_free(char *p)
{
    size_t cap;

    if (!p)
        return;
    memcpy(&cap, p - sizeof(size_t), sizeof cap);
    sodium_memzero(p, cap + 1);
    if (core_secret_wipe_hook)
        core_secret_wipe_hook(p, cap + 1);
    sodium_free(p - sizeof(size_t));
}

static int secure_copy(const char *src, size_t len, const char **out, size_t *outlen)
{
    char *p = secure_alloc(len);
    if (!p)
        return core_error_set(SBX_E_NOMEM, NULL, "cannot allocate secure memory");
    memcpy(p, src, len);
    p[len] = '\0';
    *out = p;
    *outlen = len;
    return SBX_OK;
}

int core_secret_protect_process(void)
{
    static const struct rlimit none = { 0, 0 };

    /* Not dumpable: no core file, no ptrace and no /proc/PID/mem,
     * environ or maps for other users (and same-user processes without
     * CAP_SYS_PTRACE).  Reset by execve, so sandboxes are unaffected. */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 || setrlimit(RLIMIT_CORE, &none) != 0)
        return core_error_set(SBX_E_IO, NULL,
                              "cannot make the process undumpable: %s", strerror(errno));
    return SBX_OK;
}

/* How messages name a setting: "FILE:LINE: KEY", "FILE: KEY", or only
 * FILE when there is no key (a reference an application opens, FILE then
 * saying where it came from). */
static const char *where_of(const core_setting *s, char *buf, size_t size)
{
    if (!s->key)
        snprintf(buf, size, "%s", s->file);
    else if (s->line > 0)
        snprintf(buf, size, "%s:%d: %s", s->file, s->line, s->key);
    else
        snprintf(buf, size, "%s: %s", s->file, s->key);
    return buf;
}

static int prefix_error(const core_setting *s, const char *what);

static int read_secret_file(const core_setting *s, const char *path,
                            const char **out, size_t *outlen)
{
    char w[CORE_MSG_MAX / 2];
    char *buf;
    ssize_t n = 0;
    size_t len = 0;
    /* O_NONBLOCK: a FIFO must not hang us (it is refused below). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
    struct stat st;

    if (fd < 0)
        return core_error_set(SBX_E_CONFIG, NULL, "%s: cannot open %s: %s",
                              where_of(s, w, sizeof w), path,
                              errno == ELOOP ? "it is a symbolic link" : strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return core_error_set(SBX_E_CONFIG, NULL, "%s: %s is not a regular file",
                              where_of(s, w, sizeof w), path);
    }
    /* Another user who could change it would choose our credential. */
    if (core_owner_check(&st, path, "secret file", SBX_E_PERM) != SBX_OK ||
        core_owner_check_parents(path, "secret file", SBX_E_PERM) != SBX_OK) {
        close(fd);
        return prefix_error(s, "");
    }
    buf = secure_alloc(SECRET_MAX);
    if (!buf) {
        close(fd);
        return core_error_set(SBX_E_NOMEM, NULL, "cannot allocate secure memory");
    }
    while (len < SECRET_MAX && ((n = read(fd, buf + len, SECRET_MAX - len)) > 0 ||
                                (n < 0 && errno == EINTR)))
        if (n > 0)
            len += (size_t)n;
    if (n >= 0 && len == SECRET_MAX) {
        char extra;
        if (read(fd, &extra, 1) > 0) {
            close(fd);
            secure_free(buf);
            return core_error_set(SBX_E_CONFIG, NULL, "%s: %s is larger than %d KiB",
                                  where_of(s, w, sizeof w), path, SECRET_MAX / 1024);
        }
    }
    close(fd);
    if (n < 0) {
        secure_free(buf);
        return core_error_set(SBX_E_IO, NULL, "%s: cannot read %s",
                              where_of(s, w, sizeof w), path);
    }
    /* A trailing newline is an artefact of editors, not part of the key. */
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
        len--;
    buf[len] = '\0';
    *out = buf;
    *outlen = len;
    return SBX_OK;
}

/* Re-set the thread error as "FILE:LINE: KEY: <its message>". */
static int prefix_error(const core_setting *s, const char *what)
{
    struct sbx_error *e = core_error_tls();
    char msg[CORE_MSG_MAX], w[CORE_MSG_MAX / 2];
    int code = e->code != SBX_OK ? e->code : SBX_E_INTERNAL;

    snprintf(msg, sizeof msg, "%s", e->message);
    return core_error_set(code, NULL, "%s: %s%s", where_of(s, w, sizeof w), what, msg);
}

static int open_sealed(const struct sbx_ctx *ctx, const core_setting *s,
                       const char **out, size_t *outlen)
{
    unsigned char pk[CORE_PK_BYTES], id[CORE_KEY_ID_BYTES];
    char why[CORE_MSG_MAX / 2], want[CORE_KEY_ID_HEX], have[CORE_KEY_ID_HEX];
    unsigned char *sk = NULL;
    char *key_path = NULL, *plain = NULL;
    const char *dir = ctx && ctx->cfg.dir ? ctx->cfg.dir : NULL;
    core_sealed box;
    size_t len;
    int rc;

    rc = core_sealed_parse(s->value, &box, why, sizeof why);
    if (rc != SBX_OK) {
        core_error_set(rc, NULL, "%s", why);
        return prefix_error(s, "");
    }
    if (!dir)
        core_hostkey_dir(NULL, &dir);
    rc = core_hostkey_load_secret(dir, &sk, pk, id, &key_path);
    if (rc != SBX_OK) {
        prefix_error(s, "cannot open the sealed value: ");
        goto out;
    }
    if (sodium_memcmp(id, box.id, CORE_KEY_ID_BYTES) != 0) {
        core_hostkey_id_hex(box.id, want);
        core_hostkey_id_hex(id, have);
        rc = core_error_set(SBX_E_CONFIG, NULL, "sealed for another key (key id %s; "
                            "this host's key %s has key id %s)", want, key_path, have);
        prefix_error(s, "");
        goto out;
    }
    len = box.boxlen - crypto_box_SEALBYTES;
    if (!(plain = secure_alloc(len))) {
        rc = core_error_set(SBX_E_NOMEM, NULL, "cannot allocate secure memory");
        goto out;
    }
    (void)sodium_mprotect_readonly(sk);
    if (crypto_box_seal_open((unsigned char *)plain, box.box, box.boxlen, pk, sk) != 0) {
        core_hostkey_id_hex(id, have);
        rc = core_error_set(SBX_E_CONFIG, NULL, "sealed value is corrupt: it does not open "
                            "with this host's key (key id %s) although it names it, so "
                            "it was altered", have);
        prefix_error(s, "");
        goto out;
    }
    plain[len] = '\0';
    *out = plain;
    *outlen = len;
    plain = NULL;
out:
    secure_free(plain);
    if (sk)
        sodium_free(sk);
    free(key_path);
    core_sealed_free(&box);
    return rc;
}

int core_secret_open(const struct sbx_ctx *ctx, const core_setting *s,
                     const char **out, size_t *len)
{
    const char *v = s->value;

    if (sodium_init() < 0)
        return core_error_set(SBX_E_INTERNAL, NULL, "libsodium failed to initialise");
    /* Before any byte of it is in memory. */
    if (core_secret_protect_process() != SBX_OK)
        return prefix_error(s, "");
    if (!strncmp(v, "env:", 4)) {
        const char *e = secure_getenv(v + 4);
        char w[CORE_MSG_MAX / 2];
        if (!e)
            return core_error_set(SBX_E_CONFIG, NULL, "%s: environment variable %s is not set",
                                  where_of(s, w, sizeof w), v + 4);
        return secure_copy(e, strlen(e), out, len);
    }
    if (!strncmp(v, "file:", 5))
        return read_secret_file(s, v + 5, out, len);
    if (!strncmp(v, "sealed:", 7))
        return open_sealed(ctx, s, out, len);
    /* A clear-text value is accepted but discouraged. */
    return secure_copy(v, strlen(v), out, len);
}

void core_secret_release(const char *value)
{
    secure_free((char *)value);
}
