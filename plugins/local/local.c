/* plugins/local/local.c - the local provider: descriptor and lifecycle ops
 *
 * A sandbox is a state directory <state>/<id>/ holding meta.json and
 * work/ (a tmpfs with the disk limit when we are root).  Its processes
 * live only during an exec (launch/exec.c); what persists is the work
 * directory.  See README.md for the design and what each setting does.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "local-int.h"

#define LCL_CAPS (SBX_CAP_FILES | SBX_CAP_PERSISTENT | SBX_CAP_LABELS | SBX_CAP_STREAM | \
                  SBX_CAP_STDIN | SBX_CAP_NETWORK_POLICY | SBX_CAP_LIST | SBX_CAP_CONCURRENT | \
                  SBX_CAP_MEMORY_LIMIT | SBX_CAP_CPU_STATS | SBX_CAP_ZYGOTE | \
                  SBX_CAP_CANCEL | SBX_CAP_STDIN_STREAM | SBX_CAP_SIGNAL | SBX_CAP_EGRESS)

static const char *const config_keys[] = {
    "cgroup_root", "uid", "gid", "ids", "network", "ro_binds", "cache_dir",
    "work_inodes", "daemon", "egress_loopback", NULL,
};

/* The default range of host ids: above the container ranges of systemd
 * (0x70000000, unused there), one per concurrent init. */
#define IDS_FIRST 1879048192u
#define IDS_COUNT 4096u

/* ---- settings ---- */

/* The [settings] of providers.d/local.ini, read by the core with the
 * grammar of its own (host->settings_read): errors name the file, the
 * line and the key. */
struct lcl_settings {
    const char *cgroup_root, *ro_binds, *cache_dir;
    int64_t uid, gid, ids, work_inodes; /* -1: unset (their defaults depend on each other) */
    int network;                         /* index in net_choices */
    int daemon;                          /* index in daemon_choices */
    int egress_loopback;
};

static const char *const net_choices[] = { "none", "allow-host", NULL };
static const char *const daemon_choices[] = { "auto", "off", NULL };

static const char *plain_name(const char *v)
{
    if (!strcmp(v, ".") || !strcmp(v, ".."))
        return "use a plain name ([A-Za-z0-9._-])";
    for (const char *s = v; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '-' || *s == '_' || *s == '.'))
            return "use a plain name ([A-Za-z0-9._-])";
    return NULL;
}

#define ID_MAX "4294967294" /* (uid_t)-1 is "no id" */
static const sbx_setting_v1 settings_table[] = {
    { .key = "cgroup_root", .type = SBX_SETTING_STRING, .def = "polysandbox",
      .check = plain_name, .offset = offsetof(struct lcl_settings, cgroup_root) },
    { .key = "uid", .type = SBX_SETTING_INT, .min = "1", .max = ID_MAX,
      .offset = offsetof(struct lcl_settings, uid) },
    { .key = "gid", .type = SBX_SETTING_INT, .min = "1", .max = ID_MAX,
      .offset = offsetof(struct lcl_settings, gid) },
    { .key = "ids", .type = SBX_SETTING_INT, .min = "1", .max = "1048576",
      .offset = offsetof(struct lcl_settings, ids) },
    { .key = "work_inodes", .type = SBX_SETTING_INT, .def = "16384", .min = "1",
      .max = "16777216", .offset = offsetof(struct lcl_settings, work_inodes) },
    { .key = "network", .type = SBX_SETTING_ENUM, .def = "none", .choices = net_choices,
      .offset = offsetof(struct lcl_settings, network) },
    { .key = "egress_loopback", .type = SBX_SETTING_BOOL, .def = "false",
      .offset = offsetof(struct lcl_settings, egress_loopback) },
    { .key = "daemon", .type = SBX_SETTING_ENUM, .def = "auto", .choices = daemon_choices,
      .offset = offsetof(struct lcl_settings, daemon) },
    { .key = "ro_binds", .type = SBX_SETTING_STRING,
      .offset = offsetof(struct lcl_settings, ro_binds) },
    { .key = "cache_dir", .type = SBX_SETTING_STRING,
      .offset = offsetof(struct lcl_settings, cache_dir) },
    { .key = NULL },
};

