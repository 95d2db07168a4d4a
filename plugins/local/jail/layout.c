/* plugins/local/jail/layout.c - what of the host the sandbox root shows
 *
 * Probed once at init: the system directories (/usr, /bin, /lib, ...;
 * symlinks on merged-/usr systems are recreated as symlinks), the /etc
 * files programs need (jail/etcscan.c) (never shadow, passwd and group are made up by the
 * child), the administrator's extra read-only binds (settings key
 * ro_binds) and the package's cache of data built for sandboxes to read
 * (cache_dir: the Go build cache of contrib/go-cache-warm.sh).  Nothing from /root, /home, /run or our own config and state
 * directories is ever listed, and those of ours below a listed tree
 * (under /usr when installed in /usr/local) are covered (masks).
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "../local-int.h"

static const char *const top_dirs[] = {
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
};

/* Trees an extra bind may never expose (the path or anything below). */
static const char *const forbidden[] = {
    "/root", "/home", "/run", "/var/run", "/proc", "/sys", "/dev", "/tmp",
    "/var/lib/polysandbox", "/etc/shadow", "/etc/gshadow", "/etc/polysandbox",
};

/* @path is @dir or below it. */
static bool path_in(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

static bool is_forbidden(const struct lcl_prov *p, const char *path)
{
    if (!strcmp(path, "/") || !strcmp(path, "/etc"))
        return true;
    for (size_t i = 0; i < sizeof forbidden / sizeof *forbidden; i++)
        if (path_in(path, forbidden[i]))
            return true;
    for (size_t i = 0; i < p->n_hidden; i++)
        if (path_in(path, p->hidden[i]))
            return true;
    return false;
}

/* ---- the orchestrator's own paths ----
 *
 * A sandbox shows whole system trees (/usr, ...), and an installation
 * under the default prefix keeps its configuration (with the host key
 * credentials are sealed to), its state and its modules below /usr
 * (/usr/local/etc/polysandbox, /usr/local/var/lib/polysandbox, ...).
 * Each of our paths (as built, and as the core says it uses them) that
 * is a directory below a bound tree is covered in every root by an empty
 * read-only tmpfs (skel_tree, jail/child.c); none may be bound by
 * ro_binds, nor be or hold an image root. */

#ifndef SYSCONFDIR
#define SYSCONFDIR "/usr/local/etc/polysandbox"
#endif
#ifndef STATEDIR
#define STATEDIR "/usr/local/var/lib/polysandbox"
#endif
#ifndef PKGCACHEDIR
#define PKGCACHEDIR "/usr/local/var/cache/polysandbox"
#endif
#ifndef PROVIDERDIR
#define PROVIDERDIR "/usr/local/lib/polysandbox/providers"
#endif

static int hidden_push(struct lcl_prov *p, char **list, size_t *n, const char *path)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp(list[i], path))
            return 0;
    if (*n >= LCL_MAX_HIDDEN)
        return p->host->set_error(p->h, SBX_E_CONFIG, "more than %d paths of ours to hide",
                                  LCL_MAX_HIDDEN);
    if (!(list[*n] = strdup(path)))
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    (*n)++;
    return 0;
}

/* A directory of ours that exists, as a mask candidate: its path with no
 * link on the way (a mask's mount point is the same path inside the new
 * root), resolved when it has one (rare: realpath then). */
