/* plugins/microvm/microvm.c - the microvm provider: each sandbox a VM
 *
 * Every sandbox is a QEMU `-M microvm` guest with its own kernel (the
 * host's Debian cloud kernel) and an initrd holding the guest agent as
 * PID 1 and python3 (polysandbox-microvm-image builds both).  The agent
 * speaks mv-proto.h over a virtio-serial port whose host end is one end
 * of a socketpair handed to QEMU, so no socket path exists to find.
 * See README.md for what stands and what is next.
 */
#define _GNU_SOURCE
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mv-int.h"

/* Firecracker's VMs boot the one guest, no image (issue 21). */
#define MV_NO_IMAGES "vmm = firecracker boots the one guest that polysandbox-microvm-image" \
    " built (vmm = qemu runs images)"

static const char *const config_keys[] = {
    "qemu", "kernel", "initrd", "accel", "memory", "boot_timeout", "kvm_probe_timeout",
    "snapshot", "vmm", "firecracker", "rootfs", "jailer", "jailer_uid", "jailer_gid",
    "snapshot_memory", "vmm_jail", "vmm_uid", "vmm_gid", "egress_loopback", "image_fs", NULL,
};

static atomic_ulong mv_next_id;

static char *dup_or_default(const char *v, const char *dflt_dir, const char *leaf)
{
    char *s = NULL;

    if (v)
        return strdup(v);
    if (!dflt_dir)
        return NULL;
    if (asprintf(&s, "%s/guest/%s", dflt_dir, leaf) < 0)
        return NULL;
    return s;
}

static int num_setting(struct mv_prov *p, const char *key, uint64_t dflt, uint64_t min,
                       uint64_t max, uint64_t *out)
{
    const char *v = p->host->config_get(p->h, key);
    char *end;

    *out = dflt;
    if (!v)
        return SBX_OK;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || end == v || *end || v[0] == '-' || n < min || n > max)
        return p->host->set_error(p->h, SBX_E_CONFIG,
                                  "microvm: setting %s = \"%s\": not a whole number from %llu to %llu",
                                  key, v, (unsigned long long)min, (unsigned long long)max);
    *out = n;
    return SBX_OK;
}

/* A setting that is @yes (the default) or @no: *on 1 or 0. */
static int two_way(struct mv_prov *p, const char *key, const char *yes, const char *no, int *on)
{
    const char *v = p->host->config_get(p->h, key);

    if (v && strcmp(v, yes) && strcmp(v, no))
        return p->host->set_error(p->h, SBX_E_CONFIG, "microvm: setting %s = \"%s\": not %s"
                                  " or %s", key, v, yes, no);
    *on = !v || !strcmp(v, yes);
    return SBX_OK;
}

static void mv_fini(void *prov)
{
    struct mv_prov *p = prov;

    if (!p)
        return;
    mv_spawn_fini(p);
    mv_qjail_fini(p);
    mv_seal_fini(p);
    free(p->binary);
    free(p->kernel);
    free(p->initrd);
    free(p->rootfs);
    free(p->jailer);
    free(p->accel);
    free(p);
}

