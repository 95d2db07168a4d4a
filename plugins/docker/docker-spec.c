/* plugins/docker/docker-spec.c - a create spec as a container: limits to
 * HostConfig, environment, labels, mounts
 *
 * Pure functions (no I/O), so the mapping is unit-tested without a daemon.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docker-int.h"

/* The environment every exec starts from; the sandbox's entries follow
 * and override (Docker merges them over the image's). */
static const char *const base_env[] = {
    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME=" DK_WORKDIR, "LANG=C.UTF-8", "TMPDIR=/tmp", "USER=root", "LOGNAME=root",
};

void dk_limits_format(const sbx_limits_v1 *l, char *out, size_t cap)
{
    snprintf(out, cap,
             "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
             ",%" PRIu64 ",%" PRIu64,
             l->wall_ns, l->cpu_ns, l->memory_bytes, l->pids, l->nofile, l->fsize_bytes,
             l->disk_bytes, l->stdout_bytes, l->stderr_bytes);
}

int dk_limits_parse(const char *s, sbx_limits_v1 *l)
{
    uint64_t *f[] = {&l->wall_ns, &l->cpu_ns, &l->memory_bytes, &l->pids, &l->nofile,
                     &l->fsize_bytes, &l->disk_bytes, &l->stdout_bytes, &l->stderr_bytes};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
        char *end;
        if (!s || *s < '0' || *s > '9')
            return -1;
        *f[i] = strtoull(s, &end, 10);
        if (*end != (i + 1 < sizeof f / sizeof *f ? ',' : '\0'))
            return -1;
        s = end + 1;
    }
    return 0;
}

const char *dk_alias(const char *aliases, const char *name, char *buf, size_t cap)
{
    size_t nl = strlen(name);
    for (const char *s = aliases; s && *s;) {
        s += strspn(s, " \t,");
        size_t n = strcspn(s, " \t,");
        const char *eq = memchr(s, '=', n);
        if (eq && (size_t)(eq - s) == nl && !memcmp(s, name, nl) && n - nl - 1 < cap) {
            memcpy(buf, eq + 1, n - nl - 1);
            buf[n - nl - 1] = '\0';
            if (*buf)
                return buf;
        }
        s += n;
    }
    return name;
}

static int set_new(json_t *o, const char *k, json_t *v)
{
    return v ? json_object_set_new(o, k, v) : -1;
}