static int read_settings(struct lcl_prov *p, struct lcl_settings *set)
{
    int ret;

    *set = (struct lcl_settings){ .uid = -1, .gid = -1, .ids = -1 };
    if ((ret = p->host->settings_read(p->h, settings_table, sizeof settings_table[0], set)))
        return ret;
    /* A uid set alone (as before ids existed) is one id for all; the gid
     * is the uid unless set. */
    p->id_uid = set->uid < 0 ? IDS_FIRST : (uid_t)set->uid;
    p->id_gid = set->gid < 0 ? (gid_t)p->id_uid : (gid_t)set->gid;
    p->id_count = set->ids >= 0 ? (uint64_t)set->ids : set->uid >= 0 ? 1 : IDS_COUNT;
    if ((uint64_t)p->id_uid + p->id_count - 1 > 0xfffffffe ||
        (uint64_t)p->id_gid + p->id_count - 1 > 0xfffffffe)
        return p->host->set_error(p->h, SBX_E_CONFIG,
                                  "providers.d/local.ini: uid/gid %lu/%lu and ids = %llu pass the "
                                  "largest id", (unsigned long)p->id_uid,
                                  (unsigned long)p->id_gid, (unsigned long long)p->id_count);
    /* 1000 is what work directories' files are stored as: never a
     * process's id. */
    if (p->id_count > 1 &&
        ((p->id_uid <= LCL_SANDBOX_UID && LCL_SANDBOX_UID < p->id_uid + p->id_count) ||
         (p->id_gid <= LCL_SANDBOX_GID && LCL_SANDBOX_GID < p->id_gid + p->id_count)))
        return p->host->set_error(p->h, SBX_E_CONFIG,
                                  "providers.d/local.ini: the ids from uid %lu/gid %lu (ids = %llu) "
                                  "hold %u, the id work directories' files are stored as",
                                  (unsigned long)p->id_uid, (unsigned long)p->id_gid,
                                  (unsigned long long)p->id_count, LCL_SANDBOX_UID);
    p->host_uid = p->id_uid;
    p->host_gid = p->id_gid;
    p->work_inodes = (uint64_t)set->work_inodes;
    p->allow_host_net = set->network == 1;
    p->egress_loopback = set->egress_loopback;
    if (!p->root) {
        /* Unprivileged: the only id we may map is our own. */
        p->host_uid = getuid();
        p->host_gid = getgid();
    } else if (p->host_uid == 0 || p->host_gid == 0) {
        return p->host->set_error(p->h, SBX_E_CONFIG,
                                  "providers.d/local.ini: uid/gid 0 would make the sandbox user root");
    }
    lcl_ids_probe(p);
    return 0;
}

/* ---- init / fini ---- */

static void local_fini(void *prov)
{
    struct lcl_prov *p = prov;
    if (!p)
        return;
    lcl_zyg_fini(p);
    lcl_layout_free(p);
    lcl_cg_free(&p->cg);
    lcl_limits_free(p);
    free(p->bpf);
    free(p->seccomp_why);
    free(p->state_dir);
    free(p->run_dir);
    free(p->state_abs);
    free(p->skel);
    free(p->skel_shared);
    free(p->locald_path);
    free(p);
}