static int mv_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov)
{
    struct mv_prov *p = calloc(1, sizeof *p);
    const char *state, *accel, *vmm, *fc, *rootfs, *jailer;
    uint64_t secs;
    int rc, no_loopback = 0;

    if (!p)
        return host->set_error(h, SBX_E_NOMEM, "out of memory");
    p->host = host;
    p->h = h;
    p->vmm = &mv_vmm_qemu;
    state = host->state_dir(h);
    accel = host->config_get(h, "accel");
    if (!accel)
        accel = "auto";
    if (strcmp(accel, "auto") && strcmp(accel, "kvm") && strcmp(accel, "tcg")) {
        rc = host->set_error(h, SBX_E_CONFIG,
                             "microvm: setting accel = \"%s\": not auto, kvm or tcg", accel);
        goto fail;
    }
    if ((rc = two_way(p, "snapshot", "auto", "off", &p->snapshot)) ||
        (rc = two_way(p, "snapshot_memory", "shared", "copy", &p->snap_shared)) ||
        (rc = two_way(p, "vmm_jail", "on", "off", &p->vmm_jail)) ||
        (rc = two_way(p, "egress_loopback", "false", "true", &no_loopback)))
        goto fail;
    p->egress_loopback = !no_loopback; /* mv-net.c */
    /* A firecracker program given is the VMM unless vmm says otherwise. */
    fc = host->config_get(h, "firecracker");
    vmm = host->config_get(h, "vmm");
    if (!vmm)
        vmm = fc ? "firecracker" : "qemu";
    rootfs = host->config_get(h, "rootfs");
    jailer = host->config_get(h, "jailer");
    if (strcmp(vmm, "qemu") && strcmp(vmm, "firecracker")) {
        rc = host->set_error(h, SBX_E_CONFIG,
                             "microvm: setting vmm = \"%s\": not qemu or firecracker", vmm);
        goto fail;
    }
    if (!strcmp(vmm, "firecracker")) {
        if (!strcmp(accel, "tcg")) {
            rc = host->set_error(h, SBX_E_CONFIG, "microvm: vmm = firecracker runs on KVM"
                                 " only: accel = tcg needs vmm = qemu");
            goto fail;
        }
        p->vmm = &mv_vmm_firecracker;
        p->binary = strdup(fc ? fc : "firecracker");
        if ((rootfs && !(p->rootfs = strdup(rootfs))) ||
            (jailer && !(p->jailer = strdup(jailer)))) {
            rc = host->set_error(h, SBX_E_NOMEM, "out of memory");
            goto fail;
        }
    } else if (rootfs || jailer) {
        rc = host->set_error(h, SBX_E_CONFIG, "microvm: setting %s: only with vmm = firecracker"
                             " (%s)", rootfs ? "rootfs" : "jailer",
                             rootfs ? "QEMU's guests boot from their initrd"
                                    : "the jailer is Firecracker's");
        goto fail;
    } else {
        p->binary = dup_or_default(host->config_get(h, "qemu"), NULL, NULL);
        if (!p->binary)
            p->binary = strdup("qemu-system-x86_64");
    }
    p->kernel = dup_or_default(host->config_get(h, "kernel"), state, "vmlinuz");
    p->initrd = dup_or_default(host->config_get(h, "initrd"), state, "initrd.cpio");
    p->accel = strdup(accel);
    if (!p->binary || !p->kernel || !p->initrd || !p->accel || mv_spawn_init(p) != 0 ||
        mv_qjail_init(p) != 0 || mv_seal_init(p) != 0) {
        rc = host->set_error(h, SBX_E_NOMEM, "out of memory");
        goto fail;
    }
    if ((rc = num_setting(p, "memory", 512, 128, 65536, &p->memory_mib)) ||
        (rc = num_setting(p, "boot_timeout", 120, 1, 3600, &secs)))
        goto fail;
    p->boot_timeout_ms = secs * 1000;
    if ((rc = num_setting(p, "kvm_probe_timeout", 15, 1, 600, &secs)))
        goto fail;
    p->kvm_probe_ms = secs * 1000;
    /* The jailer drops to these (default: ours; it must run as root). */
    uint64_t id;
    if ((rc = num_setting(p, "jailer_uid", geteuid(), 0, UINT32_MAX - 1, &id)))
        goto fail;
    p->jail_uid = (unsigned)id;
    if ((rc = num_setting(p, "jailer_gid", getegid(), 0, UINT32_MAX - 1, &id)))
        goto fail;
    p->jail_gid = (unsigned)id;
    /* A root provider's QEMU drops to these (nobody's by default). */
    if ((rc = num_setting(p, "vmm_uid", 65534, 1, UINT32_MAX - 1, &id)))
        goto fail;
    p->vmm_uid = (unsigned)id;
    if ((rc = num_setting(p, "vmm_gid", 65534, 1, UINT32_MAX - 1, &id)))
        goto fail;
    p->vmm_gid = (unsigned)id;
    if (p->vmm != &mv_vmm_qemu)
        p->vmm_jail = 0; /* Firecracker's is its jailer */
    *prov = p;
    return SBX_OK;
fail:
    mv_fini(p);
    return rc;
}

