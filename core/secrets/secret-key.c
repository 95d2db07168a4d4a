/* core/secrets/secret-key.c - the host key pair that sealed credentials are sealed to
 *
 * DIR/secret.key holds the X25519 secret key (mode 0600, owned by the user
 * who opens it); DIR/secret.pub the public key (0644), so anyone may seal
 * but only the key's owner can open.  Both are text: '#' comment lines and
 * one line of URL-safe base64.  The secret key is only ever held in
 * libsodium guarded memory and wiped when dropped.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "owner.h"
#include "secrets/secrets.h"

#define KEY_FILE "secret.key"
#define PUB_FILE "secret.pub"
/* A key file is a comment and 43 characters of base64: 4 KiB is plenty. */
#define KEY_FILE_MAX 4096
#define B64 sodium_base64_VARIANT_URLSAFE_NO_PADDING

int core_hostkey_dir(const char *config_dir, const char **out)
{
    if (!config_dir || !*config_dir) {
        const char *e = secure_getenv("POLYSANDBOX_CONFIG_DIR");
        config_dir = e && *e ? e : SYSCONFDIR;
    }
    *out = config_dir;
    return SBX_OK;
}

char *core_hostkey_path(const char *dir, bool pub)
{
    char *p;
    if (asprintf(&p, "%s/%s", dir, pub ? PUB_FILE : KEY_FILE) < 0)
        return NULL;
    return p;
}

void core_hostkey_id(const unsigned char pk[CORE_PK_BYTES],
                     unsigned char id[CORE_KEY_ID_BYTES])
{
    unsigned char h[crypto_generichash_BYTES];

    crypto_generichash(h, sizeof h, pk, CORE_PK_BYTES, NULL, 0);
    memcpy(id, h, CORE_KEY_ID_BYTES);
}

void core_hostkey_id_hex(const unsigned char id[CORE_KEY_ID_BYTES],
                         char hex[CORE_KEY_ID_HEX])
{
    sodium_bin2hex(hex, CORE_KEY_ID_HEX, id, CORE_KEY_ID_BYTES);
}

/* ---- writing ------------------------------------------------------------ */

