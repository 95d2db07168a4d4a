/* core/image/unpack.c - apply one layer onto an image root
 *
 * libarchive writes the files (ARCHIVE_EXTRACT_SECURE_NODOTDOT,
 * _SECURE_NOABSOLUTEPATHS and _SECURE_SYMLINKS: nothing through a link,
 * nothing above the root); we refuse absolute names and ".." ourselves
 * first too, apply the OCI whiteouts (".wh.NAME" removes NAME of the layers below,
 * ".wh..wh..opq" empties its directory of them), skip device nodes, FIFOs
 * and sockets, drop setuid, setgid and sticky bits and keep every
 * directory writable by its owner (so that the store can remove it).
 * Ownership, ACLs and extended attributes (file capabilities) are not
 * restored.
 *
 * The layer is written from a thread of its own whose working directory
 * (unshare(CLONE_FS), private to it) is the root, with names relative to
 * it: _SECURE_SYMLINKS then checks each entry's directories below the
 * root only, not the store's own path from "/" (which cost an openat, an
 * fstatat and a close per component of it, for every entry).  Where
 * unshare is refused, the names are prefixed with the root as before.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "image-int.h"

#define WH ".wh."
#define WH_OPQ ".wh..wh..opq"

typedef struct layer {
    const char *root, *what;    /* root: "." when inside it (see below) */
    bool inside;                /* the thread's directory is the root */
    char **made;                /* names written by this layer (relative) */
    size_t n_made, cap_made;
    unsigned skipped;           /* device nodes, FIFOs, sockets */
} layer;

bool img_clean_name(char *name)
{
    if (name[0] == '/')
        return false;
    char *out = name;
    for (char *p = name; *p;) {
        char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return false;
        if (n > 0 && !(n == 1 && p[0] == '.')) {
            if (out != name)
                *out++ = '/';
            memmove(out, p, n);
            out += n;
        }
        p += n;
        if (*p == '/')
            p++;
    }
    *out = '\0';
    return true;
}

/* Refuse @rel's directories if any of them is a symbolic link (a
 * whiteout must not reach through one). */
static int no_link_under(const layer *L, const char *rel, size_t n)
{
    char path[PATH_MAX];
    size_t rl = strlen(L->root);
    if (rl + 1 + n >= sizeof path)
        return core_error_set(SBX_E_PATH, NULL, "%s: a name is too long", L->what);
    memcpy(path, L->root, rl);
    for (size_t i = 0; i <= n; i++) {
        if (i == n || rel[i] == '/') {
            path[rl] = '/';
            memcpy(path + rl + 1, rel, i);
            path[rl + 1 + i] = '\0';
            struct stat st;
            if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
                return core_error_set(SBX_E_PATH, NULL, "%s: '%.*s' goes through the "
                                      "symbolic link '%.*s': refused", L->what, (int)n, rel,
                                      (int)i, rel);
        }
    }
    return SBX_OK;
}

static bool made_here(const layer *L, const char *rel)
{
    size_t n = strlen(rel);
    for (size_t i = 0; i < L->n_made; i++)
        if (strncmp(L->made[i], rel, n) == 0 && (L->made[i][n] == '\0' || L->made[i][n] == '/'))
            return true;
    return false;
}

