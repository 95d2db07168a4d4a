/* plugins/docker/docker-int.h - internals of the docker provider
 *
 * The docker provider drives a Docker (or Podman) Engine API over a unix
 * socket or TCP with TLS, through the shared libcurl client
 * (plugins/common/http.h).  A sandbox is one container named by its id
 * ("sbx-" + 16 hex digits), idling under the in-container helper
 * (init/init.c) as PID 1, with its work directory on a named volume
 * (tmpfs-backed, so the disk limit holds) and the helper on a shared
 * read-only volume.  Nothing here is exported.
 *
 * The provider is the top of three layers, each including only those
 * below it: this folder (the provider's state, settings, lifecycle,
 * files, the helper's volume), exec/exec.h (the two exec modes), and
 * engine/engine.h (the Engine API client).  init/ (the helper program)
 * stands apart: exec/ knows only its wire format, init/proto.h.
 */
#ifndef DOCKER_INT_H
#define DOCKER_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <polysandbox/provider.h>

#include "engine/engine.h"
#include "exec/exec.h"
#include "inside/embed.h"

#define DK_ID_PREFIX "sbx-"
/* Labels the provider owns (hidden from list callbacks). */
#define DK_LABEL_PREFIX "io.polysandbox."
#define DK_LABEL_SANDBOX DK_LABEL_PREFIX "sandbox"
#define DK_LABEL_LIMITS DK_LABEL_PREFIX "limits"
#define DK_LABEL_EXPIRES DK_LABEL_PREFIX "expires"
#define DK_LABEL_TEMPLATE DK_LABEL_PREFIX "template"
#define DK_LABEL_CREATED DK_LABEL_PREFIX "created-ns"
#define DK_LABEL_EXEC DK_LABEL_PREFIX "exec"   /* "attach": PID 1 serves execs */
/* Inodes of /work and /tmp (tmpfs): the local provider's work_inodes. */
#define DK_WORK_INODES 16384

struct dk_prov {
    /* The daemon: the host table (errors, logs, secrets), the client, its
     * URL, whether it is Podman. */
    struct dk_engine eng;
    char *image;               /* default image, or NULL */
    char *aliases;             /* "from=to from=to", or NULL */
    char *runtime;             /* HostConfig.Runtime, or NULL */
    int64_t nano_cpus;         /* HostConfig.NanoCpus */
    bool allow_host_net;
    bool readonly_rootfs;
    bool exec_attach;          /* exec_mode = attach: new sandboxes serve execs */
    bool allow_unenforced;     /* unenforced_limits = allow (docker-limits.c) */
    char *seccomp_opt;         /* "seccomp=<profile>" (docker-seccomp.c) */
    char seccomp_dir[PATH_MAX]; /* Podman: where the profile file is, or "" */
    /* The helper's volume is known to be installed (once per process). */
    pthread_mutex_t init_lock;
    bool init_ready;
    char init_volume[64];      /* "polysandbox-init-<hash>" */
    struct dk_puller pull;     /* pulling images (engine/pull.c) */
};

/* ---- docker-settings.c ---- */
/* Reads providers.d/docker.ini into @p, the client's settings into @cc
 * (valid until fini) and the pull settings into @pull; sets the error. */
int dk_read_settings(struct dk_prov *p, ph_client_conf *cc, struct dk_pull_conf *pull);

/* ---- docker-doctor.c: the ops health and doctor ---- */
int dk_health(void *prov);
void dk_doctor(void *prov, sbx_doctor_cb_v1 cb, void *ud);

/* ---- docker-spec.c: the create body (pure; unit-tested) ---- */
struct dk_create_args {
    const char *id;             /* container name */
    const char *image;
    const char *runtime;        /* or NULL */
    const char *init_volume;
    int64_t nano_cpus;
    bool readonly_rootfs;
    bool host_network;
    bool egress;                /* network = egress: the default bridge, not none */
    bool podman;                /* no HostConfig.Ulimits (see docker-spec.c) */
    bool serve;                 /* PID 1 is the exec server, stdin open */
    const char *seccomp;        /* a SecurityOpt "seccomp=<profile>", or NULL */
    uint64_t now_unix_ns;
    const sbx_create_spec_v1 *spec;
};
/* The JSON body of POST /containers/create, or NULL (out of memory or a
 * bad key, message in err). */
json_t *dk_create_body(const struct dk_create_args *a, char *err, size_t errlen);
/* "wall,cpu,..." of the limits label and back. */
void dk_limits_format(const sbx_limits_v1 *l, char *out, size_t cap);
int dk_limits_parse(const char *s, sbx_limits_v1 *l);
/* The image @name maps to under "from=to from=to" @aliases (or @name). */
const char *dk_alias(const char *aliases, const char *name, char *buf, size_t cap);

/* The capabilities a container starts with (HostConfig.CapAdd, all others
 * dropped): its helper's own, for the separation of init/init.c; the
 * helper drops them from every command, and from the bounding set. */
#define DK_CAPS_HELPER "SETUID", "KILL", "SETPCAP"

/* ---- docker-seccomp.c: the containers' seccomp profile (pure) ---- */
/* The profile as JSON (a new reference), or NULL when out of memory. */
json_t *dk_seccomp_profile(void);
/* "seccomp=" and the profile, compact: a HostConfig.SecurityOpt entry
 * (malloc'ed), or NULL when out of memory. */
char *dk_seccomp_opt(void);
/* The same profile written to a new directory of its own under $TMPDIR
 * (its path into @dir_out), as "seccomp=PATH" (malloc'ed): Podman reads
 * the option as a path.  NULL with @err set on failure. */
char *dk_seccomp_file(char *dir_out, size_t dir_cap, char *err, size_t errlen);
/* Remove what dk_seccomp_file made in @dir (and clear it); "" is fine. */
void dk_seccomp_file_remove(char *dir);

/* ---- docker-files.c ---- */
int dk_upload(struct dk_prov *p, struct dk_sb *sb, const char *path, const void *data,
              size_t len, uint32_t mode);
int dk_download(struct dk_prov *p, struct dk_sb *sb, const char *path, size_t max,
                void **data, size_t *len);
/* Checks a path given relative to the work directory ("a/b"); SBX_E_PATH
 * with a message otherwise. */
int dk_path_check(struct dk_prov *p, const char *path);

/* ---- docker-limits.c: limits the daemon dropped (rootless Podman on
 * cgroup v1) ---- */
/* SBX_OK when the created container @id has the memory, pids and CPU
 * limits asked for (or unenforced_limits = allow: a warning); otherwise
 * SBX_E_PERM with an error naming them and why (the caller removes it). */
int dk_limits_check(struct dk_prov *p, const char *id, const sbx_limits_v1 *l);
/* Podman only: true when the daemon cannot apply limits at all (rootless
 * on cgroup v1); @detail says why either way (for doctor). */
bool dk_limits_unenforceable(struct dk_prov *p, char *detail, size_t cap);

/* ---- docker-initvol.c ---- */
/* Makes sure the helper volume holds the helper (installs it the first
 * time, using @image for a short-lived installer container). */
int dk_init_ensure(struct dk_prov *p, const char *image);
SBX_EMBED_DECLARE(dk_init_blob);

#endif /* DOCKER_INT_H */