/* Write @text to a new temporary file in @dir with @mode; *tmp names it. */
static int write_temp(const char *dir, const char *text, mode_t mode, char **tmp)
{
    size_t len = strlen(text), off = 0;
    int fd, e;

    if (asprintf(tmp, "%s/.secret.XXXXXX", dir) < 0) {
        *tmp = NULL;
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    }
    /* mkostemp opens with O_EXCL; fchmod makes the mode umask-proof. */
    fd = mkostemp(*tmp, O_CLOEXEC);
    if (fd < 0) {
        e = errno;
        free(*tmp);
        *tmp = NULL;
        return core_error_set(e == EACCES || e == EPERM ? SBX_E_PERM : SBX_E_IO, NULL,
                              "cannot create a file in %s: %s", dir, strerror(e));
    }
    if (fchmod(fd, mode) != 0)
        goto fail;
    while (off < len) {
        ssize_t n = write(fd, text + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            goto fail;
        off += (size_t)n;
    }
    if (fsync(fd) != 0)
        goto fail;
    if (close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    return SBX_OK;
fail:
    e = errno;
    if (fd >= 0)
        close(fd);
    unlink(*tmp);
    core_error_set(SBX_E_IO, NULL, "cannot write %s: %s", *tmp, strerror(e));
    free(*tmp);
    *tmp = NULL;
    return SBX_E_IO;
}

static void sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

/* Make the temporary @tmp the file @path: with @replace by rename (atomic),
 * else by link, which fails if @path exists, as O_EXCL would. */
static int install(const char *tmp, const char *path, bool replace)
{
    int rc = replace ? rename(tmp, path) : link(tmp, path);
    int e = errno;

    if (!replace || rc != 0)
        unlink(tmp);
    if (rc == 0)
        return SBX_OK;
    if (e == EEXIST)
        return core_error_set(SBX_E_EXISTS, NULL, "%s already exists", path);
    return core_error_set(e == EACCES || e == EPERM ? SBX_E_PERM : SBX_E_IO, NULL,
                          "cannot create %s: %s", path, strerror(e));
}

int core_hostkey_create(const char *dir, bool force, char id_hex[CORE_KEY_ID_HEX])
{
    unsigned char pk[CORE_PK_BYTES], id[CORE_KEY_ID_BYTES];
    unsigned char *sk = NULL;
    char *text = NULL, *pub_text = NULL;
    char *key_path = NULL, *pub_path = NULL, *key_tmp = NULL, *pub_tmp = NULL;
    char pk64[sodium_base64_ENCODED_LEN(CORE_PK_BYTES, B64)];
    size_t text_size = 256;
    struct stat st;
    int rc;

    if (sodium_init() < 0)
        return core_error_set(SBX_E_INTERNAL, NULL, "libsodium failed to initialise");
    key_path = core_hostkey_path(dir, false);
    pub_path = core_hostkey_path(dir, true);
    if (!key_path || !pub_path) {
        rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        goto out;
    }
    if (stat(dir, &st) != 0) {
        rc = core_error_set(SBX_E_CONFIG, NULL, "configuration directory %s: %s", dir,
                            strerror(errno));
        goto out;
    }
    if (!S_ISDIR(st.st_mode)) {
        rc = core_error_set(SBX_E_CONFIG, NULL, "configuration directory %s: not a "
                            "directory", dir);
        goto out;
    }
    /* Checked first for a clear message; link() below still refuses a
     * file that appears in between. */
    if (!force && lstat(key_path, &st) == 0) {
        rc = core_error_set(SBX_E_EXISTS, NULL,
                            "%s already exists (--force replaces it, and every value "
                            "sealed to it can then no longer be opened)", key_path);
        goto out;
    }
    sk = sodium_malloc(CORE_SK_BYTES);
    text = sodium_malloc(text_size);
    if (!sk || !text) {
        rc = core_error_set(SBX_E_NOMEM, NULL, "cannot allocate secure memory");
        goto out;
    }
    crypto_box_keypair(pk, sk);
    core_hostkey_id(pk, id);
    core_hostkey_id_hex(id, id_hex);
    sodium_bin2base64(pk64, sizeof pk64, pk, sizeof pk, B64);
    {
        char sk64[sodium_base64_ENCODED_LEN(CORE_SK_BYTES, B64)];
        sodium_bin2base64(sk64, sizeof sk64, sk, CORE_SK_BYTES, B64);
        snprintf(text, text_size,
                 "# PolySandbox host secret key, key id %s.  Keep it private\n"
                 "# (mode 0600); it opens every sealed:v1: value sealed to it.\n"
                 "%s\n", id_hex, sk64);
        sodium_memzero(sk64, sizeof sk64);
    }
    if (asprintf(&pub_text, "# PolySandbox host public key, key id %s\n%s\n",
                 id_hex, pk64) < 0) {
        pub_text = NULL;
        rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        goto out;
    }
    if ((rc = write_temp(dir, text, 0600, &key_tmp)) != SBX_OK ||
        (rc = write_temp(dir, pub_text, 0644, &pub_tmp)) != SBX_OK)
        goto out;
    rc = install(key_tmp, key_path, force);
    if (rc == SBX_E_EXISTS)
        core_error_set(SBX_E_EXISTS, NULL, "%s already exists (--force replaces it)",
                       key_path);
    if (rc == SBX_OK)
        rc = install(pub_tmp, pub_path, true);
    if (rc == SBX_OK)
        sync_dir(dir);
out:
    if (key_tmp)
        unlink(key_tmp);
    if (pub_tmp)
        unlink(pub_tmp);
    free(key_tmp);
    free(pub_tmp);
    free(pub_text);
    sodium_free(text);
    sodium_free(sk);
    free(key_path);
    free(pub_path);
    return rc;
}

/* ---- reading ------------------------------------------------------------ */

/*
 * Read @path (at most KEY_FILE_MAX bytes) into guarded memory and decode
 * its one line of base64 into @out (@outlen bytes exactly).  @secret:
 * the file must be private (owner only, this user's).
 */
static int read_key_file(const char *path, bool secret, unsigned char *out,
                         size_t outlen)
{
    char *buf = NULL;
    size_t len = 0;
    struct stat st;
    ssize_t n = 0;
    int rc = SBX_OK;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);

    if (fd < 0) {
        int e = errno;
        if (e == ENOENT)
            return core_error_set(SBX_E_CONFIG, NULL,
                                  "no host key %s (create the key pair with "
                                  "'polysandbox secret init')", path);
        return core_error_set(e == EACCES || e == EPERM ? SBX_E_PERM : SBX_E_IO, NULL,
                              "cannot open the host key %s: %s", path,
                              e == ELOOP ? "it is a symbolic link" : strerror(e));
    }
    if (fstat(fd, &st) != 0) {
        rc = core_error_set(SBX_E_IO, NULL, "cannot stat %s: %s", path, strerror(errno));
        goto out;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = core_error_set(SBX_E_CONFIG, NULL, "host key %s is not a regular file", path);
        goto out;
    }
    /* Either key: another user who could change the public one would
     * have every later value sealed to a key of theirs. */
    if (!secret && ((rc = core_owner_check(&st, path, "host public key", SBX_E_PERM)) != SBX_OK ||
                    (rc = core_owner_check_parents(path, "host public key", SBX_E_PERM)) !=
                        SBX_OK))
        goto out;
    if (secret && (rc = core_owner_check_parents(path, "host key", SBX_E_PERM)) != SBX_OK)
        goto out;
    if (secret && st.st_uid != geteuid()) {
        rc = core_error_set(SBX_E_PERM, NULL,
                            "host key %s is owned by uid %u, not by this user "
                            "(uid %u): refused", path, (unsigned)st.st_uid,
                            (unsigned)geteuid());
        goto out;
    }
    if (secret && (st.st_mode & 077)) {
        rc = core_error_set(SBX_E_PERM, NULL,
                            "host key %s has mode %04o: group and others must have no "
                            "access (chmod 600 %s)", path,
                            (unsigned)(st.st_mode & 07777), path);
        goto out;
    }
    buf = sodium_malloc(KEY_FILE_MAX + 1);
    if (!buf) {
        rc = core_error_set(SBX_E_NOMEM, NULL, "cannot allocate secure memory");
        goto out;
    }
    while (len < KEY_FILE_MAX &&
           ((n = read(fd, buf + len, KEY_FILE_MAX - len)) > 0 || (n < 0 && errno == EINTR)))
        if (n > 0)
            len += (size_t)n;
    if (n < 0) {
        rc = core_error_set(SBX_E_IO, NULL, "cannot read %s: %s", path, strerror(errno));
        goto out;
    }
    buf[len] = '\0';

    /* Skip comment and blank lines; the first other line is the key. */
    char *line = buf;
    for (;;) {
        if (!*line) {
            rc = core_error_set(SBX_E_CONFIG, NULL, "host key %s holds no key", path);
            goto out;
        }
        size_t ll = strcspn(line, "\n");
        if (ll > 0 && line[0] != '#' && !(ll == 1 && line[0] == '\r'))
            break;
        line += ll + (line[ll] ? 1 : 0);
    }
    size_t ll = strcspn(line, "\r\n");
    size_t bin_len = 0;
    if (sodium_base642bin(out, outlen, line, ll, NULL, &bin_len, NULL, B64) != 0 ||
        bin_len != outlen) {
        sodium_memzero(out, outlen);
        rc = core_error_set(SBX_E_CONFIG, NULL,
                            "host key %s is damaged (not a %zu-byte key in base64)",
                            path, outlen);
        goto out;
    }
out:
    sodium_free(buf);
    close(fd);
    return rc;
}

int core_hostkey_load_public(const char *dir, unsigned char pk[CORE_PK_BYTES],
                             unsigned char id[CORE_KEY_ID_BYTES])
{
    char *path;
    int rc;

    if (sodium_init() < 0)
        return core_error_set(SBX_E_INTERNAL, NULL, "libsodium failed to initialise");
    if (!(path = core_hostkey_path(dir, true)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    rc = read_key_file(path, false, pk, CORE_PK_BYTES);
    free(path);
    if (rc == SBX_OK)
        core_hostkey_id(pk, id);
    return rc;
}

int core_hostkey_load_secret(const char *dir, unsigned char **sk,
                             unsigned char pk[CORE_PK_BYTES],
                             unsigned char id[CORE_KEY_ID_BYTES], char **path)
{
    unsigned char *k;
    int rc;

    *sk = NULL;
    if (!(*path = core_hostkey_path(dir, false)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    if (!(k = sodium_malloc(CORE_SK_BYTES)))
        return core_error_set(SBX_E_NOMEM, NULL, "cannot allocate secure memory");
    rc = read_key_file(*path, true, k, CORE_SK_BYTES);
    if (rc != SBX_OK) {
        sodium_free(k);
        return rc;
    }
    /* The public key is derived, so a stale secret.pub cannot mislead. */
    if (crypto_scalarmult_base(pk, k) != 0) {
        sodium_free(k);
        return core_error_set(SBX_E_CONFIG, NULL, "host key %s is damaged", *path);
    }
    core_hostkey_id(pk, id);
    /* No access at all while it is not being used. */
    (void)sodium_mprotect_noaccess(k);
    *sk = k;
    return SBX_OK;
}
