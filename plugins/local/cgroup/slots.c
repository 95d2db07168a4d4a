/* plugins/local/cgroup/slots.c - v1 cgroups reused across execs
 *
 * Making the four v1 cgroups of an exec and removing them afterwards
 * (4 mkdir, 3 limit writes, 4 rmdir, and the kernel's work to bring a
 * memory cgroup on and off line) cost ~0.5 ms of a one-shot run.  As
 * root on v1, an exec takes a slot of a pool instead: cgroups named
 * pool-m<memory limit>-p<pids limit>-<k> (so the limits are already
 * written), k < LCL_POOL_MAX, made on first need and kept.
 *
 * - A slot is held with flock(2) on its freezer directory: the kernel
 *   drops the lock when the holder dies, however it dies.
 * - While held, the directory carries the xattr trusted.polysandbox.owner
 *   = "<sandbox id> <pid> <start time>": destroy finds the execs of a
 *   sandbox there (as it finds <id>-* cgroups), and a slot whose xattr
 *   is still there when it is next locked was left by a holder that died
 *   mid-exec: it is removed (rmdir, once empty), never reused.
 * - It goes back to the pool only clean: empty, no OOM kill and no
 *   pids.max hit counted (those counters cannot be reset and the verdict
 *   reads them), less than LCL_POOL_CHARGE_MAX bytes still charged to it
 *   (page cache of files the exec read first, or files it left on a
 *   tmpfs, would otherwise count against the next exec's limit and peak),
 *   with cpuacct.usage and memory.max_usage_in_bytes reset.  Else it is
 *   removed and the next exec that needs it makes it afresh.
 * The freezer directory is made last and removed last, so a slot whose
 * freezer directory exists has its other cgroups and limits.
 *
 * cgroup v2 (the v2 pool): its counters (memory.events oom_kill,
 * pids.events max, cpu.stat, memory.peak) cannot be reset, so a v2
 * cgroup serves one exec only; an exec in-process keeps one fresh
 * cgroup (cgroup/cgroup.c).  polysandbox-locald (cg_v2_slots) makes its
 * v2 cgroups as one-shot slots, pool-m<memory>-p<pids>-d<pid>-<n>, ahead
 * of the request: held with flock and marked with the same xattr as v1
 * slots (destroy finds its execs; a slot unlocked and still marked is
 * its dead holder's and goes), removed when given back.  Unprivileged
 * callers keep one fresh cgroup per exec.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "../local-int.h"

#define LCL_POOL_MAX 16
#define LCL_POOL_CHARGE_MAX (1024 * 1024)
#define POOL_PREFIX "pool-"

static void slot_name(const struct lcl_prov *p, const struct lcl_sb *sb, int k, char *buf,
                      size_t size)
{
    uint64_t mem = p->cg.usable[LCL_CG_MEMORY] ? sb->limits.memory_bytes : 0;
    uint64_t pids = p->cg.usable[LCL_CG_PIDS] ? sb->limits.pids + 1 : 0;
    snprintf(buf, size, POOL_PREFIX "m%" PRIu64 "-p%" PRIu64 "-%d", mem, pids, k);
}

static bool pool_usable(const struct lcl_prov *p)
{
    return p->root && ((p->cg.version == 1 && p->cg.usable[LCL_CG_FREEZER]) ||
                       (p->cg.version == 2 && p->cg_v2_slots));
}

/* May slots of a pool (v1) or of a daemon (v2) be there to find? */
static bool slots_known(const struct lcl_prov *p)
{
    return p->root && ((p->cg.version == 1 && p->cg.usable[LCL_CG_FREEZER]) ||
                       (p->cg.version == 2 && p->cg.v2_base));
}

/* The directory a slot is known (locked, marked) by. */
static const char *slot_base(const struct lcl_prov *p)
{
    return p->cg.version == 2 ? p->cg.v2_base : p->cg.base[LCL_CG_FREEZER];
}

/* Removes slot @name: the other hierarchies first, the freezer last (so
 * a freezer directory always has its siblings).  False if one stays. */
static bool slot_drop(struct lcl_prov *p, const char *name)
{
    char path[LCL_PATH_MAX];
    _Static_assert(LCL_CG_FREEZER == LCL_CG_NCTRL - 1, "the freezer goes last");
    for (int c = 0; c < LCL_CG_NCTRL; c++) {
        if (!p->cg.usable[c])
            continue;
        snprintf(path, sizeof path, "%s/%s", p->cg.base[c], name);
        if (rmdir(path) < 0 && errno != ENOENT) {
            p->host->log(p->h, SBX_LOG_DEBUG, "cgroup slot %s: %s", path, strerror(errno));
            return false;
        }
    }
    return true;
}

