/* plugins/local/local-doctor.c - what this host offers the local provider */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "local-int.h"

/* Clones a child into @flags namespaces that exits at once: 0 or errno.
 * Raw clone without SIGCHLD, so the host's handlers never see it. */
static int probe_clone(unsigned long flags)
{
    long pid = syscall(SYS_clone, flags, 0, NULL, NULL, 0);
    if (pid == 0)
        _exit(0);
    if (pid < 0)
        return errno;
    int st;
    while (waitpid((pid_t)pid, &st, __WALL) < 0 && errno == EINTR)
        ;
    return 0;
}

struct doc_sink {
    size_t n;
};

static int doc_write(void *ud, int stream, const void *buf, size_t len)
{
    ((struct doc_sink *)ud)->n += len;
    return 0;
}

/* The go template's read-only build cache (cache_dir/go, which make
 * install builds): advice only where go is installed to use it. */
static void go_cache(const struct lcl_prov *p, sbx_doctor_cb_v1 cb, void *ud)
{
    char path[600], version[128] = "", detail[1600];
    if (!p->cache_dir && p->cache_unbound) {
        snprintf(detail, sizeof detail, "none: advice: the built-in cache_dir %s lies below "
                 "/work or /var/tmp (or a private host tree), where a sandbox cannot see it, "
                 "so the go template builds each sample cold; set cache_dir in "
                 "providers.d/local.ini to a directory outside them", p->cache_unbound);
        cb(ud, "go build cache", 1, detail);
        return;
    }
    if (!p->cache_dir)
        return; /* cache_dir empty: none wanted */
    bool go = access("/usr/bin/go", X_OK) == 0 || access("/usr/local/bin/go", X_OK) == 0;
    snprintf(path, sizeof path, "%s/go/version", p->cache_dir);
    ssize_t n = lcl_read_file(path, version, sizeof version);
    if (n > 0) {
        version[strcspn(version, "\n")] = '\0';
        snprintf(detail, sizeof detail, "%s/go, bound read-only (built by %s; rebuild it "
                 "after upgrading go)", p->cache_dir, version);
    } else if (!go) {
        snprintf(detail, sizeof detail, "none in %s (go is not installed)", p->cache_dir);
    } else {
        snprintf(detail, sizeof detail, "none in %s: advice: the go template builds each "
                 "sample cold; make install builds it (or run go-cache-warm.sh %s/go from "
                 "libexecdir/polysandbox as root)", p->cache_dir, p->cache_dir);
    }
    cb(ud, "go build cache", 1, detail);
}

/* A real exec of /bin/true in a scratch sandbox. */
static void end_to_end(struct lcl_prov *p, const sbx_provider_ops_v1 *ops, sbx_doctor_cb_v1 cb,
                       void *ud)
{
    sbx_create_spec_v1 cs;
    memset(&cs, 0, sizeof cs);
    cs.struct_size = sizeof cs;
    cs.limits = (sbx_limits_v1){10000000000u, 10000000000u, 256u << 20, 64, 256, 1u << 20,
                                16u << 20, 1u << 20, 1u << 20};
    sbx_kv_v1 label = {"purpose", "doctor"};
    cs.labels = &label;
    cs.n_labels = 1;
    void *sb = NULL;
    char id[SBX_ID_MAX], detail[600];
    if (ops->create(p, &cs, &sb, id) != SBX_OK) {
        cb(ud, "run /bin/true in a sandbox", 0, "creating a sandbox failed (see the error)");
        return;
    }
    const char *argv[] = {"true", NULL};
    sbx_exec_spec_v1 es;
    memset(&es, 0, sizeof es);
    es.struct_size = sizeof es;
    es.argv = argv;
    es.timeout_ns = 10000000000u;
    es.stdout_cap = es.stderr_cap = 4096;
    struct doc_sink ds = {0};
    sbx_output_sink_v1 sink = {doc_write, &ds};
    sbx_exec_outcome_v1 out;
    memset(&out, 0, sizeof out);
    out.struct_size = sizeof out;
    int ret = ops->exec(p, sb, &es, &sink, &out);
    if (ret != SBX_OK)
        snprintf(detail, sizeof detail, "exec failed with status code %d (run with "
                 "POLYSANDBOX_LOG=debug for the message)", ret);
    else
        snprintf(detail, sizeof detail, "run status %d, exit code %d, start %.1f ms, "
                 "cpu %lld ns, peak memory %lld bytes", (int)out.status, out.exit_code,
                 (double)out.start_ns / 1e6, (long long)out.cpu_ns, (long long)out.peak_memory_bytes);
    cb(ud, "run /bin/true in a sandbox", ret == SBX_OK && out.status == SBX_RUN_OK, detail);
    ops->destroy(p, sb);
}

/* Host settings that matter to sandboxes (after isolate-check-environment
 * and Firecracker's host checks).  Most are mitigated inside the sandbox
 * by the filter; they are reported so an administrator can also close
 * them for every other process on the host. */
struct sysctl_check {
    const char *path;
    const char *want;          /* the safe value */
    const char *why;
};

