/* plugins/local/cgroup/cgroup.c - one cgroup per exec (v1 or v2)
 *
 * v1: memory (limit + memsw = limit, so no swap), pids, cpuacct and
 * freezer, each under <mount>/<cgroup_root>/<id>-<pid>-<start>-<n> (<start>:
 * the supervisor's start time, so a reused pid is told apart; see
 * lcl_cg_stale).  v2: one
 * directory under /sys/fs/cgroup/<cgroup_root> with memory.max,
 * memory.swap.max = 0, memory.oom.group, pids.max; killed by cgroup.kill.
 * The kill path freezes first on v1 so a fork bomb cannot outrun it.
 *
 * The primitives: the slots reused across execs (slots.c) are built on
 * them, and this file knows nothing of slots.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include <linux/magic.h>

#include "../local-int.h"

/* Where a unified hierarchy is looked for (a macro so a developer can
 * try the v2 code on a hybrid host's /sys/fs/cgroup/unified). */
#ifndef LCL_CG2_MOUNT
#define LCL_CG2_MOUNT "/sys/fs/cgroup"
#endif

static const char *const ctrl_names[LCL_CG_NCTRL] = {"memory", "pids", "cpuacct", "freezer"};

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Does @opts (comma-separated super options) name @ctrl? */
static bool has_opt(const char *opts, const char *ctrl)
{
    size_t n = strlen(ctrl);
    for (const char *s = opts; s && *s;) {
        const char *c = strchr(s, ',');
        size_t len = c ? (size_t)(c - s) : strlen(s);
        if (len == n && !strncmp(s, ctrl, n))
            return true;
        s = c ? c + 1 : NULL;
    }
    return false;
}

/* The usual case, after the first run: every controller mounted at
 * /sys/fs/cgroup/<name> with our writable <cgroup_root> in it, which a
 * file only that controller has proves.  Then nothing else is probed
 * (mountinfo, mkdir); otherwise probe_v1 does it all.  Returns true when
 * it filled @cg. */
static bool probe_v1_fast(struct lcl_cgroups *cg, const char *root_name)
{
    static const char *const own_file[LCL_CG_NCTRL] = {
        "memory.limit_in_bytes", "pids.max", "cpuacct.usage", "freezer.state"};
    char path[LCL_PATH_MAX];
    for (int i = 0; i < LCL_CG_NCTRL; i++) {
        snprintf(path, sizeof path, LCL_CG2_MOUNT "/%s/%s/%s", ctrl_names[i], root_name,
                 own_file[i]);
        if (access(path, F_OK) < 0)
            return false;
        *strrchr(path, '/') = '\0';
        if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) < 0)
            return false;
    }
    for (int i = 0; i < LCL_CG_NCTRL; i++) {
        snprintf(path, sizeof path, LCL_CG2_MOUNT "/%s", ctrl_names[i]);
        if (!(cg->mount[i] = strdup(path)) || !(cg->base[i] = lcl_join(path, root_name)))
            return false; /* out of memory: the slow path says so */
        cg->usable[i] = true;
    }
    snprintf(path, sizeof path, "%s/memory.memsw.limit_in_bytes", cg->base[LCL_CG_MEMORY]);
    cg->memsw = access(path, F_OK) == 0;
    if (!cg->memsw)
        cg->why = strdup("memory.memsw absent (swap accounting off): swap not limited");
    cg->version = 1;
    return true;
}

