/* plugins/microvm/mv-exec.c - one command in the VM, through the agent
 *
 * The work's files go first (one FILE frame each, each answered), then one EXEC frame
 * with the command, its environment, the sandbox's limits and its stdin
 * (or the flag saying stdin streams: mv-xrun.c feeds it).  The agent
 * streams STDOUT and STDERR frames and ends with EXIT.  Caps on output
 * are applied in mv-xrun.c: past one, the rest is dropped and the
 * command killed (KILL), as at a cancel.  The agent enforces the timeout; the host
 * waits for it a grace period longer (a slow guest under TCG) and, past
 * that, gives the sandbox up.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mv-int.h"

/* How much longer than the command's timeout the host waits for EXIT. */
#define MV_GRACE_MS 60000

static const char mv_base_env[] = "PATH=/usr/local/bin:/usr/bin:/bin\0HOME=/work\0LANG=C.UTF-8";
#define MV_BASE_ENV_N 3

static int send_files(struct mv_prov *p, struct mv_sandbox *s, const sbx_exec_spec_v1 *spec)
{
    for (size_t i = 0; i < spec->n_files; i++) {
        const sbx_file_v1 *f = &spec->files[i];
        int rc = mv_put_file(p, s, f->path, f->data, f->len, f->mode);
        if (rc)
            return rc;
    }
    return SBX_OK;
}

/* Whether the variable "KEY=..." @kv names a key set in @env (@n
 * entries of "KEY=VALUE\0", back to back). */
static int env_has(const char *env, size_t n, const char *kv)
{
    size_t klen = strcspn(kv, "=");

    for (size_t i = 0; i < n; i++, env += strlen(env) + 1)
        if (!strncmp(env, kv, klen) && env[klen] == '=')
            return 1;
    return 0;
}

/* Appends each entry of @src (@n of "KEY=VALUE\0") that @dst's first
 * @*dn entries do not name, counting it in @*dn; returns the new end. */
static size_t env_merge(char *dst, size_t off, size_t *dn, const char *src, size_t n)
{
    for (size_t i = 0; i < n; i++, src += strlen(src) + 1) {
        if (env_has(dst, *dn, src))
            continue;
        size_t l = strlen(src) + 1;
        memcpy(dst + off, src, l);
        off += l;
        (*dn)++;
    }
    return off;
}

static int send_exec(struct mv_prov *p, struct mv_sandbox *s, const sbx_exec_spec_v1 *spec)
{
    size_t argc = 0, len = MV_EXEC_HEAD_LEN, off, envc = 0;
    /* relative to /work, as on the other providers */
    const char *cwd = spec->cwd ? spec->cwd : "", *base = cwd[0] && cwd[0] != '/' ? "/work/" : "";
    uint8_t *b;
    char *env;
    int rc;

    while (spec->argv[argc])
        argc++;
    if (argc == 0)
        return p->host->set_error(p->h, SBX_E_INVAL, "microvm: an exec without a command");
    len += strlen(base) + strlen(cwd) + 1;
    for (size_t i = 0; i < argc; i++)
        len += strlen(spec->argv[i]) + 1;
    for (size_t i = 0; i < spec->n_env; i++)
        len += strlen(spec->env[i].key) + strlen(spec->env[i].value) + 2;
    len += s->env_len + sizeof mv_base_env;
    if (!(b = malloc(len)))
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    uint64_t tmo = spec->timeout_ns / 1000000;
    mv_put64(b, tmo ? tmo : 1);
    mv_put64(b + 8, s->limits.memory_bytes);
    mv_put64(b + 16, s->limits.pids);
    mv_put64(b + 24, s->limits.nofile);
    mv_put64(b + 32, s->limits.fsize_bytes);
    mv_put64(b + 40, s->limits.cpu_ns / 1000000);
    mv_put32(b + 48, (uint32_t)argc);
    off = MV_EXEC_HEAD_LEN;
    off += (size_t)sprintf((char *)b + off, "%s%s", base, cwd) + 1;
    for (size_t i = 0; i < argc; i++)
        off += (size_t)sprintf((char *)b + off, "%s", spec->argv[i]) + 1;
    /* One value per name, the exec's over create's over the base's: a
     * shell takes the last of a repeated name, execvpe's getenv the
     * first, so none is sent twice. */
    env = (char *)b + off;
    size_t eoff = 0;
    for (size_t i = 0; i < spec->n_env; i++) {
        char *kv = env + eoff;
        int l = sprintf(kv, "%s=%s", spec->env[i].key, spec->env[i].value);
        if (env_has(env, envc, kv))
            continue;
        eoff += (size_t)l + 1;
        envc++;
    }
    eoff = env_merge(env, eoff, &envc, s->env, s->n_env);
    eoff = env_merge(env, eoff, &envc, mv_base_env, MV_BASE_ENV_N);
    off += eoff;
    mv_put32(b + 52, (uint32_t)envc);
    mv_put32(b + 56, spec->stdin_fd >= 0 ? MV_EXEC_STDIN_STREAM : 0);
    rc = mv_chan_send(p, s->chan, MV_T_EXEC, b, off, spec->stdin_data, spec->stdin_len);
    free(b);
    return rc;
}