void mv_sandbox_release(struct mv_sandbox *s)
{
    if (!s)
        return;
    if (s->chan >= 0)
        close(s->chan);
    free(s->dir);
    free(s->env);
    free(s);
}

void mv_sandbox_free(struct mv_sandbox *s)
{
    if (!s)
        return;
    if (s->persistent) {
        mv_sandbox_release(s);
        return;
    }
    mv_vmm_stop(s->pid);
    if (s->dir) {
        char path[4200];
        mv_jail_remove(s->dir);
        mv_qjail_remove(s->dir);
        /* Firecracker's sockets after the logs, then the record (list's). */
        const char *leaves[] = { "console.log", "vmm.log", "api.sock", "vsock.sock",
                                 MV_RECORD ".tmp", MV_RECORD };
        for (size_t i = 0; i < sizeof leaves / sizeof leaves[0]; i++) {
            snprintf(path, sizeof path, "%s/%s", s->dir, leaves[i]);
            (void)unlink(path);
        }
        (void)rmdir(s->dir);
    }
    mv_sandbox_release(s);
}

void mv_last_words(const char *dir, char *buf, size_t n)
{
    char path[4200], text[2048];
    const char *leaves[] = { "vmm.log", "console.log" };

    buf[0] = '\0';
    for (size_t i = 0; i < 2 && !buf[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, leaves[i]);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        off_t end = lseek(fd, 0, SEEK_END);
        ssize_t got = pread(fd, text, sizeof text - 1, end > (off_t)sizeof text - 1 ?
                                                           end - (off_t)sizeof text + 1 : 0);
        close(fd);
        if (got <= 0)
            continue;
        text[got] = '\0';
        while (got > 0 && (text[got - 1] == '\n' || text[got - 1] == '\r'))
            text[--got] = '\0';
        char *nl = strrchr(text, '\n');
        /* The kernel's own "reboot: Power down" after the agent's last
         * words (die) says nothing: the line before it does. */
        if (nl && strstr(nl, "] reboot: ")) {
            while (nl > text && (nl[-1] == '\r' || nl[-1] == '\n'))
                nl--;
            *nl = '\0';
            nl = strrchr(text, '\n');
        }
        const char *line = nl ? nl + 1 : text;
        size_t j = 0;
        for (; *line && j + 1 < n; line++)
            buf[j++] = (*line >= 0x20 && *line < 0x7f) ? *line : '?';
        buf[j] = '\0';
    }
}

/* Stops a persistent VM that never became a sandbox, and its files. */
static void persist_undo(struct mv_prov *p, struct mv_sandbox *s)
{
    if (s->pid > 0)
        (void)mv_persist_stop(s->pid, s->start_ticks, s->id);
    s->pid = 0;
    if (s->dir)
        (void)mv_persist_remove(p, s->dir);
}