static int local_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov)
{
    *prov = NULL;
    if (!host || host->struct_size < offsetof(sbx_host_v1, state_dir) + sizeof host->state_dir)
        return SBX_E_INVAL;
    struct lcl_prov *p = calloc(1, sizeof *p);
    if (!p)
        return host->set_error(h, SBX_E_NOMEM, "out of memory");
    p->host = host;
    p->h = h;
    p->root = geteuid() == 0;
    p->ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    /* The capabilities this kernel knows: the child drops exactly those
     * (dropping past the last fails with EINVAL, 20-odd wasted calls). */
    char capbuf[16];
    long cap_last = lcl_read_file("/proc/sys/kernel/cap_last_cap", capbuf, sizeof capbuf) > 0
                    ? strtol(capbuf, NULL, 10) : 63;
    p->cap_last = cap_last > 0 && cap_last < 64 ? (int)cap_last : 63;
    struct lcl_settings set;
    int ret = read_settings(p, &set);
    const char *sd = ret ? NULL : host->state_dir(h);
    if (!ret && (!sd || !*sd))
        ret = host->set_error(h, SBX_E_CONFIG, "no state directory for the local provider");
    if (!ret && !(p->state_dir = strdup(sd)))
        ret = host->set_error(h, SBX_E_NOMEM, "out of memory");
    if (!ret)
        ret = lcl_private_dir(p, p->state_dir, "state directory");
    if (!ret)
        lcl_run_dir_probe(p);
    if (!ret)
        ret = lcl_layout_hidden(p);
    if (!ret)
        ret = lcl_layout_probe(p, set.ro_binds, set.cache_dir);
    if (!ret)
        ret = lcl_skeleton_build(p);
    if (!ret)
        ret = lcl_skel_shared_init(p);
    if (!ret)
        ret = lcl_locald_init(p, daemon_choices[set.daemon]);
    if (ret) {
        local_fini(p);
        return ret;
    }
    lcl_cg_probe(p, set.cgroup_root);
    /* What goes unenforced is told at each create (jail/limits.c). */
    lcl_limits_probe(p);
    if (p->cg.version == 0 || p->cg.why)
        host->log(h, SBX_LOG_INFO, "cgroups: %s (see 'polysandbox doctor')",
                  p->cg.why ? p->cg.why : "not usable");
    *prov = p;
    return SBX_OK;
}

/* ---- create / attach / release / destroy ---- */

static int new_id(struct lcl_prov *p, char id[SBX_ID_MAX])
{
    unsigned char rnd[8];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        return p->host->set_error(p->h, SBX_E_IO, "getrandom: %s", strerror(errno));
    int n = snprintf(id, SBX_ID_MAX, LCL_ID_PREFIX);
    for (size_t i = 0; i < sizeof rnd; i++)
        n += snprintf(id + n, (size_t)(SBX_ID_MAX - n), "%02x", rnd[i]);
    return 0;
}