static const struct sysctl_check sysctls[] = {
    {"/proc/sys/dev/tty/legacy_tiocsti", "0",
     "TIOCSTI can inject input into a terminal (denied inside by the filter)"},
    {"/proc/sys/kernel/io_uring_disabled", "2",
     "io_uring is reachable by unprivileged processes (denied inside by the filter)"},
    {"/proc/sys/kernel/unprivileged_bpf_disabled", "2",
     "unprivileged BPF (denied inside by the filter)"},
    {"/proc/sys/vm/unprivileged_userfaultfd", "0",
     "userfaultfd eases kernel race exploits (denied inside by the filter)"},
};

static void host_tuning(struct lcl_prov *p, sbx_doctor_cb_v1 cb, void *ud)
{
    char buf[256], detail[512];

    for (size_t i = 0; i < sizeof sysctls / sizeof sysctls[0]; i++) {
        const struct sysctl_check *c = &sysctls[i];
        if (lcl_read_file(c->path, buf, sizeof buf) < 0)
            continue;   /* an older kernel without the knob */
        buf[strcspn(buf, "\n")] = '\0';
        char name[96];
        snprintf(name, sizeof name, "%s", c->path + strlen("/proc/sys/"));
        for (char *s = name; *s; s++)
            *s = *s == '/' ? '.' : *s;
        bool safe = strcmp(buf, c->want) == 0 ||
                    (!strcmp(c->want, "2") && !strcmp(buf, "1")); /* 1 is safe enough */
        if (safe)
            snprintf(detail, sizeof detail, "%s = %s", name, buf);
        else
            snprintf(detail, sizeof detail, "%s = %s: advice: %s; sysctl %s=%s closes it for "
                     "the rest of the host", name, buf, c->why, name, c->want);
        /* Advisory: the sandbox itself does not depend on these. */
        cb(ud, "host setting", 1, detail);
    }

    /* A pipe core_pattern runs a helper as root on every crash. */
    if (lcl_read_file("/proc/sys/kernel/core_pattern", buf, sizeof buf) >= 0) {
        buf[strcspn(buf, "\n")] = '\0';
        snprintf(detail, sizeof detail, "kernel.core_pattern = %s%s", buf,
                 buf[0] == '|' ? ": advice: crashes run a host helper as root; sandboxes "
                                 "set RLIMIT_CORE=0"
                               : "");
        cb(ud, "host setting", 1, detail);
    }

    /* Swap without memsw accounting lets a sandbox exceed its memory limit. */
    int swaps = 0;
    FILE *f = fopen("/proc/swaps", "re");
    if (f) {
        while (fgets(buf, sizeof buf, f))
            swaps++;
        fclose(f);
        swaps = swaps > 0 ? swaps - 1 : 0;   /* the header line */
    }
    bool swap_ok = swaps == 0 || p->cg.memsw;
    snprintf(detail, sizeof detail, "%d swap device%s%s", swaps, swaps == 1 ? "" : "s",
             swap_ok ? (swaps ? "; sandboxes get swap 0" : "")
                     : ": swap is NOT limited, a sandbox can exceed its memory limit in swap");
    cb(ud, "swap", swap_ok, detail);
}

