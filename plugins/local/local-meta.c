/* plugins/local/local-meta.c - a sandbox's metadata file (meta.json)
 *
 * Written once at create, read by attach and list.  Written to a
 * temporary name and renamed, so a reader never sees half a file.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "local-int.h"

static json_t *kv_to_obj(const sbx_kv_v1 *kv, size_t n)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < n; i++)
        if (json_object_set_new(o, kv[i].key, json_string(kv[i].value)) < 0) {
            json_decref(o);
            return NULL;
        }
    return o;
}

static int obj_to_kv(json_t *o, sbx_kv_v1 **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!json_is_object(o) || json_object_size(o) == 0)
        return 0;
    size_t cnt = json_object_size(o);
    sbx_kv_v1 *kv = calloc(cnt, sizeof *kv);
    if (!kv)
        return SBX_E_NOMEM;
    const char *k;
    json_t *v;
    size_t i = 0;
    json_object_foreach(o, k, v) {
        if (i >= cnt)
            break;
        kv[i].key = strdup(k);
        kv[i].value = strdup(json_is_string(v) ? json_string_value(v) : "");
        i++;
        if (!kv[i - 1].key || !kv[i - 1].value) {
            lcl_kv_free(kv, i);
            return SBX_E_NOMEM;
        }
    }
    *out = kv;
    *n = i;
    return 0;
}

/* @root in one write (json_dumpfd writes token by token). */
static int write_all(int fd, const json_t *root)
{
    char *text = json_dumps(root, JSON_COMPACT);
    if (!text) {
        errno = ENOMEM;
        return -1;
    }
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t n = write(fd, text + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n < 0 ? errno : EIO;
            free(text);
            errno = e;
            return -1;
        }
        off += (size_t)n;
    }
    free(text);
    return 0;
}