static int remember(layer *L, const char *rel)
{
    if (L->n_made == L->cap_made) {
        size_t cap = L->cap_made ? L->cap_made * 2 : 64;
        char **m = realloc(L->made, cap * sizeof *m);
        if (!m)
            return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        L->made = m;
        L->cap_made = cap;
    }
    if (!(L->made[L->n_made] = strdup(rel)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    L->n_made++;
    return SBX_OK;
}

/* ".wh..wh..opq" in @dir (relative, may be ""): remove what the layers
 * below put there. */
static int opaque(layer *L, const char *dir)
{
    int rc = no_link_under(L, dir, strlen(dir));
    if (rc != SBX_OK)
        return rc;
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s%s%s", L->root, *dir ? "/" : "", dir) >= (int)sizeof path)
        return core_error_set(SBX_E_PATH, NULL, "%s: a name is too long", L->what);
    DIR *d = opendir(path);
    if (!d)
        return errno == ENOENT ? SBX_OK
             : core_error_set(SBX_E_IO, NULL, "%s: %s: %s", L->what, path, strerror(errno));
    struct dirent *de;
    while (rc == SBX_OK && (de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char rel[PATH_MAX], full[PATH_MAX + 256];
        if (snprintf(rel, sizeof rel, "%s%s%s", dir, *dir ? "/" : "", de->d_name)
            >= (int)sizeof rel) {
            rc = core_error_set(SBX_E_PATH, NULL, "%s: a name is too long", L->what);
            break;
        }
        if (made_here(L, rel))
            continue;
        if (snprintf(full, sizeof full, "%s/%s", L->root, rel) >= (int)sizeof full)
            rc = core_error_set(SBX_E_PATH, NULL, "%s: a name is too long", L->what);
        else
            rc = img_rmtree(full);
    }
    closedir(d);
    return rc;
}

/* ".wh.NAME" at @rel: remove NAME. */
static int whiteout(layer *L, const char *rel)
{
    const char *base = strrchr(rel, '/');
    size_t dlen = base ? (size_t)(base - rel) : 0;
    base = base ? base + 1 : rel;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", (int)dlen, rel);
    if (strcmp(base, WH_OPQ) == 0)
        return opaque(L, dir);
    const char *victim = base + strlen(WH);
    if (!*victim || strcmp(victim, ".") == 0 || strcmp(victim, "..") == 0)
        return core_error_set(SBX_E_PATH, NULL, "%s: the whiteout '%s' names no file: refused",
                              L->what, rel);
    int rc = no_link_under(L, dir, dlen);
    if (rc != SBX_OK)
        return rc;
    char full[PATH_MAX];
    if (snprintf(full, sizeof full, "%s/%s%s%s", L->root, dir, dlen ? "/" : "", victim)
        >= (int)sizeof full)
        return core_error_set(SBX_E_PATH, NULL, "%s: a name is too long", L->what);
    return img_rmtree(full);
}

static int copy_data(struct archive *r, struct archive *w, const layer *L, const char *rel)
{
    const void *buf;
    size_t size;
    la_int64_t off;
    for (;;) {
        int x = archive_read_data_block(r, &buf, &size, &off);
        if (x == ARCHIVE_EOF)
            return SBX_OK;
        if (x < ARCHIVE_WARN)
            return core_error_set(SBX_E_BACKEND, NULL, "%s: '%s': %s", L->what, rel,
                                  archive_error_string(r));
        if (archive_write_data_block(w, buf, size, off) < ARCHIVE_WARN)
            return core_error_set(SBX_E_IO, NULL, "%s: '%s': %s", L->what, rel,
                                  archive_error_string(w));
    }
}

static int entry(layer *L, struct archive *r, struct archive *w, struct archive_entry *e)
{
    const char *raw = archive_entry_pathname(e);
    char rel[PATH_MAX];
    if (!raw || strlen(raw) >= sizeof rel)
        return core_error_set(SBX_E_BACKEND, NULL, "%s: an entry without a usable name",
                              L->what);
    snprintf(rel, sizeof rel, "%s", raw);
    if (!img_clean_name(rel))
        return core_error_set(SBX_E_PATH, NULL, "%s: the entry '%.200s' is absolute or "
                              "holds '..': refused", L->what, raw);
    if (!*rel)
        return SBX_OK;                  /* "./": the root itself keeps its mode */
    const char *base = strrchr(rel, '/');
    base = base ? base + 1 : rel;
    if (strncmp(base, WH, strlen(WH)) == 0)
        return whiteout(L, rel);

    mode_t type = archive_entry_filetype(e);
    const char *hl = archive_entry_hardlink(e);
    if (!hl && type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK) {
        L->skipped++;
        return SBX_OK;
    }
    char full[PATH_MAX];
    if (!L->inside && snprintf(full, sizeof full, "%s/%s", L->root, rel) >= (int)sizeof full)
        return core_error_set(SBX_E_PATH, NULL, "%s: '%.200s' is too long", L->what, rel);
    if (hl) {
        char target[PATH_MAX], hfull[PATH_MAX];
        snprintf(target, sizeof target, "%s", hl);
        if (strlen(hl) >= sizeof target || !img_clean_name(target) || !*target)
            return core_error_set(SBX_E_PATH, NULL, "%s: the hard link '%.200s' points at "
                                  "'%.200s', outside the image: refused", L->what, rel, hl);
        if (!L->inside &&
            snprintf(hfull, sizeof hfull, "%s/%s", L->root, target) >= (int)sizeof hfull)
            return core_error_set(SBX_E_PATH, NULL, "%s: '%.200s' is too long", L->what, hl);
        archive_entry_copy_hardlink(e, L->inside ? target : hfull);
    }
    archive_entry_copy_pathname(e, L->inside ? rel : full);
    mode_t perm = archive_entry_perm(e) & 0777;
    archive_entry_set_perm(e, perm | (type == AE_IFDIR ? 0700 : 0600));

    int x = archive_write_header(w, e);
    if (x < ARCHIVE_WARN) {
        const char *why = archive_error_string(w);
        return core_error_set(why && (strstr(why, "symlink") || strstr(why, "..")) ?
                              SBX_E_PATH : SBX_E_IO, NULL, "%s: '%.200s': %s", L->what, rel,
                              why ? why : "cannot be written");
    }
    int rc = SBX_OK;
    if (type == AE_IFREG && archive_entry_size(e) > 0)
        rc = copy_data(r, w, L, rel);
    if (rc == SBX_OK && archive_write_finish_entry(w) < ARCHIVE_WARN)
        rc = core_error_set(SBX_E_IO, NULL, "%s: '%.200s': %s", L->what, rel,
                            archive_error_string(w));
    return rc == SBX_OK ? remember(L, rel) : rc;
}

/* Apply the layer read from @fd onto @root, or onto the calling thread's
 * working directory when @inside. */
static int unpack_fd(int fd, const char *root, bool inside, const char *what)
{
    layer L = { .root = inside ? "." : root, .inside = inside, .what = what };
    struct archive *r = archive_read_new();
    struct archive *w = archive_write_disk_new();
    if (!r || !w) {
        archive_read_free(r);
        archive_write_free(w);
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    }
    archive_read_support_filter_all(r);
    archive_read_support_format_tar(r);
    /* No ARCHIVE_EXTRACT_UNLINK: with it, _SECURE_SYMLINKS removes a link
     * in the way instead of refusing the entry. */
    archive_write_disk_set_options(w, ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME |
                                          ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                                          (inside ? ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS
                                                  : 0) |
                                          ARCHIVE_EXTRACT_SECURE_SYMLINKS);
    int rc = SBX_OK;
    if (archive_read_open_fd(r, fd, 1 << 16) != ARCHIVE_OK)
        rc = core_error_set(SBX_E_BACKEND, NULL, "%s: %s", what, archive_error_string(r));
    struct archive_entry *e;
    while (rc == SBX_OK) {
        int x = archive_read_next_header(r, &e);
        if (x == ARCHIVE_EOF)
            break;
        if (x < ARCHIVE_WARN) {
            rc = core_error_set(SBX_E_BACKEND, NULL, "%s is not a readable tar: %s", what,
                                archive_error_string(r));
            break;
        }
        rc = entry(&L, r, w, e);
    }
    /* Here, in the same directory: close applies the directories' deferred
     * times and modes by the names they were given. */
    if (archive_write_close(w) != ARCHIVE_OK && rc == SBX_OK)
        rc = core_error_set(SBX_E_IO, NULL, "%s: %s", what, archive_error_string(w));
    archive_read_free(r);
    archive_write_free(w);
    for (size_t i = 0; i < L.n_made; i++)
        free(L.made[i]);
    free(L.made);
    return rc;
}

typedef struct job {
    int fd;
    const char *root, *what;
    int rc;
    struct sbx_error err;       /* the thread's error, for the caller's */
} job;

static void *unpack_thread(void *arg)
{
    job *j = arg;
    /* The working directory becomes this thread's alone before it moves.
     * Where unshare is refused (a seccomp filter), the slower way: names
     * prefixed with the root, checked by libarchive from "/". */
    if (unshare(CLONE_FS) != 0)
        j->rc = unpack_fd(j->fd, j->root, false, j->what);
    else if (chdir(j->root) != 0)
        j->rc = core_error_set(SBX_E_IO, NULL, "%s: %s: %s", j->what, j->root,
                               strerror(errno));
    else
        j->rc = unpack_fd(j->fd, j->root, true, j->what);
    j->err = *core_error_tls();
    return NULL;
}

int img_unpack_layer(const char *file, const char *root, const char *what)
{
    /* Opened here: @file may be relative to the caller's directory. */
    job j = { .fd = open(file, O_RDONLY | O_CLOEXEC), .root = root, .what = what };
    if (j.fd < 0)
        return core_error_set(SBX_E_IO, NULL, "%s: %s: %s", what, file, strerror(errno));
    pthread_t t;
    int e = pthread_create(&t, NULL, unpack_thread, &j);
    if (e != 0) {
        close(j.fd);
        return core_error_set(SBX_E_IO, NULL, "%s: cannot start a thread: %s", what,
                              strerror(e));
    }
    pthread_join(t, NULL);
    close(j.fd);
    if (j.rc != SBX_OK)
        *core_error_tls() = j.err;
    return j.rc;
}