void lcl_doctor(struct lcl_prov *p, const sbx_provider_ops_v1 *ops, sbx_doctor_cb_v1 cb, void *ud)
{
    char detail[1024], buf[64];
    int e;

    snprintf(detail, sizeof detail, p->root
             ? "euid 0: work directories are size-capped tmpfs; the sandbox user maps to host uid %lu"
             : "not root (uid %lu): the work directory is a plain directory, cgroup limits "
               "only where a cgroup v2 subtree is delegated (see limits below)",
             (unsigned long)p->host_uid);
    if (p->root && p->ids_per_exec)
        snprintf(detail, sizeof detail, "euid 0: work directories are size-capped tmpfs (files "
                 "stored as %u, idmapped); each sandbox's init its own host uid of %lu-%llu "
                 "(gids from %lu)", LCL_SANDBOX_UID, (unsigned long)p->id_uid,
                 (unsigned long long)p->id_uid + p->id_count - 1, (unsigned long)p->id_gid);
    cb(ud, "privileges", 1, detail);
    if (p->root && !p->ids_per_exec)
        cb(ud, "host ids", p->id_count == 1,
           p->id_count == 1 ? "one host uid for every sandbox (settings: uid without ids): a "
                              "host process of that uid can signal them all"
                            : "one host uid for every sandbox: this kernel cannot idmap a tmpfs "
                              "mount (Linux 6.3), so per-sandbox ids are off");

    e = probe_clone(CLONE_NEWUSER);
    if (lcl_read_file("/proc/sys/user/max_user_namespaces", buf, sizeof buf) < 0)
        snprintf(buf, sizeof buf, "?");
    buf[strcspn(buf, "\n")] = '\0';
    snprintf(detail, sizeof detail, "%s (user.max_user_namespaces = %s)",
             e ? strerror(e) : "available", buf);
    cb(ud, "user namespaces", e == 0, detail);

    e = probe_clone(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
                    CLONE_NEWUTS);
    cb(ud, "mount, pid, net, ipc and uts namespaces", e == 0, e ? strerror(e) : "available");

    const struct lcl_cgroups *cg = &p->cg;
    if (cg->version == 0) {
        snprintf(detail, sizeof detail, "not usable (%s): CPU time and peak memory are not "
                 "reported (see limits below)",
                 cg->why ? cg->why : "no cgroup controllers found");
        cb(ud, "cgroups", 0, detail);
    } else {
        static const char *const names[] = {"memory", "pids", "cpuacct", "freezer"};
        int off = snprintf(detail, sizeof detail, "cgroup v%d at %s;", cg->version,
                           cg->version == 2 ? cg->v2_base : "/sys/fs/cgroup/<controller>");
        for (int i = 0; i < LCL_CG_NCTRL && off < (int)sizeof detail; i++)
            off += snprintf(detail + off, sizeof detail - (size_t)off, " %s %s%s",
                            cg->version == 2 && i == LCL_CG_CPUACCT ? "cpu" : names[i],
                            cg->usable[i] ? "usable" : "NOT usable", i + 1 < LCL_CG_NCTRL ? "," : "");
        if (off < (int)sizeof detail)
            off += snprintf(detail + off, sizeof detail - (size_t)off, "; swap %s",
                            cg->memsw ? "limited to 0" : "NOT limited (no memsw)");
        if (cg->version == 2 && off < (int)sizeof detail)
            off += snprintf(detail + off, sizeof detail - (size_t)off, "; cgroup.kill %s",
                            cg->v2_kill ? "available" : "absent (freeze and kill instead)");
        if (cg->why && off < (int)sizeof detail)
            snprintf(detail + off, sizeof detail - (size_t)off, " (%s)", cg->why);
        bool all = cg->usable[LCL_CG_MEMORY] && cg->usable[LCL_CG_PIDS] &&
                   cg->usable[LCL_CG_CPUACCT] && cg->memsw;
        cb(ud, "cgroups", all, detail);
    }
    lcl_limits_doctor(p, cb, ud);

    lcl_seccomp_ensure(p);   /* its failure is reported below */
    e = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 ? errno : 0;
    snprintf(detail, sizeof detail, "%s; filter %s", e ? strerror(e) : "kernel supports seccomp",
             p->bpf ? "built" : (p->seccomp_why ? p->seccomp_why : "not built"));
    cb(ud, "seccomp", e == 0 && p->bpf != NULL, detail);

    long fd = syscall(SYS_pidfd_open, getpid(), 0);
    int pidfd_err = fd < 0 ? errno : 0;
    if (fd >= 0)
        close((int)fd);
    long c3 = syscall(SYS_clone3, NULL, 0);
    int c3_err = c3 < 0 ? errno : 0;
    snprintf(detail, sizeof detail, "pidfd_open %s; clone3 %s", pidfd_err ? strerror(pidfd_err) : "ok",
             c3_err == ENOSYS ? "absent (clone + CLONE_PIDFD used)" : "present");
    cb(ud, "pidfd and clone3", pidfd_err == 0, detail);

    long o2 = syscall(SYS_openat2, -1, "", NULL, 0);
    cb(ud, "openat2", !(o2 < 0 && errno == ENOSYS),
       o2 < 0 && errno == ENOSYS ? "absent: file transfer falls back to O_NOFOLLOW walks"
                                 : "present: file transfer uses RESOLVE_BENEATH|NO_SYMLINKS");

    snprintf(detail, sizeof detail, "%s (%zu read-only binds from the host)", p->skel, p->n_binds);
    cb(ud, "sandbox root skeleton", access(p->skel, R_OK | X_OK) == 0, detail);

    /* Only templates with network = egress need it: advice, not a failure. */
    const char *slirp = lcl_egress_binary();
    if (slirp)
        snprintf(detail, sizeof detail, "%s: templates with network = egress connect out, %s",
                 slirp, p->egress_loopback ? "and to the host's loopback as 10.0.2.2 "
                                             "(egress_loopback = true)"
                                           : "not to the host's loopback");
    else
        snprintf(detail, sizeof detail, "advice: not installed: templates with network = "
                 "egress are refused (Debian: apt-get install slirp4netns)");
    cb(ud, "slirp4netns", 1, detail);
    go_cache(p, cb, ud);
    lcl_locald_doctor(p, cb, ud);
    host_tuning(p, cb, ud);
    end_to_end(p, ops, cb, ud);
}

int lcl_health(struct lcl_prov *p)
{
    if (access(p->state_dir, W_OK | X_OK) < 0)
        return p->host->set_error(p->h, SBX_E_IO, "state directory %s: %s", p->state_dir,
                                  strerror(errno));
    if (access(p->skel, X_OK) < 0)
        return p->host->set_error(p->h, SBX_E_IO, "sandbox root skeleton %s: %s", p->skel,
                                  strerror(errno));
    if (access("/proc/self/ns/user", F_OK) < 0)
        return p->host->set_error(p->h, SBX_E_NOTSUP, "this kernel has no user namespaces");
    if (lcl_seccomp_ensure(p) != SBX_OK)
        return SBX_E_INTERNAL;
    return SBX_OK;
}