static sbx_run_status verdict(const struct mv_exit *e, int over_cap)
{
    if (over_cap)
        return SBX_RUN_OUTPUT_LIMIT;
    if (e->flags & MV_EXIT_TIMEOUT)
        return SBX_RUN_TIMEOUT;
    if (e->flags & MV_EXIT_OOM)
        return SBX_RUN_MEMORY_LIMIT;
    if (e->flags & MV_EXIT_CPU)
        return SBX_RUN_CPU_LIMIT;
    if ((e->flags & MV_EXIT_NOEXEC) && e->exit_code == 127)
        return SBX_RUN_NOT_FOUND;
    if ((e->flags & MV_EXIT_NOEXEC) && e->exit_code == 126)
        return SBX_RUN_NOT_EXECUTABLE;
    /* As the local provider reads a status: SIGSYS is the agent's filter
     * (agent/mv-filter.c); a command that failed, or died of a signal,
     * after its cgroup refused a fork hit the pids limit. */
    if (e->signal == SIGSYS)
        return SBX_RUN_SECCOMP;
    if ((e->exit_code || (e->signal && e->signal != SIGXFSZ)) && (e->flags & MV_EXIT_PIDS))
        return SBX_RUN_PIDS_LIMIT;
    if (e->signal)
        return SBX_RUN_SIGNAL;
    return e->exit_code ? SBX_RUN_NONZERO_EXIT : SBX_RUN_OK;
}

/* Whether the caller's cancel fired already. */
static int cancelled(const sbx_exec_spec_v1 *spec)
{
    struct pollfd pf = { spec->cancel_fd, POLLIN, 0 };

    return spec->cancel_fd >= 0 && poll(&pf, 1, 0) > 0;
}

int mv_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
            const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    struct mv_prov *p = prov;
    struct mv_sandbox *s = sb;
    struct mv_exit ex;
    int over = 0, rc;

    if (cancelled(spec)) /* nothing runs */
        return p->host->set_error(p->h, SBX_E_CANCELLED, "microvm: the exec was cancelled");
    /* (the timeout counts from here: a persistent VM's first request
     * may wait for another client first) */
    if ((rc = mv_ready(p, s)))
        return rc;
    int64_t t0 = mv_now_ms();
    int64_t deadline = t0 + (int64_t)(spec->timeout_ns / 1000000) + MV_GRACE_MS;
    if (s->broken)
        return p->host->set_error(p->h, SBX_E_BACKEND,
                                  "microvm: this VM's agent broke off an earlier exec");
    if ((rc = mv_chan_quiet(p, s->chan))) {
        s->broken = 1;
        return rc;
    }
    if ((rc = send_files(p, s, spec)))
        return rc;
    s->broken = 1; /* until EXIT comes back in step */
    if ((rc = send_exec(p, s, spec)) ||
        (rc = mv_xrun_wait(p, s, spec, sink, deadline, &ex, &over)))
        return rc;
    out->status = verdict(&ex, over);
    out->exit_code = ex.signal ? -1 : ex.exit_code; /* no code, as on every provider */
    out->signal = ex.signal;
    out->cpu_ns = ex.cpu_ns;
    out->peak_memory_bytes = ex.peak_memory_bytes;
    out->exec_ns = (uint64_t)(mv_now_ms() - t0) * 1000000;
    return SBX_OK;
}