static int local_create(void *prov, const sbx_create_spec_v1 *spec, void **sbp, char id[SBX_ID_MAX])
{
    struct lcl_prov *p = prov;
    *sbp = NULL;
    if (!spec || spec->struct_size < offsetof(sbx_create_spec_v1, ttl_ns))
        return p->host->set_error(p->h, SBX_E_INVAL, "create: bad spec");
    if (spec->network == SBX_NET_HOST && !p->allow_host_net)
        return p->host->set_error(p->h, SBX_E_PERM,
                                  "host network requested but providers.d/local.ini does not "
                                  "set network = allow-host");
    if (spec->network != SBX_NET_HOST && spec->network != SBX_NET_NONE)
        return p->host->set_error(p->h, SBX_E_INVAL, "unknown network policy %d", (int)spec->network);
    bool egress = spec->struct_size >= offsetof(sbx_create_spec_v1, egress) + sizeof spec->egress &&
                  spec->egress;
    if (egress && spec->network == SBX_NET_HOST)
        return p->host->set_error(p->h, SBX_E_INVAL, "network host and egress at once");
    if (egress && lcl_egress_check(p))
        return SBX_E_NOTSUP;
    int lr = lcl_limits_report(p);   /* refused: before anything is made */
    if (lr)
        return lr;
    for (size_t i = 0; i < spec->n_env; i++)
        if (!spec->env[i].key || !*spec->env[i].key || strchr(spec->env[i].key, '=') ||
            !spec->env[i].value)
            return p->host->set_error(p->h, SBX_E_INVAL, "sandbox environment entry %zu: bad name '%s'",
                                      i, spec->env[i].key ? spec->env[i].key : "(null)");

    /* An image that is an absolute path is a root file system directory
     * (checked here, shown read-only as /); an image name is refused,
     * never ignored: we cannot pull or run one (the core passes no
     * template's image to a SBX_PROVIDER_F_HOST_ROOT provider). */
    if (spec->image && *spec->image && spec->image[0] != '/')
        return p->host->set_error(p->h, SBX_E_NOTSUP, "provider local cannot run image '%s': it "
                                  "runs on the host's system directories and takes only an "
                                  "image directory (an absolute path)", spec->image);
    char *rootfs = NULL;
    int rr = lcl_layout_rootfs(p, spec->image, &rootfs);
    if (rr)
        return rr;

    struct lcl_sb *sb = calloc(1, sizeof *sb);
    if (!sb) {
        free(rootfs);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    sb->rootfs = rootfs;
    int ret = 0;
    for (int tries = 0;; tries++) {
        if ((ret = new_id(p, sb->id)))
            goto fail_free;
        free(sb->dir);
        if (!(sb->dir = lcl_join(lcl_sb_base(p, spec->persistent != 0), sb->id))) {
            ret = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
            goto fail_free;
        }
        if (mkdir(sb->dir, 0700) == 0)
            break;
        /* ENOENT: another process removed the emptied run dir just now. */
        if ((errno != EEXIST && errno != ENOENT) || tries > 8) {
            ret = p->host->set_error(p->h, lcl_err_code(errno), "creating %s: %s", sb->dir,
                                     strerror(errno));
            goto fail_free;
        }
    }
    sb->limits = spec->limits;
    sb->network = spec->network;
    sb->egress = egress;
    sb->persistent = spec->persistent != 0;
    sb->created_ns = lcl_now_unix();
    sb->ttl_ns = spec->ttl_ns;
    if (!(sb->work = lcl_join(sb->dir, "work")) ||
        (spec->template_name && !(sb->template_name = strdup(spec->template_name))) ||
        lcl_kv_copy(spec->env, spec->n_env, &sb->env) ||
        lcl_kv_copy(spec->labels, spec->n_labels, &sb->labels)) {
        ret = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        goto fail_tree;
    }
    sb->work_uid = p->host_uid;
    sb->work_gid = p->host_gid;
    sb->n_env = sb->env ? spec->n_env : 0;
    sb->n_labels = sb->labels ? spec->n_labels : 0;
    if (mkdir(sb->work, 0755) < 0) {
        ret = p->host->set_error(p->h, lcl_err_code(errno), "creating %s: %s", sb->work, strerror(errno));
        goto fail_tree;
    }
    if (p->root) {
        char opts[160];
        snprintf(opts, sizeof opts, "size=%llu,nr_inodes=%llu,mode=0755,uid=%lu,gid=%lu",
                 (unsigned long long)spec->limits.disk_bytes, (unsigned long long)p->work_inodes,
                 (unsigned long)p->host_uid, (unsigned long)p->host_gid);
        if (mount("tmpfs", sb->work, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
            ret = p->host->set_error(p->h, lcl_err_code(errno), "mount tmpfs (%s) on %s: %s", opts,
                                     sb->work, strerror(errno));
            goto fail_tree;
        }
        sb->work_tmpfs = true;
    }
    if ((ret = lcl_meta_save(p, sb)))
        goto fail_tree;
    snprintf(id, SBX_ID_MAX, "%s", sb->id);
    *sbp = sb;
    return SBX_OK;

fail_tree:
    if (sb->work_tmpfs)
        umount2(sb->work, MNT_DETACH | UMOUNT_NOFOLLOW);
    lcl_rm_tree(sb->dir);
    lcl_run_dir_tidy(p, sb->dir);
fail_free:
    lcl_sb_free(sb);
    return ret;
}

/* A template with a zygote (spec->zygote, ABI 1.12) forks the command
 * from a warm interpreter when it can; SBX_E_NOTSUP from that path means
 * nothing started: the command then runs afresh, on a clean outcome. */
static int local_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                      const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    struct lcl_prov *p = prov;
    if (!spec || spec->struct_size < offsetof(sbx_exec_spec_v1, stderr_cap) + sizeof spec->stderr_cap)
        return p->host->set_error(p->h, SBX_E_INVAL, "exec: bad spec");
    if (spec->struct_size >= offsetof(sbx_exec_spec_v1, zygote) + sizeof spec->zygote &&
        spec->zygote) {
        /* An older core's outcome may be shorter than ours. */
        size_t n = out->struct_size < sizeof(sbx_exec_outcome_v1) ? out->struct_size
                                                                   : sizeof(sbx_exec_outcome_v1);
        sbx_exec_outcome_v1 before;
        memcpy(&before, out, n);
        int ret = lcl_zyg_exec(p, sb, spec->zygote, spec, sink, out);
        if (ret != SBX_E_NOTSUP)
            return ret;
        memcpy(out, &before, n);
    }
    return lcl_exec(p, sb, spec, sink, out);
}

static int local_attach(void *prov, const char *id, void **sb)
{
    int ret = lcl_meta_load(prov, id, (struct lcl_sb **)sb);
    if (!ret)
        lcl_limits_report(prov);    /* the core refuses its execs, if need be */
    return ret;
}

static void local_release(void *prov, void *sb)
{
    lcl_sb_free(sb);
}

/* Kills what another process may still run in this sandbox (every
 * per-exec cgroup named <id>-*), and removes those cgroups when a crashed
 * supervisor left them behind, and those of its execs in pool slots
 * (cgroup/slots.c).  The same pass removes the empty cgroups of other
 * sandboxes whose supervisor died (SIGKILL) before it could. */
static void kill_leftovers(struct lcl_prov *p, struct lcl_sb *sb)
{
    const char *base = p->cg.version == 2 ? p->cg.v2_base
                     : p->cg.usable[LCL_CG_FREEZER] ? p->cg.base[LCL_CG_FREEZER]
                     : p->cg.usable[LCL_CG_PIDS] ? p->cg.base[LCL_CG_PIDS] : NULL;
    DIR *d = base ? opendir(base) : NULL;
    if (!d)
        return;
    size_t n = strlen(sb->id);
    struct dirent *de;
    while ((de = readdir(d))) {
        bool pooled = false;
        if ((strncmp(de->d_name, sb->id, n) || de->d_name[n] != '-') &&
            !(pooled = lcl_cg_pool_owned_by(p, de->d_name, sb))) {
            if (lcl_cg_stale(de->d_name))
                lcl_cg_remove(p, de->d_name);
            continue;
        }
        if (pooled) {
            lcl_cg_pool_kill(p, de->d_name, sb);
            continue; /* its holder gives it back */
        }
        struct lcl_cg_run run;
        memset(&run, 0, sizeof run);
        run.active = true;
        run.v2fd = -1;
        run.pool_fd = -1;
        bool oom = false;
        if (p->cg.version == 2) {
            oom = !(run.v2dir = lcl_join(base, de->d_name));
        } else {
            for (int i = 0; i < LCL_CG_NCTRL; i++)
                if (p->cg.usable[i] && !(run.dir[i] = lcl_join(p->cg.base[i], de->d_name)))
                    oom = true;
        }
        if (!oom)
            lcl_cg_kill(p, &run);
        /* Best effort: a live supervisor elsewhere removes its own. */
        for (int i = 0; i < LCL_CG_NCTRL; i++) {
            if (run.dir[i])
                rmdir(run.dir[i]);
            free(run.dir[i]);
        }
        if (run.v2dir)
            rmdir(run.v2dir);
        free(run.v2dir);
    }
    closedir(d);
}

static int local_destroy(void *prov, void *sbp)
{
    struct lcl_prov *p = prov;
    struct lcl_sb *sb = sbp;
    int ret = SBX_OK;
    kill_leftovers(p, sb);
    /* UMOUNT_NOFOLLOW: work/ swapped for a link must not unmount its target. */
    if (sb->work_tmpfs && umount2(sb->work, MNT_DETACH | UMOUNT_NOFOLLOW) < 0 && errno != EINVAL &&
        errno != ENOENT)
        ret = p->host->set_error(p->h, lcl_err_code(errno), "unmounting %s: %s", sb->work,
                                 strerror(errno));
    int e = lcl_rm_tree(sb->dir);
    if (e < 0 && !ret)
        ret = p->host->set_error(p->h, lcl_err_code(-e), "removing %s: %s", sb->dir, strerror(-e));
    lcl_run_dir_tidy(p, sb->dir);
    lcl_sb_free(sb);
    return ret;
}

/* ---- list / files / health / doctor ---- */

static bool labels_match(const struct lcl_sb *sb, const sbx_kv_v1 *filter, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        bool found = false;
        for (size_t j = 0; j < sb->n_labels && !found; j++)
            found = !strcmp(sb->labels[j].key, filter[i].key ? filter[i].key : "") &&
                    !strcmp(sb->labels[j].value, filter[i].value ? filter[i].value : "");
        if (!found)
            return false;
    }
    return true;
}