static bool knob_ok(const char *dir, const char *name, const char *val)
{
    char path[LCL_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return lcl_write_file(path, val) == 0;
}

/* Makes slot @name with the limits of @sb; the freezer directory last. */
static bool slot_make(struct lcl_prov *p, const struct lcl_sb *sb, const char *name)
{
    char dir[LCL_PATH_MAX], val[32];
    for (int i = 0; i < LCL_CG_NCTRL; i++) {
        if (i == LCL_CG_FREEZER || !p->cg.usable[i])
            continue;
        snprintf(dir, sizeof dir, "%s/%s", p->cg.base[i], name);
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
            return false;
        bool ok = true;
        if (i == LCL_CG_MEMORY) {
            snprintf(val, sizeof val, "%" PRIu64, sb->limits.memory_bytes);
            ok = knob_ok(dir, "memory.limit_in_bytes", val) &&
                 (!p->cg.memsw || knob_ok(dir, "memory.memsw.limit_in_bytes", val));
        } else if (i == LCL_CG_PIDS) {
            snprintf(val, sizeof val, "%" PRIu64, sb->limits.pids + 1);
            ok = knob_ok(dir, "pids.max", val);
        }
        if (!ok) {
            rmdir(dir);
            return false;
        }
    }
    snprintf(dir, sizeof dir, "%s/%s", p->cg.base[LCL_CG_FREEZER], name);
    return mkdir(dir, 0755) == 0 || errno == EEXIST;
}

/* v2: a fresh one-shot slot, locked and marked before its limits are
 * written (so nobody reaps it meanwhile). */
static bool claim_v2(struct lcl_prov *p, const struct lcl_sb *sb, struct lcl_cg_run *run,
                     const char *owner, size_t olen)
{
    static unsigned seq;
    char name[128], val[32];
    slot_name(p, sb, 0, name, sizeof name);
    name[strlen(name) - 1] = '\0'; /* without the k */
    size_t nl = strlen(name);
    snprintf(name + nl, sizeof name - nl, "d%ld-%u", (long)getpid(), seq++);
    char *dir = lcl_join(p->cg.v2_base, name);
    if (!dir || mkdir(dir, 0755) < 0) {
        free(dir);
        return false;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), v2fd = -1;
    bool ok = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
              fsetxattr(fd, LCL_POOL_XATTR, owner, olen, 0) == 0;
    if (ok && p->cg.usable[LCL_CG_MEMORY]) {
        snprintf(val, sizeof val, "%" PRIu64, sb->limits.memory_bytes);
        ok = knob_ok(dir, "memory.max", val) &&
             (!p->cg.memsw || knob_ok(dir, "memory.swap.max", "0")) &&
             knob_ok(dir, "memory.oom.group", "1");
    }
    if (ok && p->cg.usable[LCL_CG_PIDS]) {
        snprintf(val, sizeof val, "%" PRIu64, sb->limits.pids + 1);
        ok = knob_ok(dir, "pids.max", val);
    }
    if (ok)
        v2fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (v2fd < 0) {
        if (fd >= 0)
            close(fd);
        rmdir(dir);
        free(dir);
        return false;
    }
    run->v2dir = dir;
    run->v2fd = v2fd;
    run->pool_fd = fd;
    run->active = true;
    return true;
}

bool lcl_cg_pool_claim(struct lcl_prov *p, const struct lcl_sb *sb, struct lcl_cg_run *run,
                       unsigned long long start)
{
    if (!pool_usable(p))
        return false;
    char name[96], path[LCL_PATH_MAX], owner[SBX_ID_MAX + 64];
    int olen = snprintf(owner, sizeof owner, "%s %ld %llu", sb->id, (long)getpid(), start);
    if (p->cg.version == 2)
        return claim_v2(p, sb, run, owner, (size_t)olen);
    for (int k = 0; k < LCL_POOL_MAX; k++) {
        slot_name(p, sb, k, name, sizeof name);
        snprintf(path, sizeof path, "%s/%s", p->cg.base[LCL_CG_FREEZER], name);
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT && slot_make(p, sb, name))
            fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
            return false;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
            close(fd);
            continue; /* another exec's */
        }
        if (faccessat(fd, "tasks", F_OK, 0) < 0) {
            close(fd);
            continue; /* removed (dirty, or trimmed) between our open and our lock */
        }
        char old[8];
        if (fgetxattr(fd, LCL_POOL_XATTR, old, sizeof old) >= 0 || errno == ERANGE) {
            /* Its holder died mid-exec: not reused. */
            slot_drop(p, name);
            close(fd);
            continue;
        }
        if (errno != ENODATA || fsetxattr(fd, LCL_POOL_XATTR, owner, (size_t)olen, 0) < 0) {
            close(fd); /* no xattrs here: no pool */
            return false;
        }
        bool oom = false;
        for (int i = 0; i < LCL_CG_NCTRL; i++)
            if (p->cg.usable[i]) {
                snprintf(path, sizeof path, "%s/%s", p->cg.base[i], name);
                oom |= !(run->dir[i] = strdup(path));
            }
        if (oom) {
            for (int i = 0; i < LCL_CG_NCTRL; i++) {
                free(run->dir[i]);
                run->dir[i] = NULL;
            }
            fremovexattr(fd, LCL_POOL_XATTR);
            close(fd);
            return false;
        }
        run->pool_fd = fd;
        run->active = true;
        return true;
    }
    return false;
}