static void probe_v1(struct lcl_prov *p, const char *root_name)
{
    struct lcl_cgroups *cg = &p->cg;
    if (probe_v1_fast(cg, root_name))
        return;
    lcl_cg_free(cg);
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f) {
        cg->why = strdup("cannot read /proc/self/mountinfo");
        return;
    }
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        /* id parent maj:min root mountpoint opts ... - fstype source superopts */
        char *sep = strstr(line, " - ");
        if (!sep)
            continue;
        char fstype[32], src[64], sopts[512], mnt[LCL_PATH_MAX];
        if (sscanf(sep + 3, "%31s %63s %511s", fstype, src, sopts) != 3 || strcmp(fstype, "cgroup"))
            continue;
        if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
            continue;
        for (int i = 0; i < LCL_CG_NCTRL; i++)
            if (!cg->mount[i] && has_opt(sopts, ctrl_names[i]))
                cg->mount[i] = strdup(mnt);
    }
    free(line);
    fclose(f);

    cg->version = 1;
    char why[512] = "";
    for (int i = 0; i < LCL_CG_NCTRL; i++) {
        if (!cg->mount[i]) {
            snprintf(why + strlen(why), sizeof why - strlen(why), "%s%s: not mounted",
                     *why ? "; " : "", ctrl_names[i]);
            continue;
        }
        cg->base[i] = lcl_join(cg->mount[i], root_name);
        if (!cg->base[i])
            continue;
        if (mkdir(cg->base[i], 0755) < 0 && errno != EEXIST) {
            snprintf(why + strlen(why), sizeof why - strlen(why), "%s%s: mkdir %s: %s",
                     *why ? "; " : "", ctrl_names[i], cg->base[i], strerror(errno));
            continue;
        }
        /* The effective ids write it (AT_EACCESS): a set-user-ID root
         * program's real ids are its caller's. */
        if (faccessat(AT_FDCWD, cg->base[i], W_OK, AT_EACCESS) < 0) {
            snprintf(why + strlen(why), sizeof why - strlen(why), "%s%s: %s not writable",
                     *why ? "; " : "", ctrl_names[i], cg->base[i]);
            continue;
        }
        cg->usable[i] = true;
    }
    if (cg->usable[LCL_CG_MEMORY]) {
        char *f2 = lcl_join(cg->base[LCL_CG_MEMORY], "memory.memsw.limit_in_bytes");
        cg->memsw = f2 && access(f2, F_OK) == 0;
        free(f2);
        if (!cg->memsw)
            snprintf(why + strlen(why), sizeof why - strlen(why),
                     "%smemory.memsw absent (swap accounting off): swap not limited", *why ? "; " : "");
    }
    if (*why)
        cg->why = strdup(why);
}

/* The top of the cgroup v2 subtree delegated to us, under @mount: the
 * highest ancestor of our own cgroup (/proc/self/cgroup "0::PATH") that
 * is ours and in which we may move processes (its cgroup.procs is
 * writable), such as systemd's user@UID.service when the user's
 * manager has Delegate=yes; NULL when there is none. */
static char *delegated_root(const char *mount)
{
    char line[LCL_PATH_MAX], *best = NULL;
    FILE *f = fopen("/proc/self/cgroup", "re");
    bool found = false;

    if (!f)
        return NULL;
    while (!found && fgets(line, sizeof line, f))
        found = !strncmp(line, "0::/", 4);
    fclose(f);
    if (!found)
        return NULL;
    line[strcspn(line, "\n")] = '\0';
    char *dir = lcl_join(mount, line + 4);
    while (dir && strlen(dir) > strlen(mount)) {
        char procs[LCL_PATH_MAX];
        struct stat st;
        snprintf(procs, sizeof procs, "%s/cgroup.procs", dir);
        if (stat(dir, &st) != 0 || st.st_uid != geteuid() ||
            faccessat(AT_FDCWD, procs, W_OK, AT_EACCESS) != 0)
            break;
        free(best);
        if (!(best = strdup(dir)))
            break;
        *strrchr(dir, '/') = '\0';
    }
    free(dir);
    return best;
}