static int mask_candidate(struct lcl_prov *p, const char *path)
{
    struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    if (fd >= 0) {
        close((int)fd);
        return hidden_push(p, p->masks, &p->n_masks, path);
    }
    struct stat st;
    if ((errno != ELOOP && errno != ENOSYS) || stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
        return 0; /* absent or not a directory: nothing to cover */
    char *real = realpath(path, NULL);
    int ret = 0;
    if (real && strcmp(real, "/")) {
        ret = hidden_push(p, p->hidden, &p->n_hidden, real);
        if (!ret)
            ret = hidden_push(p, p->masks, &p->n_masks, real);
    }
    free(real);
    return ret;
}

/* @path: never bound, and covered where it is below a bound tree. */
static int hide(struct lcl_prov *p, const char *path)
{
    char buf[PATH_MAX];
    size_t n = path ? strlen(path) : 0;
    while (n > 1 && path[n - 1] == '/')
        n--;
    if (n < 2 || path[0] != '/' || n >= sizeof buf)
        return 0; /* not absolute, or / itself: nothing to hide */
    memcpy(buf, path, n);
    buf[n] = '\0';
    for (size_t i = 0; i < p->n_hidden; i++)
        if (!strcmp(p->hidden[i], buf))
            return 0;
    int ret = hidden_push(p, p->hidden, &p->n_hidden, buf);
    return ret ? ret : mask_candidate(p, buf);
}

int lcl_layout_hidden(struct lcl_prov *p)
{
    static const char *const built[] = {SYSCONFDIR, STATEDIR, PROVIDERDIR};
    int ret = 0;
    for (size_t i = 0; !ret && i < sizeof built / sizeof *built; i++)
        ret = hide(p, built[i]);
    /* The core's: the configuration directories read, its state
     * directory, the provider directories (ABI 1.6). */
    const sbx_host_v1 *h = p->host;
    const char *const *list = h->struct_size >= offsetof(sbx_host_v1, private_paths) +
                                                    sizeof h->private_paths && h->private_paths
                              ? h->private_paths(p->h) : NULL;
    for (size_t i = 0; !ret && list && list[i]; i++)
        ret = hide(p, list[i]);
    /* Ours, and the core's state directory it is in. */
    if (!ret)
        ret = hide(p, p->state_dir);
    char parent[PATH_MAX];
    const char *slash = strrchr(p->state_dir, '/');
    if (!ret && slash && slash > p->state_dir &&
        (size_t)(slash - p->state_dir) < sizeof parent) {
        memcpy(parent, p->state_dir, (size_t)(slash - p->state_dir));
        parent[slash - p->state_dir] = '\0';
        ret = hide(p, parent);
    }
    return ret;
}

/* Keeps the mask candidates that lie below a bound directory (the
 * others are out of sight anyway), outermost only. */
static void masks_keep_bound(struct lcl_prov *p)
{
    char *keep[LCL_MAX_HIDDEN];
    size_t k = 0;
    for (size_t i = 0; i < p->n_masks; i++) {
        const char *m = p->masks[i];
        bool bound = false, inner = false;
        for (size_t j = 0; j < p->n_binds && !bound; j++) {
            const struct lcl_bind *b = &p->binds[j];
            bound = !b->link && b->is_dir && path_in(m, b->path) && strcmp(m, b->path);
        }
        for (size_t j = 0; j < p->n_masks && !inner; j++)
            inner = j != i && strcmp(m, p->masks[j]) && path_in(m, p->masks[j]);
        keep[k] = bound && !inner ? p->masks[i] : NULL;
        k += keep[k] != NULL;
    }
    for (size_t i = 0; i < p->n_masks; i++) {
        bool kept = false;
        for (size_t j = 0; j < k && !kept; j++)
            kept = keep[j] == p->masks[i];
        if (!kept)
            free(p->masks[i]);
    }
    /* cppcheck-suppress uninitvar ; k entries of keep are set; none is read when k is 0 */
    memcpy(p->masks, keep, k * sizeof *keep);
    p->n_masks = k;
}

/* @dtype: the entry's type from readdir (DT_UNKNOWN: ask lstat), which
 * spares 30-odd lstat calls of every start. */
static int add_typed(struct lcl_prov *p, const char *path, unsigned char dtype)
{
    struct stat st;
    if (dtype == DT_DIR || dtype == DT_REG || dtype == DT_LNK)
        st.st_mode = dtype == DT_DIR ? S_IFDIR : dtype == DT_REG ? S_IFREG : S_IFLNK;
    else if (lstat(path, &st) < 0)
        return 0; /* absent on this host: skip */
    if (p->n_binds >= LCL_MAX_BINDS)
        return p->host->set_error(p->h, SBX_E_CONFIG, "too many read-only binds (max %d)",
                                  LCL_MAX_BINDS);
    struct lcl_bind *b = &p->binds[p->n_binds];
    memset(b, 0, sizeof *b);
    if (!(b->path = strdup(path)))
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    if (S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlink(path, target, sizeof target - 1);
        if (n < 0) {
            free(b->path);
            return 0;
        }
        target[n] = '\0';
        if (!(b->link = strdup(target))) {
            free(b->path);
            return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        }
    } else if (S_ISDIR(st.st_mode)) {
        b->is_dir = true;
    } else if (!S_ISREG(st.st_mode)) {
        free(b->path);
        return 0; /* sockets, devices: never */
    }
    p->n_binds++;
    return 0;
}

static int add(struct lcl_prov *p, const char *path)
{
    return add_typed(p, path, DT_UNKNOWN);
}

/* A path an administrator named under @key: clean, absolute, and no
 * private tree.  Trailing slashes are cut off in place.  With @key NULL
 * (a built-in path, not the administrator's) a bad one is -1, no error. */
static int check_named(struct lcl_prov *p, const char *key, char *tok)
{
    size_t n = strlen(tok);
    while (n > 1 && tok[n - 1] == '/')
        tok[--n] = '\0';
    if (tok[0] != '/' || strstr(tok, "/..") || strstr(tok, "/./"))
        return !key ? -1 : p->host->set_error(p->h, SBX_E_CONFIG,
                                  "providers.d/local.ini: %s entry '%s' is not a clean absolute path",
                                  key, tok);
    /* Each sandbox mounts its own work directory on /work and makes
     * /var/tmp a link to its own /tmp: a bind below either would be
     * accepted and never seen. */
    const char *covered = path_in(tok, "/work") ? "/work, each sandbox's own work directory"
                          : path_in(tok, "/var/tmp") ? "/var/tmp, a link to each sandbox's own /tmp"
                          : NULL;
    if (covered)
        return !key ? -1 : p->host->set_error(p->h, SBX_E_CONFIG,
                                  "providers.d/local.ini: %s entry '%s' lies below %s, "
                                  "which would hide it; bind a path outside /work and /var/tmp",
                                  key, tok, covered);
    if (is_forbidden(p, tok))
        return !key ? -1 : p->host->set_error(p->h, SBX_E_CONFIG,
                                  "providers.d/local.ini: %s entry '%s' would expose a "
                                  "private host tree", key, tok);
    return 0;
}

static int add_extra(struct lcl_prov *p, const char *list)
{
    char *copy = strdup(list), *save = NULL;
    if (!copy)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    int ret = 0;
    for (char *tok = strtok_r(copy, " \t,", &save); tok && !ret; tok = strtok_r(NULL, " \t,", &save)) {
        ret = check_named(p, "ro_binds", tok);
        if (!ret)
            ret = add(p, tok);
    }
    free(copy);
    return ret;
}

/* The cache directory, when it is one (else nothing: the Go template
 * then builds cold, as without it).  Optional: removed later, it is
 * skipped rather than failing every sandbox of a long-lived provider.
 * A cache_dir the administrator named must pass check_named; the
 * built-in one (@named false) is only used when it would (a build
 * whose prefix lies below /work, as make distcheck's does, has none). */
static int add_cache(struct lcl_prov *p, const char *dir, bool named)
{
    char path[PATH_MAX];
    struct stat st;
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return named ? p->host->set_error(p->h, SBX_E_CONFIG,
                                          "providers.d/local.ini: cache_dir is too long")
                     : 0;
    int ret = check_named(p, named ? "cache_dir" : NULL, path);
    if (ret && !named) {
        free(p->cache_unbound); /* doctor says why the Go builds are cold */
        p->cache_unbound = strdup(path);
        return p->cache_unbound ? 0 : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    if (ret)
        return ret;
    free(p->cache_dir);
    if (!(p->cache_dir = strdup(path)))
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
        return 0;
    size_t n = p->n_binds;
    if (!(ret = add_typed(p, path, DT_DIR)) && p->n_binds > n)
        p->binds[n].optional = true;
    return ret;
}

int lcl_layout_probe(struct lcl_prov *p, const char *extra, const char *cache)
{
    int ret = 0;
    for (size_t i = 0; !ret && i < sizeof top_dirs / sizeof *top_dirs; i++)
        ret = add(p, top_dirs[i]);
    /* The /etc entries worth showing: scanned, or as the last scan of
     * this /etc found them (jail/etcscan.c). */
    struct lcl_etc_list etc = {NULL, 0};
    if (!ret && lcl_etc_scan(p, &etc) < 0)
        ret = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    for (size_t i = 0; !ret && i < etc.n; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "/etc/%s", etc.ents[i].name);
        ret = add_typed(p, path, etc.ents[i].type);
    }
    lcl_etc_list_free(&etc);
    if (!ret && extra && *extra)
        ret = add_extra(p, extra);
    if (!ret && (!cache || *cache))
        ret = add_cache(p, cache ? cache : PKGCACHEDIR, cache != NULL);
    if (!ret)
        masks_keep_bound(p);
    return ret;
}

/* Is @real the root of an image in the core's default store
 * (STATE_DIR/images/roots/HEX, polysandbox image pull): an unpacked image
 * only, though in the state directory that is otherwise private?  Our
 * state directory is STATE_DIR/local. */
static bool store_root(const struct lcl_prov *p, const char *real)
{
    const char *slash = strrchr(p->state_dir, '/');
    size_t n = slash ? (size_t)(slash - p->state_dir) : 0;
    static const char roots[] = "/images/roots/";
    if (!n || strncmp(real, p->state_dir, n) || strncmp(real + n, roots, sizeof roots - 1))
        return false;
    const char *hex = real + n + sizeof roots - 1;
    return strlen(hex) == 64 && strspn(hex, "0123456789abcdef") == 64;
}

/* An image that names a directory becomes the sandbox's root, read-only.
 * It must be an absolute path to an existing directory that is not the
 * host's root or a private tree; *out is its canonical path (or NULL
 * when the image is not a path: a container image name, ignored). */
int lcl_layout_rootfs(struct lcl_prov *p, const char *image, char **out)
{
    *out = NULL;
    if (!image || image[0] != '/')
        return 0;
    char *real = realpath(image, NULL);
    struct stat st;
    if (!real || stat(real, &st) < 0) {
        int err = errno;
        free(real);
        return p->host->set_error(p->h, err == ENOENT ? SBX_E_NOT_FOUND : lcl_err_code(err),
                                  "image directory '%s': %s", image, strerror(err));
    }
    size_t n = strlen(p->state_dir);
    while (n > 1 && p->state_dir[n - 1] == '/')
        n--;
    bool private_tree = !strncmp(real, p->state_dir, n) && (real[n] == '\0' || real[n] == '/');
    static const char *const private_trees[] = {"/proc", "/sys", "/dev", "/etc", "/root", "/home",
                                                "/run", "/var/run", "/boot"};
    for (size_t i = 0; i < sizeof private_trees / sizeof *private_trees; i++)
        if (path_in(real, private_trees[i]))
            private_tree = true;
    /* Our own paths: neither the image nor in it. */
    for (size_t i = 0; i < p->n_hidden; i++)
        if (path_in(real, p->hidden[i]) || path_in(p->hidden[i], real))
            private_tree = true;
    if (private_tree && store_root(p, real))
        private_tree = false;
    if (!S_ISDIR(st.st_mode) || !strcmp(real, "/") || private_tree) {
        int ret = p->host->set_error(p->h, SBX_E_INVAL,
                                     S_ISDIR(st.st_mode) ? "image directory '%s' (%s) would expose a "
                                     "private host tree" : "image '%s' (%s) is not a directory",
                                     image, real);
        free(real);
        return ret;
    }
    *out = real;
    return 0;
}

void lcl_layout_free(struct lcl_prov *p)
{
    for (size_t i = 0; i < p->n_skel; i++) {
        free(p->skel_ents[i].path);
        free((char *)p->skel_ents[i].data);
    }
    free(p->skel_ents);
    p->skel_ents = NULL;
    p->n_skel = 0;
    for (size_t i = 0; i < p->n_binds; i++) {
        free(p->binds[i].path);
        free(p->binds[i].link);
    }
    p->n_binds = 0;
    free(p->cache_dir);
    p->cache_dir = NULL;
    free(p->cache_unbound);
    p->cache_unbound = NULL;
    for (size_t i = 0; i < p->n_hidden; i++)
        free(p->hidden[i]);
    p->n_hidden = 0;
    for (size_t i = 0; i < p->n_masks; i++)
        free(p->masks[i]);
    p->n_masks = 0;
}

/* ---- the skeleton: mount points and made-up files of the new root ----
 *
 * Each exec's root is a fresh small tmpfs (so /proc/self/mountinfo shows
 * "/" as its source, not a host path of ours) holding the mount points
 * and the made-up /etc files.  The list of what to create is computed
 * here once, so the child only makes system calls; the directory
 * <state>/root is where the child mounts that tmpfs, in its own mount
 * namespace (never in the host's). */

static const char passwd_text[] =
    "root:x:0:0:root:/root:/bin/sh\n"
    "sandbox:x:1000:1000:sandbox:/work:/bin/sh\n"
    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
static const char group_text[] = "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n";
static const char hosts_text[] =
    "127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n";

static bool skel_has(const struct lcl_prov *p, const char *rel)
{
    for (size_t i = 0; i < p->n_skel; i++)
        if (!strcmp(p->skel_ents[i].path, rel))
            return true;
    return false;
}

/* Adds one entry (@path absolute or relative; stored relative). */
static int skel_add(struct lcl_prov *p, int kind, const char *path, const char *data)
{
    while (*path == '/')
        path++;
    if (skel_has(p, path))
        return 0;
    struct lcl_skel_ent *n = realloc(p->skel_ents, (p->n_skel + 1) * sizeof *n);
    if (!n)
        return -ENOMEM;
    p->skel_ents = n;
    struct lcl_skel_ent *e = &n[p->n_skel];
    e->kind = kind;
    e->data = NULL;
    if (!(e->path = strdup(path)) || (data && !(e->data = strdup(data)))) {
        free(e->path);
        return -ENOMEM;
    }
    p->n_skel++;
    return 0;
}

/* The directories leading to @path (not @path itself), parents first. */
static int skel_parents(struct lcl_prov *p, const char *path)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *s = buf + 1; (s = strchr(s, '/')); s++) {
        *s = '\0';
        int r = skel_add(p, LCL_SK_DIR, buf, NULL);
        *s = '/';
        if (r)
            return r;
    }
    return 0;
}

