/* plugins/local/local-limits.c - which limits this host lets us enforce
 *
 * Every limit is asked for; a limit this provider cannot apply is told to
 * the core (host->limits_unenforced, ABI 1.5) when a sandbox is created
 * or opened, and the core refuses the sandbox unless the administrator
 * allowed it (unenforced_limits).  What needs what:
 *
 *  - memory: a memory cgroup (v1, or v2 with the controller, ours or
 *    delegated to us).  Without one each process gets RLIMIT_DATA of the
 *    limit as a floor, which bounds one process, not the sandbox.
 *  - pids: a pids cgroup, else RLIMIT_NPROC of the limit: since Linux
 *    5.14 the kernel counts it per user namespace (ucounts), and every
 *    sandbox has a user namespace of its own, so it bounds the sandbox's
 *    processes and threads whatever else the uid runs.  Before 5.14 it
 *    counted every process of the uid: no bound of the sandbox's.
 *  - cpu: the supervisor adds up the sandbox's CPU time in its cgroup
 *    (cpuacct on v1, cpu.stat on v2); else only RLIMIT_CPU per process.
 *  - disk: the work directory is a tmpfs of its size, which only root
 *    may mount where it persists; else a plain directory (RLIMIT_FSIZE
 *    bounds one file).
 * The wall clock, the output caps, nofile and fsize hold everywhere.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "local-int.h"
#include "unenforced.h"

/* Does this kernel count RLIMIT_NPROC per user namespace (5.14)? */
static bool nproc_per_userns(void)
{
    struct utsname u;
    int major = 0, minor = 0;

    if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2)
        return false;
    return major > 5 || (major == 5 && minor >= 14);
}

__attribute__((format(printf, 3, 4)))
static void add(struct lcl_prov *p, uint64_t bits, const char *fmt, ...)
{
    va_list ap;
    struct lcl_unenforced *u;

    if (p->n_unenforced >= sizeof p->unenforced / sizeof p->unenforced[0])
        return;
    u = &p->unenforced[p->n_unenforced++];
    u->bits = bits;
    va_start(ap, fmt);
    vsnprintf(u->why, sizeof u->why, fmt, ap);
    va_end(ap);
}

/* Why the cgroup limits are out of reach, in a few words. */
static void cg_context(const struct lcl_prov *p, const char *ctrl, char *buf, size_t size)
{
    const struct lcl_cgroups *cg = &p->cg;

    if (cg->version == 2)
        snprintf(buf, size, "the cgroup v2 subtree %s has no %s controller", cg->v2_base, ctrl);
    else if (cg->v2_base && !p->root)
        snprintf(buf, size, "cgroup v2 with no subtree delegated to uid %lu",
                 (unsigned long)geteuid());
    else if (!p->root)
        snprintf(buf, size, "cgroup v1 gives an unprivileged user no cgroup of its own");
    else
        snprintf(buf, size, "%s", cg->why ? cg->why : "no cgroup hierarchy");
}

void lcl_limits_probe(struct lcl_prov *p)
{
    const struct lcl_cgroups *cg = &p->cg;
    bool cpu = cg->version != 0 && cg->usable[LCL_CG_CPUACCT];
    char why[200];

    p->n_unenforced = 0;
    p->floor_data = !cg->usable[LCL_CG_MEMORY];
    p->floor_nproc = !cg->usable[LCL_CG_PIDS] && nproc_per_userns();
    if (p->floor_data) {
        cg_context(p, "memory", why, sizeof why);
        add(p, SBX_LIMIT_BIT_MEMORY, "no memory cgroup (%s); RLIMIT_DATA holds each process "
            "to the limit, not the sandbox as a whole", why);
    }
    if (!cg->usable[LCL_CG_PIDS] && !p->floor_nproc) {
        cg_context(p, "pids", why, sizeof why);
        add(p, SBX_LIMIT_BIT_PIDS, "no pids cgroup (%s), and this kernel (before 5.14) counts "
            "RLIMIT_NPROC for the whole uid, not per sandbox", why);
    }
    if (!cpu) {
        cg_context(p, "cpu", why, sizeof why);
        add(p, SBX_LIMIT_BIT_CPU, "no cgroup to add up the sandbox's CPU time in (%s); "
            "RLIMIT_CPU holds each process to the limit, not the sandbox as a whole", why);
    }
    if (!p->root)
        add(p, SBX_LIMIT_BIT_DISK, "not root: the work directory is a plain directory, not a "
            "tmpfs of the limit's size (RLIMIT_FSIZE bounds each file)");
}

int lcl_limits_report(struct lcl_prov *p)
{
    for (size_t i = 0; i < p->n_unenforced; i++) {
        int rc = pc_limits_unenforced(p->host, p->h, p->unenforced[i].bits,
                                      p->unenforced[i].why);
        if (rc != SBX_OK)
            return rc;
    }
    return SBX_OK;
}

void lcl_limits_floors(const struct lcl_prov *p, struct lcl_child *c, bool zygote)
{
    const sbx_limits_v1 *l = &c->sb->limits;

    c->rl_data = p->floor_data ? l->memory_bytes : 0;
    /* +1: the sandbox's init; through a zygote, +1 for the zygote, whose
     * user namespace its inits share (the same uid when not root). */
    c->rl_nproc = p->floor_nproc ? l->pids + 1 + (zygote && !p->root) : 0;
}

void lcl_limits_doctor(struct lcl_prov *p, sbx_doctor_cb_v1 cb, void *ud)
{
    static const char *const names[] = {"wall", "cpu", "memory", "pids", "nofile", "fsize",
                                        "disk", "stdout", "stderr"};
    char detail[1536];
    size_t off = 0;

    for (size_t i = 0; i < p->n_unenforced && off < sizeof detail; i++) {
        int l = __builtin_ctzll(p->unenforced[i].bits);
        off += (size_t)snprintf(detail + off, sizeof detail - off, "%s%s not enforced: %s",
                                off ? "; " : "", l < 9 ? names[l] : "?", p->unenforced[i].why);
    }
    if (off && off < sizeof detail)
        snprintf(detail + off, sizeof detail - off, ".  Sandboxes are refused unless "
                 "unenforced_limits allows it (polysandbox.ini(5)); as root, or with a "
                 "delegated cgroup v2 subtree, these are enforced");
    else if (!off)
        snprintf(detail, sizeof detail, "memory, %s, cpu: cgroup; disk: tmpfs; wall, output, "
                 "nofile, fsize: everywhere", p->floor_nproc ? "pids: RLIMIT_NPROC in the "
                 "sandbox's user namespace" : "pids");
    cb(ud, "limits", p->n_unenforced == 0, detail);
}
