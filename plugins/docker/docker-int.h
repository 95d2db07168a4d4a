/* plugins/docker/docker-int.h - internals of the docker provider
 *
 * The docker provider drives a Docker (or Podman) Engine API over a unix
 * socket or TCP with TLS, through the shared libcurl client
 * (plugins/common/http.h).  A sandbox is one container named by its id
 * ("sbx-" + 16 hex digits), idling under the in-container helper
 * (init/init.c) as PID 1, with its work directory on a named volume
 * (tmpfs-backed, so the disk limit holds) and the helper on a shared
 * read-only volume.  Nothing here is exported.
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

#include "http.h"

#define DK_ID_PREFIX "sbx-"
#define DK_WORKDIR "/work"
#define DK_INIT_DIR "/.sbx-init"
#define DK_INIT_PATH DK_INIT_DIR "/init"
/* Labels the provider owns (hidden from list callbacks). */
#define DK_LABEL_PREFIX "io.polysandbox."
#define DK_LABEL_SANDBOX DK_LABEL_PREFIX "sandbox"
#define DK_LABEL_LIMITS DK_LABEL_PREFIX "limits"
#define DK_LABEL_EXPIRES DK_LABEL_PREFIX "expires"
#define DK_LABEL_TEMPLATE DK_LABEL_PREFIX "template"
#define DK_LABEL_CREATED DK_LABEL_PREFIX "created-ns"
#define DK_LABEL_EXEC DK_LABEL_PREFIX "exec"   /* "attach": PID 1 serves execs */
#define DK_API "/v1.41"
/* Inodes of /work and /tmp (tmpfs): the local provider's work_inodes. */
#define DK_WORK_INODES 16384

struct dk_prov {
    const sbx_host_v1 *host;
    sbx_host_handle *h;
    ph_client *http;
    char *socket;              /* the base URL, for messages */
    char *image;               /* default image, or NULL */
    char *aliases;             /* "from=to from=to", or NULL */
    char *runtime;             /* HostConfig.Runtime, or NULL */
    int64_t nano_cpus;         /* HostConfig.NanoCpus */
    bool allow_host_net;
    bool readonly_rootfs;
    bool pull;                 /* pull a missing image */
    /* The daemon is Podman's Docker-compatible service (GET
     * /libpod/_ping answers); probed once, with the helper. */
    bool podman;
    bool exec_attach;          /* exec_mode = attach: new sandboxes serve execs */
    bool allow_unenforced;     /* unenforced_limits = allow (docker-limits.c) */
    char *seccomp_opt;         /* "seccomp=<profile>" (docker-seccomp.c) */
    char seccomp_dir[PATH_MAX]; /* Podman: where the profile file is, or "" */
    /* The helper's volume is known to be installed (once per process). */
    pthread_mutex_t init_lock;
    bool init_ready;
    char init_volume[64];      /* "polysandbox-init-<hash>" */
    /* Pulling images (engine/pull.c). */
    int pull_policy;           /* enum dk_pull_policy */
    long pull_timeout_ms;      /* deadline of one pull */
    char *auth_host;           /* registry_auth_host: where registry_auth goes, or NULL */
    bool pull_sync;            /* pull_lock and pull_cond are set up */
    pthread_mutex_t pull_lock; /* guards pulling */
    pthread_cond_t pull_cond;  /* a pull ended */
    struct dk_pulling *pulling; /* pulls in flight, one per image */
};

struct dk_conn;
struct dk_sb {
    char id[SBX_ID_MAX];
    sbx_limits_v1 limits;
    bool serve;                /* PID 1 is the exec server (attach mode) */
    bool running_known;        /* seen running just now (create, attach) */
    struct dk_conn *conn;      /* the attach connection, or NULL */
    int lock_fd;               /* the sandbox's lock file in the state dir, or -1 */
};

/* ---- docker.c ---- */
/* ph_json, with @out optional (the answer is dropped when NULL). */
int dk_json(struct dk_prov *p, const char *method, const char *path, json_t *body,
            long timeout_ms, long *status, json_t **out, char err[PH_ERR_MAX]);