int mv_boot(struct mv_prov *p, const char *accel, uint64_t timeout_ms, uint64_t disk_bytes,
            const char *persist_id, const struct mv_boot_from *from, struct mv_sandbox **out)
{
    int restore = from && (from->incoming_fd >= 0 || from->snap_state);
    int64_t t0 = mv_now_ms();
    struct mv_sandbox *s = calloc(1, sizeof *s);
    char tmpl[4200], console[4300], log[4300], err[256];
    const char *state = p->host->state_dir(p->h);
    int sv[2] = { -1, -1 }, rc;

    *out = NULL;
    if (!s)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    s->chan = -1;
    s->accel = !strcmp(accel, "kvm") ? "kvm" : "tcg";
    s->vmm = p->vmm;
    if (persist_id) {
        s->persistent = 1;
        snprintf(s->id, sizeof s->id, "%s", persist_id);
        /* A VMM with a connect op (Firecracker) makes the channel itself. */
        if (mv_persist_dir(p, persist_id, 1, tmpl, sizeof tmpl) || !(s->dir = strdup(tmpl)) ||
            (!p->vmm->connect && (sv[1] = mv_persist_listen(s->dir)) < 0)) {
            rc = p->host->set_error(p->h, SBX_E_IO, "microvm: the sandbox's directory %s: %s",
                                    tmpl, strerror(errno));
            goto fail;
        }
    } else if (!state || (mkdir(state, 0700) && errno != EEXIST) ||
        (size_t)snprintf(tmpl, sizeof tmpl, "%s/" MV_EPHEMERAL_DIR "XXXXXX", state) >= sizeof tmpl ||
        !mkdtemp(tmpl) || !(s->dir = strdup(tmpl))) {
        rc = p->host->set_error(p->h, SBX_E_IO, "microvm: a directory for the VM under %s: %s",
                                state ? state : "(no state directory)", strerror(errno));
        goto fail;
    }
    snprintf(console, sizeof console, "%s/console.log", s->dir);
    snprintf(log, sizeof log, "%s/vmm.log", s->dir);
    /* A VMM with a connect op makes the channel itself (vsock). */
    if (!persist_id && !p->vmm->connect && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        rc = p->host->set_error(p->h, SBX_E_IO, "microvm: socketpair: %s", strerror(errno));
        goto fail;
    }
    struct mv_vm_config cfg = {
        .binary = p->binary, .kernel = p->kernel, .initrd = p->initrd, .accel = s->accel,
        .console = console, .log = log, .memory_mib = p->memory_mib,
        .disk_bytes = from ? from->cmdline_disk : disk_bytes, .chan_fd = sv[1],
        .detach = s->persistent, .name = s->persistent ? s->id : NULL,
        .qmp_fd = from ? from->qmp_fd : -1, .incoming_fd = restore ? from->incoming_fd : -1,
        .tsc_khz = from ? from->tsc_khz : 0, .dir = s->dir, .rootfs = p->rootfs,
        .snap_state = from ? from->snap_state : NULL, .snap_mem = from ? from->snap_mem : NULL,
        .jailer = p->jailer, .jail_uid = p->jail_uid, .jail_gid = p->jail_gid,
        .mem_path = from ? from->mem_path : NULL, .mem_share = from ? from->mem_share : 0,
        .mem_fd = from && from->mem_path ? from->mem_fd : -1,
        .image = from ? from->image : NULL, .net = from ? from->net : 0,
    };
    struct mv_qjail *jail = NULL;
    if (p->vmm_jail && mv_qjail_prepare(p, &cfg, &jail, err, sizeof err) != 0) {
        rc = p->host->set_error(p->h, SBX_E_BACKEND, "microvm: jailing %s: %s", p->binary, err);
        goto fail;
    }
    cfg.qjail = jail;
    int started = mv_spawn_start(p, &cfg, &s->pid, err, sizeof err);
    mv_qjail_free(jail);
    if (started != 0) {
        s->pid = 0;
        rc = p->host->set_error(p->h, SBX_E_BACKEND, "microvm: starting %s: %s", p->binary, err);
        goto fail;
    }
    if (sv[1] >= 0)
        close(sv[1]);
    sv[1] = -1;
    if (p->vmm->connect) {
        /* Its start time tells a persistent one from a later process with its pid. */
        if (s->persistent && !(s->start_ticks = mv_proc_start(s->pid))) {
            rc = p->host->set_error(p->h, SBX_E_BACKEND, "microvm: the VM (%s) stopped at once:"
                                    " see %s/vmm.log", p->vmm->name, s->dir);
            goto fail;
        }
        if (p->vmm->connect(&cfg, s->pid, mv_now_ms() + (int64_t)timeout_ms, &s->chan, err,
                            sizeof err) != 0) {
            if (!s->persistent) { /* persist_undo stops a persistent one */
                mv_vmm_stop(s->pid);
                s->pid = 0;
            }
            rc = p->host->set_error(p->h, SBX_E_BACKEND, "microvm: the VM (%s%s): %s",
                                    p->vmm->name, restore ? ", restored from a snapshot" : "",
                                    err);
            goto fail;
        }
    } else if (s->persistent) {
        /* Its start time tells it from a later process with its pid. */
        s->start_ticks = mv_proc_start(s->pid);
        s->chan = mv_persist_connect(s->dir, mv_now_ms() + (int64_t)timeout_ms);
        if (!s->start_ticks || s->chan < 0) {
            rc = p->host->set_error(p->h, SBX_E_BACKEND, "microvm: the VM (%s) stopped at once:"
                                    " see %s/vmm.log", s->accel, s->dir);
            goto fail;
        }
    } else {
        s->chan = sv[0];
        sv[0] = -1;
    }

    struct mv_hello hl;
    int answered;
    /* (the fail path stops the VM) */
    if (restore && from->mem_path &&
        (rc = mv_snap_incoming(p, from->qmp_host, from->incoming_fd)))
        goto fail;
    if (restore)
        rc = mv_snap_seed(p, s, disk_bytes, mv_now_ms() + (int64_t)timeout_ms, &hl, &answered);
    else
        rc = mv_chan_hello(p, s->chan, mv_now_ms() + (int64_t)timeout_ms, &hl, &answered);
    if (rc != SBX_OK && !answered) {
        char words[200];
        if (s->persistent)
            (void)mv_persist_stop(s->pid, s->start_ticks, s->id);
        else
            mv_vmm_stop(s->pid); /* flushes what it wrote */
        s->pid = 0;
        mv_last_words(s->dir, words, sizeof words);
        rc = p->host->set_error(p->h, rc == SBX_E_TIMEOUT ? SBX_E_TIMEOUT : SBX_E_BACKEND,
                                "microvm: the VM (%s, %s%s) %s: %s", s->accel, p->kernel,
                                restore ? ", restored from a snapshot" : "",
                                rc == SBX_E_TIMEOUT ? "did not reach its agent in time"
                                                    : "stopped before its agent answered",
                                words[0] ? words : "nothing on its console");
    }
    if (rc != SBX_OK)
        goto fail;
    s->unenforced = hl.unenforced;
    p->host->log(p->h, SBX_LOG_INFO, "microvm: %s a VM (%s) to its agent in %lld ms",
                 restore ? "restored" : "booted", s->accel, (long long)(mv_now_ms() - t0));
    *out = s;
    return SBX_OK;
fail:
    if (sv[0] >= 0)
        close(sv[0]);
    if (sv[1] >= 0)
        close(sv[1]);
    if (s->persistent)
        persist_undo(p, s);
    mv_sandbox_free(s);
    return rc;
}