/* Clean enough for the next exec?  (Called once the slot is empty.) */
static bool slot_clean(struct lcl_prov *p, struct lcl_cg_run *run)
{
    char path[LCL_PATH_MAX];
    uint64_t v;
    if (lcl_cg_oom_kills(p, run) || lcl_cg_pids_max_hits(p, run))
        return false;
    const char *mem = run->dir[LCL_CG_MEMORY];
    if (mem) {
        snprintf(path, sizeof path, "%s/memory.usage_in_bytes", mem);
        if (lcl_read_u64(path, &v) < 0 || v > LCL_POOL_CHARGE_MAX)
            return false;
        if (!knob_ok(mem, "memory.max_usage_in_bytes", "0"))
            return false;
    }
    if (run->dir[LCL_CG_CPUACCT] && !knob_ok(run->dir[LCL_CG_CPUACCT], "cpuacct.usage", "0"))
        return false;
    return true;
}

void lcl_cg_pool_release(struct lcl_prov *p, struct lcl_cg_run *run, bool empty)
{
    if (run->v2dir) {
        /* One-shot; if it stays (busy), its mark has it reaped later. */
        if (rmdir(run->v2dir) < 0 && errno != ENOENT)
            p->host->log(p->h, SBX_LOG_DEBUG, "cgroup slot %s: %s", run->v2dir, strerror(errno));
        close(run->pool_fd);
        run->pool_fd = -1;
        (void)empty;
        return;
    }
    const char *fz = run->dir[LCL_CG_FREEZER];
    const char *name = fz ? strrchr(fz, '/') + 1 : NULL;
    if (!(empty && slot_clean(p, run) && fremovexattr(run->pool_fd, LCL_POOL_XATTR) == 0) && name)
        slot_drop(p, name); /* if it stays (busy), its xattr marks it: never reused */
    close(run->pool_fd); /* unlocks */
    run->pool_fd = -1;
}

bool lcl_cg_pool_owned_by(struct lcl_prov *p, const char *name, const struct lcl_sb *sb)
{
    char path[LCL_PATH_MAX], owner[SBX_ID_MAX + 64], mine[96];
    const char *id = sb->id;
    if (!slots_known(p))
        return false;
    /* Its execs have its limits: only slots of those can be theirs (one
     * getxattr per such slot, not per slot of the pool). */
    slot_name(p, sb, 0, mine, sizeof mine);
    size_t ml = strlen(mine) - 1; /* without the k */
    if (strncmp(name, mine, ml))
        return false;
    snprintf(path, sizeof path, "%s/%s", slot_base(p), name);
    ssize_t n = getxattr(path, LCL_POOL_XATTR, owner, sizeof owner - 1);
    if (n <= 0)
        return false;
    owner[n] = '\0';
    size_t il = strlen(id);
    return !strncmp(owner, id, il) && owner[il] == ' ';
}

/* list/gc: a slot whose holder died mid-exec goes, and free slots past
 * LCL_POOL_KEEP of each limits too (a burst of concurrent execs, or
 * limits no longer used, leaves no more than that for long). */
#define LCL_POOL_KEEP 2
bool lcl_cg_pool_reap(struct lcl_prov *p, const char *name)
{
    char path[LCL_PATH_MAX], old[8];
    if (strncmp(name, POOL_PREFIX, sizeof POOL_PREFIX - 1) || !slots_known(p))
        return false;
    snprintf(path, sizeof path, "%s/%s", slot_base(p), name);
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool gone = false;
    if (p->cg.version == 2) {
        /* A daemon's one-shot slot: unlocked and marked, its holder is gone. */
        if (flock(fd, LOCK_EX | LOCK_NB) == 0 &&
            (fgetxattr(fd, LCL_POOL_XATTR, old, sizeof old) >= 0 || errno == ERANGE))
            gone = rmdir(path) == 0;
        close(fd);
        return gone;
    }
    const char *k = strrchr(name, '-');
    /* Unlocked yet marked: its holder died mid-exec. */
    if (flock(fd, LOCK_EX | LOCK_NB) == 0 &&
        (fgetxattr(fd, LCL_POOL_XATTR, old, sizeof old) >= 0 || errno == ERANGE ||
         (k && atoi(k + 1) >= LCL_POOL_KEEP)))
        gone = slot_drop(p, name);
    close(fd);
    return gone;
}