int dk_err(struct dk_prov *p, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Sets p->podman (once, before the first create). */
int dk_probe(struct dk_prov *p);

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

/* ---- engine/stream.c: Docker's 8-byte frames and the helper's report
 * (pure; unit-tested) ---- */
#define DK_MARK_MAX 80
struct dk_report {
    char status[8];   /* "x", "s", "t", "k", "m", "nf", "nx", "cd", "e" */
    int value;        /* exit code, signal or errno */
    int64_t cpu_ns;
    int64_t rss;
    bool pids_hit;    /* " pids=1": the pids limit refused a fork */
};
typedef int (*dk_out_fn)(void *ud, int stream, const void *buf, size_t len);
struct dk_demux {
    unsigned char hdr[8];
    size_t hdr_got;
    int stream;
    size_t left;                 /* payload bytes left of the frame */
    char mark[DK_MARK_MAX];      /* "\036SBX<nonce>:" */
    size_t mark_len;
    unsigned char held[DK_MARK_MAX + 256]; /* stderr held back: maybe the report */
    size_t held_len;
    bool in_report;              /* the mark was seen: the rest is the report */
    bool bad;                    /* framing error */
    dk_out_fn out;
    void *ud;
};
void dk_demux_init(struct dk_demux *d, const char *nonce, dk_out_fn out, void *ud);
/* Feeds raw bytes of the attach stream; returns the first non-zero of
 * out(), or -1 on a framing error. */
int dk_demux_feed(struct dk_demux *d, const void *buf, size_t len);
/* At end of stream: parses the report (true when there is one) and
 * delivers held bytes that were not part of it. */
bool dk_demux_finish(struct dk_demux *d, struct dk_report *rep);

/* ---- engine/tar.c (libarchive) ---- */
/* A tar holding the parents of @path as directories (0755) and @path as a
 * regular file.  *out is malloc'ed. */
int dk_tar_file(const char *path, const void *data, size_t len, uint32_t mode,
                void **out, size_t *out_len, char *err, size_t errlen);
/* The one regular file of a tar (as GET archive answers for a file):
 * SBX_E_PATH when the entry is not a regular file, SBX_E_LIMIT over max.
 * *data is allocated with @alloc. */
int dk_tar_extract_one(const void *tar, size_t tar_len, size_t max, void *(*alloc)(size_t),
                       void (*dfree)(void *), void **data, size_t *len, char *err, size_t errlen);

/* ---- docker-files.c ---- */
int dk_upload(struct dk_prov *p, struct dk_sb *sb, const char *path, const void *data,
              size_t len, uint32_t mode);
int dk_download(struct dk_prov *p, struct dk_sb *sb, const char *path, size_t max,
                void **data, size_t *len);
/* Checks a path given relative to the work directory ("a/b"); SBX_E_PATH
 * with a message otherwise. */
int dk_path_check(struct dk_prov *p, const char *path);

/* ---- exec/api.c ---- */
int dk_exec(struct dk_prov *p, struct dk_sb *sb, const sbx_exec_spec_v1 *spec,
            const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out);
/* One exec's bookkeeping, shared by both exec paths. */
enum dk_why_kill { WK_NONE, WK_OUTPUT, WK_BACKSTOP, WK_CANCEL };
struct dk_xrun {
    struct dk_prov *p;
    const sbx_exec_spec_v1 *spec;
    const sbx_output_sink_v1 *sink;
    sbx_exec_outcome_v1 *out;
    bool stop;              /* deliver nothing more */
    enum dk_why_kill kill;
    bool kill_sent;
    unsigned char *snd;     /* bytes still to send */
    size_t snd_len, snd_off;
    /* Streamed stdin (spec->stdin_fd): read while in_open, once what was
     * read before is sent; signals (spec->signal_fd) while sig_open.
     * push queues a control frame to the helper the way this exec path
     * talks to it: 'D' a chunk of stdin, 'E' its end, 'S' signals. */
    bool in_open, sig_open;
    int (*push)(struct dk_xrun *r, char type, const void *data, size_t len);
    uint64_t id;            /* the served exec's id (exec/attach.c) */
};
/* Poll @fd for the exec's connection with @events, and the spec's
 * cancel_fd while nothing was killed yet: a readable cancel_fd sets
 * r->kill = WK_CANCEL; its stdin_fd and signal_fd, whose bytes go to
 * r->push.  Returns poll's result for @fd (revents in *revents). */
int dk_xrun_poll(struct dk_xrun *r, int fd, short events, int timeout_ms, short *revents);
/* Start streaming spec->stdin_fd and spec->signal_fd, those set, as
 * control frames through @push (once the request is queued). */
void dk_xrun_control(struct dk_xrun *r,
                     int (*push)(struct dk_xrun *, char, const void *, size_t));
/* After the exec's loop: SBX_E_CANCELLED when it was cancelled, else 0. */
int dk_xrun_cancelled(struct dk_xrun *r, const char *id);
/* Sends what of r->snd the connection @h takes now; false when the
 * connection failed (not when it is merely full). */
bool dk_xrun_send(struct dk_xrun *r, CURL *h);
/* Delivers output under the caps (a dk_out_fn); sets r->kill past one. */
int dk_xrun_output(void *ud, int stream, const void *buf, size_t n);
/* The helper's report as the outcome (or an error for setup failures). */
int dk_xrun_report(struct dk_xrun *r, struct dk_sb *sb, const struct dk_report *rep);
/* The wrapper's command line for @spec: a JSON array of strings. */
json_t *dk_build_cmd(struct dk_prov *p, struct dk_sb *sb, const sbx_exec_spec_v1 *spec,
                     int *err_code);
int dk_env_check(struct dk_prov *p, const sbx_exec_spec_v1 *spec);
uint64_t dk_now_ns(void);

/* ---- exec/attach.c: execs through the attach connection ---- */
/* Returned by dk_serve_exec when the exec should take the API path (the
 * sandbox is busy with another process's exec). */
#define DK_USE_API (-1)
int dk_serve_exec(struct dk_prov *p, struct dk_sb *sb, const sbx_exec_spec_v1 *spec,
                  const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out);
/* Opens the attach connection ahead of the first exec (best effort). */
void dk_serve_prepare(struct dk_prov *p, struct dk_sb *sb);
/* Closes the connection and the lock file. */
void dk_serve_close(struct dk_sb *sb);
/* The same, and removes the lock file (destroy). */
void dk_serve_forget(struct dk_prov *p, struct dk_sb *sb);
/* Parses a report line "STATUS cpu=NS rss=BYTES\n" (engine/stream.c). */
bool dk_report_parse(const char *s, struct dk_report *rep);

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
extern const unsigned char dk_init_blob[];
extern const unsigned char dk_init_blob_end[];

/* ---- engine/pullref.c: image references, the pull's progress stream,
 * its errors, X-Registry-Auth (pure; unit-tested) ---- */
struct dk_imgref {
    char repo[256];            /* fromImage: "[host[:port]/]path/name" */
    char tag[160];             /* a tag, or a digest "sha256:<hex>"; "latest" by default */
    char registry[256];        /* the host[:port] named, else "docker.io" */
};
/* Splits an image reference; SBX_E_INVAL with a message naming it. */
int dk_imgref_parse(const char *ref, struct dk_imgref *out, char *err, size_t errlen);
/* Whether two registry names are the same (Docker Hub's several names). */
bool dk_registry_same(const char *a, const char *b);
/* The newline-delimited JSON a pull answers (200) with, fed as it comes:
 * the first in-stream error ({"error"} / {"errorDetail"}) is kept. */
struct dk_pullstream {
    char line[16384];
    size_t len;
    bool overflow;             /* the current line is too long: skipped */
    int lines;
    char error[512];           /* the daemon's error, printable; "" none */
    char status[256];          /* the last status without progress */
};
void dk_pullstream_init(struct dk_pullstream *s);
void dk_pullstream_feed(struct dk_pullstream *s, const void *buf, size_t n);
void dk_pullstream_finish(struct dk_pullstream *s);
/* SBX_E_AUTH, SBX_E_NOT_FOUND, SBX_E_NETWORK, ... for a pull's error
 * message (and the HTTP status it came with, 200 inside a stream). */
int dk_pull_classify(const char *msg, long http_status);
/* "X-Registry-Auth: <base64url JSON>" for "user:password" (@len bytes)
 * and @server; *out is malloc'ed, *outlen bytes with the NUL: the caller
 * wipes and frees it.  SBX_E_CONFIG when @userpass is not user:password. */
int dk_registry_auth_header(const char *userpass, size_t len, const char *server, char **out,
                            size_t *outlen);

/* ---- engine/pull.c: pulling missing images ---- */
enum dk_pull_policy { DK_PULL_MISSING, DK_PULL_ALWAYS, DK_PULL_NEVER };
struct dk_pulling;
/* The pull settings of docker.ini as settings_read fills them (docker.c's
 * table; the core's strings, valid until fini). */
struct dk_pull_conf {
    const char *auth_host;   /* registry_auth_host, or NULL */
    uint64_t timeout_ns;     /* pull_timeout */
    int policy;              /* pull: the index of missing, always, never */
    int auth;                /* registry_auth (a credential) is set */
};
/* The check of registry_auth_host for that table (sbx_setting_v1.check). */
const char *dk_check_registry_host(const char *v);
/* Takes the pull settings @c, checks that the two registry_auth keys go
 * together, and makes the lock; before any pull.  dk_pull_fini undoes it. */
int dk_pull_init(struct dk_prov *p, const struct dk_pull_conf *c);
void dk_pull_fini(struct dk_prov *p);
/* Pulls @image (POST /images/create), within pull_timeout; concurrent
 * pulls of one image share the first.  Sets the error and returns it. */
int dk_pull(struct dk_prov *p, const char *image);
/* SBX_E_INVAL (set) when @image is no reference a pull can take: checked
 * before the daemon sees it (Podman answers a bad name with a 500). */
int dk_pull_check(struct dk_prov *p, const char *image);

#endif /* DOCKER_INT_H */