static int readable(struct mv_prov *p, const char *what, const char *path)
{
    if (access(path, R_OK) == 0)
        return SBX_OK;
    return p->host->set_error(p->h, SBX_E_CONFIG,
                              "microvm: %s %s: %s (build the guest with polysandbox-microvm-image,"
                              " or set %s in providers.d/microvm.ini)",
                              what, path, strerror(errno), what);
}

/* The sandbox's environment, as the agent takes it. */
static int keep_env(struct mv_prov *p, struct mv_sandbox *s, const sbx_create_spec_v1 *spec)
{
    size_t len = 0;

    for (size_t i = 0; i < spec->n_env; i++)
        len += strlen(spec->env[i].key) + strlen(spec->env[i].value) + 2;
    if (!(s->env = malloc(len + 1)))
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    for (size_t i = 0; i < spec->n_env; i++)
        s->env_len += (size_t)sprintf(s->env + s->env_len, "%s=%s", spec->env[i].key,
                                      spec->env[i].value) + 1;
    s->n_env = spec->n_env;
    return SBX_OK;
}

/* Tells the core which limits the guest cannot apply (create and attach). */
static int say_unenforced(struct mv_prov *p, const struct mv_sandbox *s)
{
    if (!s->unenforced || p->host->struct_size < offsetof(sbx_host_v1, limits_unenforced) +
                                                     sizeof p->host->limits_unenforced ||
        !p->host->limits_unenforced)
        return SBX_OK;
    return p->host->limits_unenforced(p->h, s->unenforced,
                                      "the guest kernel has no cgroup2 or tmpfs for them");
}