json_t *dk_create_body(const struct dk_create_args *a, char *err, size_t errlen)
{
    const sbx_create_spec_v1 *s = a->spec;
    const sbx_limits_v1 *l = &s->limits;
    json_t *body = json_object(), *env = json_array(), *labels = json_object(),
           *hc = json_object(), *mounts = json_array(), *ulimits = json_array();
    int bad = !body || !env || !labels || !hc || !mounts || !ulimits;
    char buf[512];

    for (size_t i = 0; !bad && i < sizeof base_env / sizeof *base_env; i++)
        bad = json_array_append_new(env, json_string(base_env[i])) < 0;
    for (size_t i = 0; !bad && i < s->n_env; i++) {
        const sbx_kv_v1 *kv = &s->env[i];
        if (!kv->key || !*kv->key || strchr(kv->key, '=') || !kv->value) {
            snprintf(err, errlen, "sandbox environment entry %zu: bad name '%s'", i,
                     kv->key ? kv->key : "(null)");
            goto fail;
        }
        char *e = malloc(strlen(kv->key) + strlen(kv->value) + 2);
        if (!e)
            goto nomem;
        sprintf(e, "%s=%s", kv->key, kv->value);
        bad = json_array_append_new(env, json_string(e)) < 0;
        free(e);
    }
    for (size_t i = 0; !bad && i < s->n_labels; i++) {
        const sbx_kv_v1 *kv = &s->labels[i];
        if (!kv->key || !*kv->key || !kv->value ||
            !strncmp(kv->key, DK_LABEL_PREFIX, strlen(DK_LABEL_PREFIX))) {
            snprintf(err, errlen, "label %zu: '%s' is empty or uses the reserved prefix "
                     DK_LABEL_PREFIX, i, kv->key ? kv->key : "(null)");
            goto fail;
        }
        bad = set_new(labels, kv->key, json_string(kv->value));
    }
    if (bad)
        goto nomem;
    dk_limits_format(l, buf, sizeof buf);
    bad = set_new(labels, DK_LABEL_SANDBOX, json_string("1")) ||
          set_new(labels, DK_LABEL_LIMITS, json_string(buf));
    snprintf(buf, sizeof buf, "%" PRIu64, a->now_unix_ns);
    bad = bad || set_new(labels, DK_LABEL_CREATED, json_string(buf));
    if (s->ttl_ns) {
        snprintf(buf, sizeof buf, "%" PRIu64, (a->now_unix_ns + s->ttl_ns) / 1000000000u);
        bad = bad || set_new(labels, DK_LABEL_EXPIRES, json_string(buf));
    }
    if (s->template_name && *s->template_name)
        bad = bad || set_new(labels, DK_LABEL_TEMPLATE, json_string(s->template_name));
    if (a->serve)
        bad = bad || set_new(labels, DK_LABEL_EXEC, json_string("attach"));

    /* The work directory: a tmpfs-backed named volume, so the archive API
     * reaches it (it does not reach HostConfig.Tmpfs) and the disk limit
     * holds.  The helper: a shared volume, read-only. */
    snprintf(buf, sizeof buf, "size=%" PRIu64 ",nr_inodes=%d,mode=0755", l->disk_bytes,
             DK_WORK_INODES);
    char vol[SBX_ID_MAX + 8];
    snprintf(vol, sizeof vol, "%s-work", a->id);
    json_t *work = json_pack("{s:s, s:s, s:s, s:{s:{s:s}, s:{s:s, s:{s:s, s:s, s:s}}}}",
                             "Type", "volume", "Source", vol, "Target", DK_WORKDIR,
                             "VolumeOptions", "Labels", DK_LABEL_SANDBOX, a->id,
                             "DriverConfig", "Name", "local", "Options", "type", "tmpfs",
                             "device", "tmpfs", "o", buf);
    json_t *init = json_pack("{s:s, s:s, s:s, s:b}", "Type", "volume", "Source",
                             a->init_volume, "Target", DK_INIT_DIR, "ReadOnly", 1);
    bad = json_array_append_new(mounts, work) < 0 || bad;
    bad = json_array_append_new(mounts, init) < 0 || bad;
    if (bad)
        goto nomem;

    json_t *nofile = json_pack("{s:s, s:I, s:I}", "Name", "nofile", "Soft", (json_int_t)l->nofile,
                               "Hard", (json_int_t)l->nofile);
    json_t *fsize = json_pack("{s:s, s:I, s:I}", "Name", "fsize", "Soft",
                              (json_int_t)l->fsize_bytes, "Hard", (json_int_t)l->fsize_bytes);
    bad = json_array_append_new(ulimits, nofile) < 0 || bad;
    bad = json_array_append_new(ulimits, fsize) < 0 || bad;
    /* Podman 4.3 refuses nr_inodes in HostConfig.Tmpfs ("unknown mount
     * option"): there /tmp is bounded by its size only. */
    if (a->podman)
        snprintf(buf, sizeof buf, "rw,nosuid,nodev,size=%" PRIu64 ",mode=1777", l->disk_bytes);
    else
        snprintf(buf, sizeof buf, "rw,nosuid,nodev,size=%" PRIu64 ",nr_inodes=%d,mode=1777",
                 l->disk_bytes, DK_WORK_INODES);
    json_t *tmpfs = json_pack("{s:s}", "/tmp", buf);
    bad = set_new(hc, "Tmpfs", tmpfs) || bad;
    bad = bad || set_new(hc, "Memory", json_integer((json_int_t)l->memory_bytes)) ||
          /* Swap equal to memory: no swap at all. */
          set_new(hc, "MemorySwap", json_integer((json_int_t)l->memory_bytes)) ||
          set_new(hc, "PidsLimit", json_integer((json_int_t)l->pids)) ||
          set_new(hc, "NetworkMode", json_string(a->host_network ? "host"
                                                 : a->egress ? "bridge" : "none")) ||
          set_new(hc, "ReadonlyRootfs", json_boolean(a->readonly_rootfs)) ||
          set_new(hc, "CapDrop", json_pack("[s]", "ALL")) ||
          set_new(hc, "CapAdd", json_pack("[sss]", DK_CAPS_HELPER)) ||
          set_new(hc, "SecurityOpt", a->seccomp ? json_pack("[ss]", "no-new-privileges",
                                                            a->seccomp)
                                                : json_pack("[s]", "no-new-privileges")) ||
          /* Podman sets nofile and nproc to 2^20 unless given (runc
           * fails where it lacks CAP_SYS_RESOURCE), and its containers.conf
           * default_ulimits apply only when no Ulimits are: leave them all
           * to its configuration; the helper sets nofile and fsize per exec. */
          (!a->podman && json_object_set(hc, "Ulimits", ulimits)) ||
          json_object_set(hc, "Mounts", mounts) ||
          set_new(hc, "IpcMode", json_string("private")) ||
          /* /dev/shm holds no more than the disk limit (Docker's own
           * default is 64 MiB whatever the limits). */
          set_new(hc, "ShmSize", json_integer((json_int_t)l->disk_bytes));
    if (!bad && a->nano_cpus > 0)
        bad = set_new(hc, "NanoCpus", json_integer(a->nano_cpus));
    if (!bad && a->runtime && *a->runtime)
        bad = set_new(hc, "Runtime", json_string(a->runtime));
    bad = bad || set_new(body, "Image", json_string(a->image)) ||
          set_new(body, "Entrypoint", json_pack("[s]", DK_INIT_PATH)) ||
          set_new(body, "Cmd", json_pack("[s]", a->serve ? "--serve" : "--idle")) ||
          set_new(body, "WorkingDir", json_string(DK_WORKDIR)) ||
          set_new(body, "User", json_string("0:0")) ||
          json_object_set(body, "Env", env) || json_object_set(body, "Labels", labels) ||
          json_object_set(body, "HostConfig", hc) ||
          set_new(body, "NetworkDisabled", json_boolean(!a->host_network && !a->egress)) ||
          set_new(body, "StopSignal", json_string("SIGKILL"));
    /* The exec server talks over the container's stdin and stdout (an
     * attach connection): stdin stays open across attaches, and nothing
     * of it is logged (the default log driver would keep every byte of
     * every exec's output on the daemon's disk). */
    if (!bad && a->serve)
        bad = set_new(body, "OpenStdin", json_true()) ||
              set_new(body, "StdinOnce", json_false()) ||
              set_new(body, "AttachStdin", json_true()) ||
              set_new(body, "AttachStdout", json_true()) ||
              set_new(body, "AttachStderr", json_true()) ||
              set_new(hc, "LogConfig", json_pack("{s:s}", "Type", "none"));
    if (bad)
        goto nomem;
    json_decref(env);
    json_decref(labels);
    json_decref(hc);
    json_decref(mounts);
    json_decref(ulimits);
    return body;
nomem:
    snprintf(err, errlen, "out of memory building the container's configuration");
fail:
    json_decref(body);
    json_decref(env);
    json_decref(labels);
    json_decref(hc);
    json_decref(mounts);
    json_decref(ulimits);
    return NULL;
}