/* The sandboxes in @base (the state dir or the run dir); an absent
 * run dir holds none. */
static int list_dir(struct lcl_prov *p, const char *base, const sbx_kv_v1 *filter,
                    size_t n_filter, sbx_list_cb_v1 cb, void *ud)
{
    DIR *d = opendir(base);
    if (!d) {
        if (errno == ENOENT && base == p->run_dir)
            return 0;
        return p->host->set_error(p->h, lcl_err_code(errno), "listing %s: %s", base,
                                  strerror(errno));
    }
    int ret = 0;
    struct dirent *de;
    while (!ret && (de = readdir(d))) {
        if (!lcl_id_valid(de->d_name))
            continue;
        struct lcl_sb *sb;
        if (lcl_meta_load(p, de->d_name, &sb) != SBX_OK) {
            p->host->log(p->h, SBX_LOG_DEBUG, "skipping %s/%s: unreadable metadata",
                         base, de->d_name);
            continue;
        }
        if (labels_match(sb, filter, n_filter))
            ret = cb(ud, sb->id, sb->labels, sb->n_labels, sb->created_ns);
        lcl_sb_free(sb);
    }
    closedir(d);
    return ret;
}

static int local_list(void *prov, const sbx_kv_v1 *filter, size_t n_filter, sbx_list_cb_v1 cb,
                      void *ud)
{
    struct lcl_prov *p = prov;
    /* gc lists: the cgroups crashed supervisors left go too, and the
     * sandboxes of killed runs whose state directory is gone. */
    lcl_cg_reap_stale(p);
    lcl_orphans_sweep(p);
    int ret = list_dir(p, p->state_dir, filter, n_filter, cb, ud);
    if (!ret && p->run_dir)
        ret = list_dir(p, p->run_dir, filter, n_filter, cb, ud);
    return ret;
}