int lcl_meta_save(struct lcl_prov *p, const struct lcl_sb *sb)
{
    const sbx_limits_v1 *l = &sb->limits;
    json_t *env = kv_to_obj(sb->env, sb->n_env);
    json_t *labels = kv_to_obj(sb->labels, sb->n_labels);
    json_t *root = NULL;
    if (env && labels)
        root = json_pack("{s:i, s:s, s:s?, s:s?, s:b, s:s?, s:s, s:b, s:I, s:I, s:I, s:I, s:o,"
                         " s:o, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}}",
                         "version", 1, "id", sb->id, "template", sb->template_name,
                         "rootfs", sb->rootfs,
                         "persistent", sb->persistent,
                         /* Whose it is: gc from another state directory
                          * collects it once that one is gone
                          * (local-orphans.c). */
                         "state_dir", sb->persistent ? NULL : p->state_abs,
                         "network", sb->network == SBX_NET_HOST ? "host"
                                    : sb->egress ? "egress" : "none",
                         "work_tmpfs", sb->work_tmpfs,
                         "work_uid", (json_int_t)sb->work_uid,
                         "work_gid", (json_int_t)sb->work_gid,
                         "created_ns", (json_int_t)sb->created_ns,
                         "ttl_ns", (json_int_t)sb->ttl_ns,
                         "env", env, "labels", labels,
                         "limits",
                         "wall_ns", (json_int_t)l->wall_ns,
                         "cpu_ns", (json_int_t)l->cpu_ns,
                         "memory_bytes", (json_int_t)l->memory_bytes,
                         "pids", (json_int_t)l->pids,
                         "nofile", (json_int_t)l->nofile,
                         "fsize_bytes", (json_int_t)l->fsize_bytes,
                         "disk_bytes", (json_int_t)l->disk_bytes,
                         "stdout_bytes", (json_int_t)l->stdout_bytes,
                         "stderr_bytes", (json_int_t)l->stderr_bytes);
    else {
        json_decref(env);
        json_decref(labels);
    }
    if (!root)
        return p->host->set_error(p->h, SBX_E_NOMEM, "building metadata of %s", sb->id);

    /* Relative to the sandbox's directory, never through a link. */
    int ret = SBX_OK;
    int dfd = open(sb->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int fd = dfd < 0 ? -1 : openat(dfd, LCL_META_FILE ".tmp", O_WRONLY | O_CREAT | O_TRUNC |
                                   O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        ret = p->host->set_error(p->h, SBX_E_IO, "writing %s/" LCL_META_FILE ".tmp: %s", sb->dir,
                                 strerror(errno));
    else if (write_all(fd, root) < 0)
        ret = p->host->set_error(p->h, SBX_E_IO, "writing %s/" LCL_META_FILE ".tmp: %s", sb->dir,
                                 strerror(errno));
    else if (renameat(dfd, LCL_META_FILE ".tmp", dfd, LCL_META_FILE) < 0)
        ret = p->host->set_error(p->h, SBX_E_IO, "renaming %s/" LCL_META_FILE ".tmp: %s", sb->dir,
                                 strerror(errno));
    if (fd >= 0)
        close(fd);
    if (dfd >= 0)
        close(dfd);
    json_decref(root);
    return ret;
}

uint64_t lcl_meta_u64(const json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

/* meta.json of @sb, opened through its directory (ours, private, not a
 * link) without following a link: a descriptor, or minus the sbx code
 * with the error set. */
static int open_meta(struct lcl_prov *p, const struct lcl_sb *sb, const char *meta,
                     const char *id)
{
    int dfd = open(sb->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) {
        if (errno == ENOENT)
            return -p->host->set_error(p->h, SBX_E_NOT_FOUND, "no local sandbox '%s' in %s", id,
                                       p->state_dir);
        return -p->host->set_error(p->h, SBX_E_PATH, "sandbox directory %s: %s", sb->dir,
                                   errno == ELOOP || errno == ENOTDIR
                                   ? "a link or not a directory: refused" : strerror(errno));
    }
    int ret = lcl_private_check(p, dfd, sb->dir, "sandbox directory");
    int fd = ret ? -1 : openat(dfd, LCL_META_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    int e = errno;
    close(dfd);
    if (ret)
        return -ret;
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        return fd;
    if (fd >= 0)
        close(fd);
    if (fd < 0 && e == ENOENT)
        return -p->host->set_error(p->h, SBX_E_NOT_FOUND, "no local sandbox '%s' in %s", id,
                                   p->state_dir);
    return -p->host->set_error(p->h, SBX_E_PATH, "%s: %s", meta,
                               fd >= 0 ? "not a regular file: refused"
                               : e == ELOOP ? "a link: refused" : strerror(e));
}

int lcl_meta_load(struct lcl_prov *p, const char *id, struct lcl_sb **out)
{
    *out = NULL;
    if (!lcl_id_valid(id))
        return p->host->set_error(p->h, SBX_E_NOT_FOUND,
                                  "no local sandbox '%s' (not a local sandbox id)", id ? id : "(null)");
    struct lcl_sb *sb = calloc(1, sizeof *sb);
    if (!sb)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    snprintf(sb->id, sizeof sb->id, "%s", id);
    /* Persistent sandboxes are in the state dir, the others in the run
     * dir (local-rundir.c). */
    sb->dir = lcl_join(p->state_dir, id);
    struct stat dst;
    if (sb->dir && p->run_dir && lstat(sb->dir, &dst) < 0 && errno == ENOENT) {
        free(sb->dir);
        sb->dir = lcl_join(p->run_dir, id);
    }
    char *meta = sb->dir ? lcl_join(sb->dir, LCL_META_FILE) : NULL;
    sb->work = sb->dir ? lcl_join(sb->dir, "work") : NULL;
    if (!meta || !sb->work) {
        free(meta);
        lcl_sb_free(sb);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    json_error_t jerr;
    json_t *root = NULL;
    int ret = open_meta(p, sb, meta, id);
    if (ret >= 0) {
        root = json_loadfd(ret, 0, &jerr);
        close(ret);
        ret = root ? 0 : -p->host->set_error(p->h, SBX_E_IO, "%s:%d: %s", meta, jerr.line,
                                             jerr.text);
    }
    free(meta);
    if (!root) {
        lcl_sb_free(sb);
        return -ret;
    }
    json_t *lim = json_object_get(root, "limits");
    sb->limits.wall_ns = lcl_meta_u64(lim, "wall_ns");
    sb->limits.cpu_ns = lcl_meta_u64(lim, "cpu_ns");
    sb->limits.memory_bytes = lcl_meta_u64(lim, "memory_bytes");
    sb->limits.pids = lcl_meta_u64(lim, "pids");
    sb->limits.nofile = lcl_meta_u64(lim, "nofile");
    sb->limits.fsize_bytes = lcl_meta_u64(lim, "fsize_bytes");
    sb->limits.disk_bytes = lcl_meta_u64(lim, "disk_bytes");
    sb->limits.stdout_bytes = lcl_meta_u64(lim, "stdout_bytes");
    sb->limits.stderr_bytes = lcl_meta_u64(lim, "stderr_bytes");
    const char *net = json_string_value(json_object_get(root, "network"));
    sb->network = net && !strcmp(net, "host") ? SBX_NET_HOST : SBX_NET_NONE;
    sb->egress = net && !strcmp(net, "egress");
    sb->persistent = json_is_true(json_object_get(root, "persistent"));
    sb->work_tmpfs = json_is_true(json_object_get(root, "work_tmpfs"));
    /* Made before it was recorded: the one id then shared, 65534. */
    json_t *wu = json_object_get(root, "work_uid"), *wg = json_object_get(root, "work_gid");
    sb->work_uid = json_is_integer(wu) ? (uid_t)json_integer_value(wu) : 65534;
    sb->work_gid = json_is_integer(wg) ? (gid_t)json_integer_value(wg) : 65534;
    sb->created_ns = lcl_meta_u64(root, "created_ns");
    sb->ttl_ns = lcl_meta_u64(root, "ttl_ns");
    const char *tpl = json_string_value(json_object_get(root, "template"));
    if (tpl && !(sb->template_name = strdup(tpl)))
        ret = SBX_E_NOMEM;
    const char *rootfs = json_string_value(json_object_get(root, "rootfs"));
    if (!ret && rootfs && !(sb->rootfs = strdup(rootfs)))
        ret = SBX_E_NOMEM;
    if (!ret)
        ret = obj_to_kv(json_object_get(root, "env"), &sb->env, &sb->n_env);
    if (!ret)
        ret = obj_to_kv(json_object_get(root, "labels"), &sb->labels, &sb->n_labels);
    json_decref(root);
    if (ret) {
        lcl_sb_free(sb);
        return p->host->set_error(p->h, ret, "out of memory reading sandbox %s", id);
    }
    *out = sb;
    return SBX_OK;
}
