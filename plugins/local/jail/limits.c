/* plugins/local/jail/limits.c - which limits this host lets us enforce
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

#include "jail.h"
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

/* Said instead of a reason that could not be written down. */
static char no_memory_why[] = "(out of memory writing down why)";

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
    if (vasprintf(&u->why, fmt, ap) < 0)
        u->why = no_memory_why;
    va_end(ap);
}

/* Why the cgroup limits are out of reach, in a few words (a path may be
 * long: allocated, freed by the caller; NULL without memory). */
static char *cg_context(const struct lcl_prov *p, const char *ctrl)
{
    const struct lcl_cgroups *cg = &p->cg;
    char *s = NULL;
    int n;

    if (cg->version == 2)
        n = asprintf(&s, "the cgroup v2 subtree %s has no %s controller", cg->v2_base, ctrl);
    else if (cg->v2_base && !p->root)
        n = asprintf(&s, "cgroup v2 with no subtree delegated to uid %lu",
                     (unsigned long)geteuid());
    else if (!p->root)
        n = asprintf(&s, "cgroup v1 gives an unprivileged user no cgroup of its own");
    else
        n = asprintf(&s, "%s", cg->why ? cg->why : "no cgroup hierarchy");
    return n < 0 ? NULL : s;
}

void lcl_limits_free(struct lcl_prov *p)
{
    for (size_t i = 0; i < p->n_unenforced; i++)
        if (p->unenforced[i].why != no_memory_why)
            free(p->unenforced[i].why);
    p->n_unenforced = 0;
}

void lcl_limits_probe(struct lcl_prov *p)
{
    const struct lcl_cgroups *cg = &p->cg;
    bool cpu = cg->version != 0 && cg->usable[LCL_CG_CPUACCT];
    char *why;

    lcl_limits_free(p);
    p->floor_data = !cg->usable[LCL_CG_MEMORY];
    p->floor_nproc = !cg->usable[LCL_CG_PIDS] && nproc_per_userns();
    if (p->floor_data) {
        why = cg_context(p, "memory");
        add(p, SBX_LIMIT_BIT_MEMORY, "no memory cgroup (%s); RLIMIT_DATA holds each process "
            "to the limit, not the sandbox as a whole", why ? why : "?");
        free(why);
    }
    if (!cg->usable[LCL_CG_PIDS] && !p->floor_nproc) {
        why = cg_context(p, "pids");
        add(p, SBX_LIMIT_BIT_PIDS, "no pids cgroup (%s), and this kernel (before 5.14) counts "
            "RLIMIT_NPROC for the whole uid, not per sandbox", why ? why : "?");
        free(why);
    }
    if (!cpu) {
        why = cg_context(p, "cpu");
        add(p, SBX_LIMIT_BIT_CPU, "no cgroup to add up the sandbox's CPU time in (%s); "
            "RLIMIT_CPU holds each process to the limit, not the sandbox as a whole",
            why ? why : "?");
        free(why);
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
    char *detail = NULL;
    size_t len = 0;
    FILE *f;

    if (!p->n_unenforced) {
        cb(ud, "limits", 1, p->floor_nproc
           ? "memory, pids: RLIMIT_NPROC in the sandbox's user namespace, cpu: cgroup; disk: "
             "tmpfs; wall, output, nofile, fsize: everywhere"
           : "memory, pids, cpu: cgroup; disk: tmpfs; wall, output, nofile, fsize: everywhere");
        return;
    }
    /* A stream, not a fixed buffer: a reason may name a long path. */
    if (!(f = open_memstream(&detail, &len))) {
        cb(ud, "limits", 0, "some limits are not enforced (out of memory saying which)");
        return;
    }
    for (size_t i = 0; i < p->n_unenforced; i++) {
        int l = __builtin_ctzll(p->unenforced[i].bits);
        fprintf(f, "%s%s not enforced: %s", i ? "; " : "", l < 9 ? names[l] : "?",
                p->unenforced[i].why);
    }
    fputs(".  Sandboxes are refused unless unenforced_limits allows it (polysandbox.ini(5)); "
          "as root, or with a delegated cgroup v2 subtree, these are enforced", f);
    if (fclose(f) != 0 || !detail)
        cb(ud, "limits", 0, "some limits are not enforced (out of memory saying which)");
    else
        cb(ud, "limits", 0, detail);
    free(detail);
}