/* What vmm = firecracker cannot do, refused before anything starts. */
static int fc_usable(struct mv_prov *p)
{
    char full[4200];

    if (!mv_vmm_path(p->binary, full, sizeof full))
        return p->host->set_error(p->h, SBX_E_CONFIG,
                                  "microvm: vmm = firecracker: no firecracker program at %s (set"
                                  " firecracker = /path/to/firecracker in providers.d/microvm.ini;"
                                  " Debian does not package it, Firecracker's releases do)",
                                  p->binary);
    if (p->jailer && !mv_vmm_path(p->jailer, full, sizeof full))
        return p->host->set_error(p->h, SBX_E_CONFIG,
                                  "microvm: no jailer program at %s (the jailer setting)",
                                  p->jailer);
    return p->rootfs ? readable(p, "rootfs", p->rootfs) : SBX_OK;
}

static int mv_create(void *prov, const sbx_create_spec_v1 *spec, void **sb, char id[SBX_ID_MAX])
{
    struct mv_prov *p = prov;
    struct mv_sandbox *s = NULL;
    char why[512], *image = NULL;
    int rc, net;

    /* An image is a root directory (the core resolved its name in the
     * store); its VMs are restored from its own snapshot. */
    if (spec->image && p->vmm == &mv_vmm_firecracker)
        return p->host->set_error(p->h, SBX_E_NOTSUP, "microvm: image %s: %s", spec->image,
                                  MV_NO_IMAGES);
    if (spec->network != SBX_NET_NONE)
        return p->host->set_error(p->h, SBX_E_NOTSUP,
                                  "microvm: a VM never gets the host's network (network = "
                                  "none, or egress through the template)");
    if ((rc = mv_net_egress(p, spec, &net)))
        return rc;
    if ((rc = readable(p, "kernel", p->kernel)) || (rc = readable(p, "initrd", p->initrd)))
        return rc;
    char new_id[SBX_ID_MAX];
    const char *persist = NULL;
    if (p->vmm == &mv_vmm_firecracker && (rc = fc_usable(p)))
        return rc;
    if (spec->image && (rc = mv_image_for(p, spec->image, &image)))
        return rc;
    struct mv_boot_from img = { .qmp_fd = -1, .incoming_fd = -1, .mem_fd = -1, .qmp_host = -1,
                                .cmdline_disk = spec->limits.disk_bytes, .image = image,
                                .net = net };
    /* A network device is another device model than the snapshot's
     * (and slirp's state would be the builder's): such a VM boots. */
    const struct mv_boot_from *cold = image || net ? &img : NULL;
    if (spec->persistent) {
        mv_persist_new_id(new_id);
        persist = new_id;
    }
    const char *accel = p->vmm == &mv_vmm_firecracker ? "kvm" : mv_accel_choose(p, why, sizeof why);
    if (p->vmm == &mv_vmm_firecracker) {
        /* A jailed VM sees only its chroot: no snapshot there yet. */
        int snap = p->snapshot && !p->jailer;
        rc = snap ? mv_fc_snap_restore(p, spec->limits.disk_bytes, persist, &s) : SBX_E_NOTSUP;
        if (rc != SBX_OK) {
            if (snap)
                p->host->log(p->h, SBX_LOG_INFO, "microvm: no VM from a snapshot; booting one");
            rc = mv_boot(p, accel, p->boot_timeout_ms, spec->limits.disk_bytes, persist, NULL,
                         &s);
        }
    } else if (!strcmp(accel, "probe")) {
        rc = mv_boot(p, "kvm", p->kvm_probe_ms, spec->limits.disk_bytes, persist, cold, &s);
        mv_accel_record(p, rc == SBX_OK);
        if (rc != SBX_OK) {
            p->host->log(p->h, SBX_LOG_INFO,
                         "microvm: no guest booted under KVM within %llu s; using TCG from now on",
                         (unsigned long long)(p->kvm_probe_ms / 1000));
            rc = mv_boot(p, "tcg", p->boot_timeout_ms, spec->limits.disk_bytes, persist, cold,
                         &s);
        }
    } else if (p->snapshot && !net) {
        /* An image's VM from that image's snapshot (mv-snap.c). */
        rc = mv_snap_restore_image(p, accel, spec->limits.disk_bytes, persist, image, &s);
        if (rc != SBX_OK) {
            /* Snapshots are a speed-up: a VM that boots is still a VM. */
            p->host->log(p->h, SBX_LOG_INFO, "microvm: no VM from a snapshot; booting one");
            rc = mv_boot(p, accel, p->boot_timeout_ms, spec->limits.disk_bytes, persist, cold,
                         &s);
        }
    } else {
        rc = mv_boot(p, accel, p->boot_timeout_ms, spec->limits.disk_bytes, persist, cold, &s);
    }
    free(image);
    if (rc != SBX_OK)
        return rc;
    if ((rc = say_unenforced(p, s)))
        goto fail;
    s->limits = spec->limits;
    if ((rc = keep_env(p, s, spec)))
        goto fail;
    if (!s->persistent) {
        /* Its record in its VM's directory lists it while its VMM runs,
         * as the other providers list their one-shot sandboxes. */
        snprintf(s->id, sizeof s->id, "microvm-%ld-%lu", (long)getpid(),
                 atomic_fetch_add(&mv_next_id, 1) + 1);
        s->start_ticks = mv_proc_start(s->pid);
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    if ((rc = mv_persist_save(p, s, spec, (uint64_t)now.tv_sec * 1000000000u +
                                              (uint64_t)now.tv_nsec)))
        goto fail;
    snprintf(id, SBX_ID_MAX, "%s", s->id);
    *sb = s;
    return SBX_OK;
fail:
    if (s->persistent)
        persist_undo(p, s);
    mv_sandbox_free(s);
    return rc;
}

static int mv_destroy(void *prov, void *sb)
{
    struct mv_prov *p = prov;
    struct mv_sandbox *s = sb;
    int rc = SBX_OK;

    if (s && s->persistent) {
        if (s->chan >= 0) {
            close(s->chan);
            s->chan = -1;
        }
        /* A pid that is no longer this VM's (reused, or a record edited)
         * is left alone. */
        if (mv_persist_stop(s->pid, s->start_ticks, s->id) < 0)
            rc = p->host->set_error(p->h, SBX_E_BACKEND,
                                    "microvm: sandbox %s: stopping its VM (pid %ld): %s", s->id,
                                    (long)s->pid, strerror(errno));
        else
            rc = mv_persist_remove(p, s->dir);
    }
    mv_sandbox_free(s);
    return rc;
}

static int mv_attach(void *prov, const char *id, void **sb)
{
    struct mv_prov *p = prov;
    struct mv_sandbox *s;
    int rc;

    if ((rc = mv_persist_load(p, id, &s)))
        return rc;
    /* Connected at its first request (mv_ready): destroy never waits on
     * a busy VM, and one that is gone still opens, to be destroyed. */
    (void)say_unenforced(p, s); /* never refused here: the core refuses the execs */
    *sb = s;
    return SBX_OK;
}

/* An ephemeral sandbox has nothing to come back to: closing it stops it. */
static void mv_release(void *prov, void *sb)
{
    (void)prov;
    mv_sandbox_free(sb);
}

int mv_vmm_path(const char *bin, char *full, size_t n)
{
    const char *path = getenv("PATH");

    if (strchr(bin, '/'))
        return (size_t)snprintf(full, n, "%s", bin) < n && access(bin, X_OK) == 0;
    for (const char *d = path ? path : "/usr/bin:/bin"; *d;) {
        size_t len = strcspn(d, ":");
        if ((size_t)snprintf(full, n, "%.*s/%s", (int)len, d, bin) < n &&
            access(full, X_OK) == 0)
            return 1;
        d += len;
        if (*d == ':')
            d++;
    }
    return 0;
}

static void mv_doctor(void *prov, sbx_doctor_cb_v1 cb, void *ud)
{
    struct mv_prov *p = prov;
    char why[512], detail[4096];
    const char *accel;

    cb(ud, p->vmm->name, mv_vmm_path(p->binary, detail, sizeof detail), p->binary);
    cb(ud, "kernel", access(p->kernel, R_OK) == 0, p->kernel);
    cb(ud, "initrd", access(p->initrd, R_OK) == 0, p->initrd);
    if (p->vmm == &mv_vmm_firecracker) {
        if (p->rootfs)
            cb(ud, "rootfs", access(p->rootfs, R_OK) == 0, p->rootfs);
        cb(ud, "accel", 1, "kvm (Firecracker runs on KVM only)");
        if (p->jailer) {
            cb(ud, "jailer", mv_vmm_path(p->jailer, detail, sizeof detail), p->jailer);
            snprintf(detail, sizeof detail, "off: VMs started through the jailer boot");
        } else {
            mv_fc_snap_describe(p, detail, sizeof detail);
        }
        cb(ud, "snapshot", 1, detail);
        cb(ud, "images", 1, "none: " MV_NO_IMAGES);
        return;
    }
    int ok = mv_qjail_describe(p, detail, sizeof detail);
    cb(ud, "vmm_jail", ok, detail);
    accel = mv_accel_choose(p, why, sizeof why);
    snprintf(detail, sizeof detail, "%s (%s)",
             strcmp(accel, "probe") ? accel : "KVM probed at the first create", why);
    cb(ud, "accel", 1, detail);
    mv_snap_describe(p, strcmp(accel, "probe") ? accel : "tcg", detail, sizeof detail);
    cb(ud, "snapshot", 1, detail);
    ok = mv_image_describe(p, detail, sizeof detail);
    cb(ud, "images", ok, detail);
    mv_net_describe(p, detail, sizeof detail);
    cb(ud, "network", 1, detail);
}

static const sbx_provider_ops_v1 mv_ops = {
    .init = mv_init,
    .fini = mv_fini,
    .create = mv_create,
    .exec = mv_exec,
    .destroy = mv_destroy,
    .attach = mv_attach,
    .release = mv_release,
    .list = mv_list,
    .upload = mv_upload,
    .download = mv_download,
    .doctor = mv_doctor,
};

/* network_policy: none is held by the guest having no network device;
 * host is refused in mv_create.  egress: QEMU's user-mode network,
 * where egress_loopback = true allows it (mv-net.c).  concurrent: each VM is
 * its own QEMU; what creates share (the snapshot, the KVM verdict) is
 * files under a lock or renamed into place, so pools may fill from
 * several threads.  cancel, stdin_stream, signal: mv-xrun.c, over
 * protocol 4's STDIN, WANT and SIGNAL. */
SBX_PROVIDER_DEFINE_FLAGS("microvm", PACKAGE_VERSION,
                          "each sandbox a QEMU microvm guest with its own kernel",
                          "MIT", SBX_CAP_FILES | SBX_CAP_PERSISTENT | SBX_CAP_LABELS |
                              SBX_CAP_LIST | SBX_CAP_STDIN | SBX_CAP_STREAM | SBX_CAP_CANCEL |
                              SBX_CAP_STDIN_STREAM | SBX_CAP_SIGNAL |
                              SBX_CAP_MEMORY_LIMIT | SBX_CAP_CPU_STATS |
                              SBX_CAP_NETWORK_POLICY | SBX_CAP_CONCURRENT | SBX_CAP_EGRESS,
                          SBX_PROVIDER_F_IMAGE_ROOT, config_keys, NULL, &mv_ops);