static void probe_v2(struct lcl_prov *p, const char *mount, const char *root_name)
{
    struct lcl_cgroups *cg = &p->cg;
    char path[512], why[2048] = "";
    cg->version = 2;
    cg->v2_base = lcl_join(mount, root_name);
    if (!cg->v2_base)
        return;
    /* Not root: the top level is not ours, a delegated subtree may be;
     * our cgroups go below its top (which holds no process itself), and
     * its controllers are what its parent gave it. */
    char *deleg = p->root || ((mkdir(cg->v2_base, 0755) == 0 || errno == EEXIST) &&
                              faccessat(AT_FDCWD, cg->v2_base, W_OK, AT_EACCESS) == 0)
                  ? NULL : delegated_root(mount);
    if (deleg) {
        free(cg->v2_base);
        cg->v2_base = lcl_join(deleg, root_name);
        mount = deleg;
        if (!cg->v2_base) {
            free(deleg);
            return;
        }
    }
    static const char *const ctl[] = {"+memory", "+pids", "+cpu"};
    int r;
    /* One at a time: a missing controller must not block the others. */
    snprintf(path, sizeof path, "%s/cgroup.subtree_control", mount);
    for (size_t i = 0; i < 3; i++)
        lcl_write_file(path, ctl[i]);
    if (mkdir(cg->v2_base, 0755) < 0 && errno != EEXIST) {
        snprintf(why + strlen(why), sizeof why - strlen(why), "%smkdir %s: %s (no delegation)",
                 *why ? "; " : "", cg->v2_base, strerror(errno));
        cg->why = strdup(why);
        free(deleg);
        return;
    }
    snprintf(path, sizeof path, "%s/cgroup.subtree_control", cg->v2_base);
    for (size_t i = 0; i < 3; i++)
        if ((r = lcl_write_file(path, ctl[i])) < 0)
            snprintf(why + strlen(why), sizeof why - strlen(why), "%senabling %s in %s: %s",
                     *why ? "; " : "", ctl[i] + 1, path, strerror(-r));
    char on[256];
    if (lcl_read_file(path, on, sizeof on) >= 0) {
        cg->usable[LCL_CG_MEMORY] = strstr(on, "memory") != NULL;
        cg->usable[LCL_CG_PIDS] = strstr(on, "pids") != NULL;
        cg->usable[LCL_CG_CPUACCT] = true; /* cpu.stat usage exists without the cpu controller */
        cg->usable[LCL_CG_FREEZER] = true; /* cgroup.freeze is core */
    } else {
        snprintf(why + strlen(why), sizeof why - strlen(why), "%scannot read %s",
                 *why ? "; " : "", path);
    }
    snprintf(path, sizeof path, "%s/memory.swap.max", cg->v2_base);
    cg->memsw = cg->usable[LCL_CG_MEMORY] && access(path, F_OK) == 0;
    snprintf(path, sizeof path, "%s/cgroup.kill", cg->v2_base);
    cg->v2_kill = access(path, F_OK) == 0;
    if (*why)
        cg->why = strdup(why);
    free(deleg);
}