/* SIGKILLs the members of slot @name if, both before and after they were
 * listed, it was held for an exec of @sb: a slot changes hands, and the
 * next holder's exec (another sandbox's) must never be hit.  Members
 * listed while the mark named @sb (ids are never reused, and another
 * exec of @sb is one destroy must end too) are @sb's.  Frozen meanwhile,
 * so none forks past the kill. */
void lcl_cg_pool_kill(struct lcl_prov *p, const char *name, const struct lcl_sb *sb)
{
    char path[LCL_PATH_MAX], buf[65536], state[32];
    if (p->cg.version == 2 && slots_known(p)) {
        /* One-shot: it never changes hands, only its mark goes idle. */
        snprintf(path, sizeof path, "%s/%s/cgroup.kill", p->cg.v2_base, name);
        if (lcl_cg_pool_owned_by(p, name, sb) && lcl_write_file(path, "1") < 0) {
            snprintf(path, sizeof path, "%s/%s", p->cg.v2_base, name);
            struct lcl_cg_run run;
            memset(&run, 0, sizeof run);
            run.active = true;
            run.v2fd = run.pool_fd = -1;
            run.v2dir = path;
            lcl_cg_kill(p, &run);
        }
        return;
    }
    if (!p->cg.usable[LCL_CG_FREEZER])
        return;
    snprintf(path, sizeof path, "%s/%s/freezer.state", p->cg.base[LCL_CG_FREEZER], name);
    lcl_write_file(path, "FROZEN");
    for (int i = 0; i < 50; i++) {
        if (lcl_read_file(path, state, sizeof state) < 0 || !strncmp(state, "FROZEN", 6))
            break;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    char procs[LCL_PATH_MAX];
    snprintf(procs, sizeof procs, "%s/%s/cgroup.procs", p->cg.base[LCL_CG_FREEZER], name);
    if (lcl_cg_pool_owned_by(p, name, sb) && lcl_read_file(procs, buf, sizeof buf) > 0 &&
        lcl_cg_pool_owned_by(p, name, sb)) {
        for (char *s = buf; *s;) {
            char *end;
            long pid = strtol(s, &end, 10);
            if (end == s)
                break;
            if (pid > 0)
                kill((pid_t)pid, SIGKILL);
            for (s = end; *s == '\n'; s++)
                ;
        }
    }
    lcl_write_file(path, "THAWED");
}

/* ---- an exec's cgroup: a slot when one can be had, else a fresh one ---- */

int lcl_cg_create(struct lcl_prov *p, struct lcl_sb *sb, struct lcl_cg_run *run)
{
    memset(run, 0, sizeof *run);
    run->v2fd = -1;
    run->pool_fd = -1;
    if (p->cg.version == 0)
        return 0;
    if (lcl_cg_pool_claim(p, sb, run, lcl_cg_self_start()))
        return 0;
    return lcl_cg_fresh(p, sb, run);
}

void lcl_cg_destroy(struct lcl_prov *p, struct lcl_cg_run *run)
{
    bool empty = lcl_cg_drain(p, run);
    if (run->pool_fd < 0) {
        lcl_cg_rmdirs(p, run);
        return;
    }
    lcl_cg_pool_release(p, run, empty);
    for (int i = 0; i < LCL_CG_NCTRL; i++)
        free(run->dir[i]);
    free(run->v2dir);
    memset(run, 0, sizeof *run);
    run->v2fd = run->pool_fd = -1;
}

int lcl_cg_reap_stale(struct lcl_prov *p)
{
    if (p->cg.version == 0)
        return 0;
    /* The freezer first: pool slots are known by theirs. */
    int ctl = p->cg.usable[LCL_CG_FREEZER] ? LCL_CG_FREEZER : -1;
    for (int i = 0; i < LCL_CG_NCTRL && ctl < 0; i++)
        if (p->cg.usable[i])
            ctl = i;
    const char *base = p->cg.version == 2 ? p->cg.v2_base : ctl >= 0 ? p->cg.base[ctl] : NULL;
    DIR *d = base ? opendir(base) : NULL;
    if (!d)
        return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (lcl_cg_stale(de->d_name) ? lcl_cg_remove(p, de->d_name)
                                     : lcl_cg_pool_reap(p, de->d_name))
            n++;
    closedir(d);
    return n;
}