static int local_upload(void *prov, void *sb, const char *path, const void *data, size_t len,
                        uint32_t mode)
{
    return lcl_file_write(prov, sb, path, data, len, mode);
}

static int local_download(void *prov, void *sb, const char *path, size_t max, void **data,
                          size_t *len)
{
    return lcl_file_read(prov, sb, path, max, data, len);
}

static int local_health(void *prov)
{
    return lcl_health(prov);
}

static const sbx_provider_ops_v1 local_ops;

static void local_doctor(void *prov, sbx_doctor_cb_v1 cb, void *ud)
{
    lcl_doctor(prov, &local_ops, cb, ud);
}

static const sbx_provider_ops_v1 local_ops = {
    .init = local_init,
    .fini = local_fini,
    .create = local_create,
    .exec = local_exec,
    .destroy = local_destroy,
    .attach = local_attach,
    .release = local_release,
    .list = local_list,
    .upload = local_upload,
    .download = local_download,
    .health = local_health,
    .doctor = local_doctor,
};

SBX_PROVIDER_DEFINE_FLAGS("local", PACKAGE_VERSION,
                          "Linux namespaces, cgroups and seccomp on this host",
                          "MIT", LCL_CAPS, SBX_PROVIDER_F_HOST_ROOT, config_keys, NULL,
                          &local_ops);
