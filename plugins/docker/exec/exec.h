/* plugins/docker/exec/exec.h - the exec modes of the docker provider
 *
 * An exec runs under the in-container helper (init/), either through the
 * daemon's exec API (api.c: a new exec per command) or, in attach mode,
 * through one attach connection to the helper's exec server, PID 1 of the
 * sandbox (attach.c).  exec.c chooses and keeps the bookkeeping both
 * share.  This is what the provider (docker-int.h) sees of them; they
 * build on the Engine API client (engine/) and speak the helper's
 * protocol (init/proto.h), and know nothing of the provider's settings.
 */
#ifndef DOCKER_EXEC_H
#define DOCKER_EXEC_H

#include <stdbool.h>

#include <polysandbox/provider.h>

#include "engine/engine.h"

/* The sandbox's work directory, and where its helper is mounted. */
#define DK_WORKDIR "/work"
#define DK_INIT_DIR "/.sbx-init"
#define DK_INIT_PATH DK_INIT_DIR "/init"

struct dk_conn;
/* A sandbox as the provider holds it (docker.c makes it). */
struct dk_sb {
    char id[SBX_ID_MAX];
    sbx_limits_v1 limits;
    bool serve;                /* PID 1 is the exec server (attach mode) */
    bool running_known;        /* seen running just now (create, attach) */
    struct dk_conn *conn;      /* the attach connection, or NULL */
    int lock_fd;               /* the sandbox's lock file in the state dir, or -1 */
};

/* ---- exec.c ---- */
/* One exec in @sb (its files are uploaded already): through the attach
 * connection when @attach and the sandbox serves execs, else (or when
 * another process drives that connection) through the daemon's exec. */
int dk_exec(struct dk_engine *e, bool attach, struct dk_sb *sb, const sbx_exec_spec_v1 *spec,
            const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out);

/* ---- attach.c ---- */
/* Opens the attach connection ahead of the first exec (best effort). */
void dk_serve_prepare(struct dk_engine *e, struct dk_sb *sb);
/* Closes the connection and the lock file. */
void dk_serve_close(struct dk_sb *sb);
/* The same, and removes the lock file (destroy). */
void dk_serve_forget(struct dk_engine *e, struct dk_sb *sb);

#endif /* DOCKER_EXEC_H */