void lcl_cg_probe(struct lcl_prov *p, const char *root_name)
{
    struct statfs sf;
    if (statfs(LCL_CG2_MOUNT, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
        probe_v2(p, LCL_CG2_MOUNT, root_name);
    else
        probe_v1(p, root_name);
    bool any = false;
    for (int i = 0; i < LCL_CG_NCTRL; i++)
        any |= p->cg.usable[i];
    if (!any)
        p->cg.version = 0;
}

void lcl_cg_free(struct lcl_cgroups *cg)
{
    for (int i = 0; i < LCL_CG_NCTRL; i++) {
        free(cg->mount[i]);
        free(cg->base[i]);
    }
    free(cg->v2_base);
    free(cg->why);
    memset(cg, 0, sizeof *cg);
}

static int knob(struct lcl_prov *p, const char *dir, const char *name, const char *val)
{
    char path[LCL_PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int r = lcl_write_file(path, val);
    if (r < 0)
        return p->host->set_error(p->h, lcl_err_code(-r), "writing '%s' to %s: %s", val, path,
                                  strerror(-r));
    return 0;
}

/* Field 22 of /proc/<pid>/stat: start time in clock ticks since boot,
 * or 0 when unknown (the process is gone). */
static unsigned long long proc_start(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    if (lcl_read_file(path, buf, sizeof buf) < 0)
        return 0;
    /* The command name may hold spaces and parentheses: after the last ')'. */
    char *s = strrchr(buf, ')');
    if (!s)
        return 0;
    unsigned long long v = 0;
    if (sscanf(s + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
                      "%*d %*d %llu", &v) != 1)
        return 0;
    return v;
}

/* Ours, once per process (a forked child asks again). */
unsigned long long lcl_cg_self_start(void)
{
    static _Atomic pid_t cached_pid;
    static _Atomic unsigned long long cached;
    pid_t pid = getpid();
    if (atomic_load(&cached_pid) != pid) {
        atomic_store(&cached, proc_start(pid));
        atomic_store(&cached_pid, pid);
    }
    return atomic_load(&cached);
}

static void discard(struct lcl_prov *p, struct lcl_cg_run *run)
{
    lcl_cg_drain(p, run);
    lcl_cg_rmdirs(p, run);
}

int lcl_cg_fresh(struct lcl_prov *p, struct lcl_sb *sb, struct lcl_cg_run *run)
{
    static atomic_uint seq;
    char name[SBX_ID_MAX + 64], val[32];
    memset(run, 0, sizeof *run);
    run->v2fd = -1;
    run->pool_fd = -1;
    if (p->cg.version == 0)
        return 0;
    snprintf(name, sizeof name, "%s-%ld-%llu-%u", sb->id, (long)getpid(), lcl_cg_self_start(),
             atomic_fetch_add(&seq, 1));
    run->active = true;
    int ret = 0;
    if (p->cg.version == 2) {
        if (!(run->v2dir = lcl_join(p->cg.v2_base, name)))
            return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        if (mkdir(run->v2dir, 0755) < 0) {
            ret = p->host->set_error(p->h, lcl_err_code(errno), "creating cgroup %s: %s",
                                     run->v2dir, strerror(errno));
            free(run->v2dir);
            run->v2dir = NULL;
            return ret;
        }
        if (p->cg.usable[LCL_CG_MEMORY]) {
            snprintf(val, sizeof val, "%" PRIu64, sb->limits.memory_bytes);
            ret = knob(p, run->v2dir, "memory.max", val);
            if (!ret && p->cg.memsw)
                ret = knob(p, run->v2dir, "memory.swap.max", "0");
            if (!ret)
                ret = knob(p, run->v2dir, "memory.oom.group", "1");
        }
        if (!ret && p->cg.usable[LCL_CG_PIDS]) {
            snprintf(val, sizeof val, "%" PRIu64, sb->limits.pids + 1);
            ret = knob(p, run->v2dir, "pids.max", val);
        }
        if (!ret) {
            run->v2fd = open(run->v2dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
            if (run->v2fd < 0)
                ret = p->host->set_error(p->h, SBX_E_IO, "opening cgroup %s: %s", run->v2dir,
                                         strerror(errno));
        }
        if (ret)
            discard(p, run);
        return ret;
    }
    for (int i = 0; i < LCL_CG_NCTRL && !ret; i++) {
        if (!p->cg.usable[i])
            continue;
        if (!(run->dir[i] = lcl_join(p->cg.base[i], name))) {
            ret = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
            break;
        }
        if (mkdir(run->dir[i], 0755) < 0) {
            ret = p->host->set_error(p->h, lcl_err_code(errno), "creating cgroup %s: %s",
                                     run->dir[i], strerror(errno));
            free(run->dir[i]);
            run->dir[i] = NULL;
            break;
        }
    }
    if (!ret && run->dir[LCL_CG_MEMORY]) {
        snprintf(val, sizeof val, "%" PRIu64, sb->limits.memory_bytes);
        ret = knob(p, run->dir[LCL_CG_MEMORY], "memory.limit_in_bytes", val);
        if (!ret && p->cg.memsw)
            ret = knob(p, run->dir[LCL_CG_MEMORY], "memory.memsw.limit_in_bytes", val);
    }
    if (!ret && run->dir[LCL_CG_PIDS]) {
        /* +1: the sandbox's init is not the payload's. */
        snprintf(val, sizeof val, "%" PRIu64, sb->limits.pids + 1);
        ret = knob(p, run->dir[LCL_CG_PIDS], "pids.max", val);
    }
    if (ret)
        discard(p, run);
    return ret;
}

/* @joined: the child is in its cgroups already (v2 CLONE_INTO_CGROUP, or
 * v1 through the tasks files it wrote itself). */
int lcl_cg_attach(struct lcl_prov *p, struct lcl_cg_run *run, pid_t pid, bool joined)
{
    char val[32];
    snprintf(val, sizeof val, "%ld", (long)pid);
    if (!run->active || joined)
        return 0;
    if (run->v2dir)
        return knob(p, run->v2dir, "cgroup.procs", val);
    for (int i = 0; i < LCL_CG_NCTRL; i++) {
        if (!run->dir[i])
            continue;
        int ret = knob(p, run->dir[i], "cgroup.procs", val);
        if (ret)
            return ret;
    }
    return 0;
}

/* v1: open each controller's `tasks` file for the child to join by
 * itself.  A task that writes "0" to `tasks` moves only itself, which the
 * kernel does without taking the global threadgroup lock; a write of
 * another pid to cgroup.procs takes it and waits out an RCU grace period
 * (8-30 ms here), the largest cost of a run.  The file was opened by us,
 * so the write is checked against our credentials, not the child's. */
int lcl_cg_open_tasks(struct lcl_prov *p, struct lcl_cg_run *run, int fds[LCL_CG_NCTRL])
{
    char path[LCL_PATH_MAX];
    for (int i = 0; i < LCL_CG_NCTRL; i++)
        fds[i] = -1;
    if (!run->active || run->v2dir)
        return 0;
    for (int i = 0; i < LCL_CG_NCTRL; i++) {
        if (!run->dir[i])
            continue;
        snprintf(path, sizeof path, "%s/tasks", run->dir[i]);
        fds[i] = open(path, O_WRONLY | O_CLOEXEC);
        if (fds[i] < 0) {
            int e = errno;
            for (int j = 0; j < i; j++)
                if (fds[j] >= 0)
                    close(fds[j]);
            return p->host->set_error(p->h, lcl_err_code(e), "opening %s: %s", path,
                                      strerror(e));
        }
    }
    return 0;
}

/* The directory whose cgroup.procs lists every member. */
static const char *procs_dir(struct lcl_cg_run *run)
{
    if (run->v2dir)
        return run->v2dir;
    for (int i = 0; i < LCL_CG_NCTRL; i++)
        if (run->dir[i])
            return run->dir[i];
    return NULL;
}

/* SIGKILL every pid listed; returns how many were listed. */
static int kill_listed(const char *dir)
{
    char path[LCL_PATH_MAX], buf[65536];
    snprintf(path, sizeof path, "%s/cgroup.procs", dir);
    if (lcl_read_file(path, buf, sizeof buf) < 0)
        return 0;
    int n = 0;
    for (char *s = buf; *s;) {
        char *end;
        long pid = strtol(s, &end, 10);
        if (end == s)
            break;
        if (pid > 0) {
            kill((pid_t)pid, SIGKILL);
            n++;
        }
        s = end;
        while (*s == '\n')
            s++;
    }
    return n;
}

void lcl_cg_kill(struct lcl_prov *p, struct lcl_cg_run *run)
{
    if (!run->active)
        return;
    char path[LCL_PATH_MAX];
    if (run->v2dir) {
        snprintf(path, sizeof path, "%s/cgroup.kill", run->v2dir);
        if (p->cg.v2_kill && lcl_write_file(path, "1") == 0)
            return;
        snprintf(path, sizeof path, "%s/cgroup.freeze", run->v2dir);
        lcl_write_file(path, "1");
        kill_listed(run->v2dir);
        lcl_write_file(path, "0");
        return;
    }
    const char *fz = run->dir[LCL_CG_FREEZER];
    if (fz) {
        char state[32];
        snprintf(path, sizeof path, "%s/freezer.state", fz);
        lcl_write_file(path, "FROZEN");
        /* FREEZING can linger on a busy task; bounded wait then go on. */
        for (int i = 0; i < 50; i++) {
            if (lcl_read_file(path, state, sizeof state) < 0 || !strncmp(state, "FROZEN", 6))
                break;
            sleep_ms(1);
        }
        kill_listed(fz);
        lcl_write_file(path, "THAWED");
    } else if (procs_dir(run)) {
        for (int i = 0; i < 20 && kill_listed(procs_dir(run)) > 0; i++)
            ;
    }
}

int64_t lcl_cg_cpu_ns(struct lcl_prov *p, struct lcl_cg_run *run)
{
    char path[LCL_PATH_MAX];
    uint64_t v;
    if (run->v2dir) {
        snprintf(path, sizeof path, "%s/cpu.stat", run->v2dir);
        return lcl_read_keyed_u64(path, "usage_usec", &v) == 0 ? (int64_t)(v * 1000) : -1;
    }
    if (!run->dir[LCL_CG_CPUACCT])
        return -1;
    snprintf(path, sizeof path, "%s/cpuacct.usage", run->dir[LCL_CG_CPUACCT]);
    return lcl_read_u64(path, &v) == 0 ? (int64_t)v : -1;
}

int64_t lcl_cg_peak(struct lcl_prov *p, struct lcl_cg_run *run)
{
    char path[LCL_PATH_MAX];
    uint64_t v;
    if (run->v2dir)
        snprintf(path, sizeof path, "%s/memory.peak", run->v2dir);
    else if (run->dir[LCL_CG_MEMORY])
        snprintf(path, sizeof path, "%s/memory.max_usage_in_bytes", run->dir[LCL_CG_MEMORY]);
    else
        return -1;
    return lcl_read_u64(path, &v) == 0 ? (int64_t)v : -1;
}

uint64_t lcl_cg_oom_kills(struct lcl_prov *p, struct lcl_cg_run *run)
{
    char path[LCL_PATH_MAX];
    uint64_t v = 0;
    if (run->counted)
        return run->oom;
    if (run->v2dir)
        snprintf(path, sizeof path, "%s/memory.events", run->v2dir);
    else if (run->dir[LCL_CG_MEMORY])
        snprintf(path, sizeof path, "%s/memory.oom_control", run->dir[LCL_CG_MEMORY]);
    else
        return 0;
    return lcl_read_keyed_u64(path, "oom_kill", &v) == 0 ? v : 0;
}

uint64_t lcl_cg_pids_max_hits(struct lcl_prov *p, struct lcl_cg_run *run)
{
    char path[LCL_PATH_MAX];
    uint64_t v = 0;
    const char *dir = run->v2dir ? run->v2dir : run->dir[LCL_CG_PIDS];
    if (run->counted)
        return run->pids_hits;
    if (!dir)
        return 0;
    snprintf(path, sizeof path, "%s/pids.events", dir);
    return lcl_read_keyed_u64(path, "max", &v) == 0 ? v : 0;
}

bool lcl_cg_drain(struct lcl_prov *p, struct lcl_cg_run *run)
{
    if (run->v2fd >= 0)
        close(run->v2fd);
    run->v2fd = -1;
    const char *pd = procs_dir(run);
    bool empty = false;
    if (pd) {
        char path[LCL_PATH_MAX], buf[64];
        snprintf(path, sizeof path, "%s/cgroup.procs", pd);
        for (int i = 0; i < 2000; i++) {
            int n = lcl_read_file(path, buf, sizeof buf);
            if (n <= 0) {
                empty = n == 0;
                break;
            }
            if (i % 100 == 99)
                lcl_cg_kill(p, run);
            sleep_ms(1);
        }
    }
    return empty;
}

void lcl_cg_rmdirs(struct lcl_prov *p, struct lcl_cg_run *run)
{
    char *dirs[LCL_CG_NCTRL + 1];
    int n = 0;
    for (int i = 0; i < LCL_CG_NCTRL; i++)
        dirs[n++] = run->dir[i];
    dirs[n++] = run->v2dir;
    for (int i = 0; i < n; i++) {
        if (!dirs[i])
            continue;
        int tries = 0, err = 0;
        while ((err = rmdir(dirs[i]) < 0 ? errno : 0) == EBUSY && tries++ < 100)
            sleep_ms(2);
        if (err && err != ENOENT)
            p->host->log(p->h, SBX_LOG_WARNING, "cgroup %s could not be removed: %s", dirs[i],
                         strerror(err));
        free(dirs[i]);
    }
    memset(run, 0, sizeof *run);
    run->v2fd = run->pool_fd = -1;
}

/* Is the supervisor that named the cgroup @name (<id>-<pid>-<start>-<n>,
 * or before start times were recorded <id>-<pid>-<n>) gone?  Only a
 * certain answer says yes: its pid is free, or now belongs to a process
 * started at another time.  An old-style name whose pid is alive is
 * left alone (it may be its owner). */
bool lcl_cg_stale(const char *name)
{
    if (strncmp(name, LCL_ID_PREFIX, sizeof LCL_ID_PREFIX - 1))
        return false;
    const char *s = strchr(name + sizeof LCL_ID_PREFIX - 1, '-');
    if (!s)
        return false;
    char *end;
    errno = 0;
    unsigned long pid = strtoul(s + 1, &end, 10);
    if (errno || end == s + 1 || *end != '-' || pid == 0 || pid > 4194304)
        return false;
    const char *rest = end + 1;
    unsigned long long start = strtoull(rest, &end, 10);
    bool has_start = end != rest && *end == '-';
    if ((pid_t)pid == getpid())
        return has_start && start != lcl_cg_self_start();
    if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
        return true;
    if (!has_start)
        return false;
    unsigned long long now = proc_start((pid_t)pid);
    return now != 0 && now != start;
}

/* An empty cgroup goes; one that still holds a process (its init is
 * dying of the supervisor's death) is left for the next time: rmdir says
 * EBUSY.  Every hierarchy, whatever the others say. */
bool lcl_cg_remove(struct lcl_prov *p, const char *name)
{
    char path[LCL_PATH_MAX];
    bool gone = true;
    if (p->cg.version == 2) {
        snprintf(path, sizeof path, "%s/%s", p->cg.v2_base, name);
        gone = rmdir(path) == 0 || errno == ENOENT;
    } else {
        for (int i = 0; i < LCL_CG_NCTRL; i++) {
            if (!p->cg.usable[i])
                continue;
            snprintf(path, sizeof path, "%s/%s", p->cg.base[i], name);
            if (rmdir(path) < 0 && errno != ENOENT)
                gone = false;
        }
    }
    if (gone)
        p->host->log(p->h, SBX_LOG_DEBUG, "removed the cgroup %s of a supervisor that is gone",
                     name);
    return gone;
}