int lcl_skeleton_build(struct lcl_prov *p)
{
    static const char *const dirs[] = {"/etc", "/work", "/tmp", "/proc", "/dev", "/dev/shm",
                                       "/dev/pts", "/var"};
    static const char *const devs[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                                       "/dev/urandom", "/dev/tty"};
    static const char *const links[][2] = {
        {"/dev/fd", "/proc/self/fd"}, {"/dev/stdin", "/proc/self/fd/0"},
        {"/dev/stdout", "/proc/self/fd/1"}, {"/dev/stderr", "/proc/self/fd/2"},
        {"/dev/ptmx", "pts/ptmx"}, {"/var/tmp", "/tmp"},
    };
    static const char *const texts[][2] = {
        {"/etc/passwd", passwd_text}, {"/etc/group", group_text},
        {"/etc/hosts", hosts_text}, {"/etc/hostname", "sandbox\n"},
        /* slirp4netns's resolver, for network = egress (local-egress.c);
         * without network it answers nothing. */
        {"/etc/resolv.conf", "nameserver 10.0.2.3\n"},
    };
    int r = 0;
    for (size_t i = 0; !r && i < sizeof dirs / sizeof *dirs; i++)
        r = skel_add(p, LCL_SK_DIR, dirs[i], NULL);
    for (size_t i = 0; !r && i < sizeof devs / sizeof *devs; i++)
        r = skel_add(p, LCL_SK_FILE, devs[i], NULL);
    for (size_t i = 0; !r && i < sizeof links / sizeof *links; i++)
        r = skel_add(p, LCL_SK_LINK, links[i][0], links[i][1]);
    for (size_t i = 0; !r && i < p->n_binds; i++) {
        const struct lcl_bind *b = &p->binds[i];
        r = skel_parents(p, b->path);
        if (!r)
            r = skel_add(p, b->link ? LCL_SK_LINK : b->is_dir ? LCL_SK_DIR : LCL_SK_FILE,
                         b->path, b->link);
    }
    for (size_t i = 0; !r && i < sizeof texts / sizeof *texts; i++)
        r = skel_add(p, LCL_SK_FILE, texts[i][0], texts[i][1]);
    if (r)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    if (!(p->skel = lcl_join(p->state_dir, "root")))
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    if (mkdir(p->skel, 0755) < 0 && errno != EEXIST)
        return p->host->set_error(p->h, lcl_err_code(errno), "creating %s: %s", p->skel,
                                  strerror(errno));
    return 0;
}
