/* plugins/docker/engine/engine.h - the Engine API client of the docker
 * provider
 *
 * What talks to a Docker (or Podman) daemon and knows nothing of the
 * provider's settings or sandboxes: JSON calls over the shared libcurl
 * client (plugins/common/http.h; a unix socket, or TCP with TLS), Docker's
 * multiplexed exec stream, the tar bodies of the archive API, and image
 * pulls.  Errors go to the core through the SDK's host table.  The
 * provider (docker-int.h) and the exec modes (exec/) build on it; nothing
 * here includes them.  Nothing here is exported.
 */
#ifndef DOCKER_ENGINE_H
#define DOCKER_ENGINE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <polysandbox/provider.h>

#include "http.h"

#define DK_API "/v1.41"

/* One daemon. */
struct dk_engine {
    const sbx_host_v1 *host;   /* errors, logs, secrets */
    sbx_host_handle *h;
    ph_client *http;
    char *socket;              /* the base URL, for messages */
    /* The daemon is Podman's Docker-compatible service (GET
     * /libpod/_ping answers); probed once, with the helper. */
    bool podman;
};

/* ---- engine.c ---- */
/* Sets the core's error (host->set_error) and returns @code. */
int dk_err(struct dk_engine *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* ph_json, with @out optional (the answer is dropped when NULL). */
int dk_json(struct dk_engine *e, const char *method, const char *path, json_t *body,
            long timeout_ms, long *status, json_t **out, char err[PH_ERR_MAX]);
/* Sets e->podman (once, before the first create). */
int dk_probe(struct dk_engine *e);
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t dk_now_ns(void);

/* ---- stream.c: Docker's 8-byte frames and the helper's report
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
/* Parses a report line "STATUS cpu=NS rss=BYTES\n". */
bool dk_report_parse(const char *s, struct dk_report *rep);

/* ---- tar.c (libarchive) ---- */
/* A tar holding the parents of @path as directories (0755) and @path as a
 * regular file.  *out is malloc'ed. */
int dk_tar_file(const char *path, const void *data, size_t len, uint32_t mode,
                void **out, size_t *out_len, char *err, size_t errlen);
/* The one regular file of a tar (as GET archive answers for a file):
 * SBX_E_PATH when the entry is not a regular file, SBX_E_LIMIT over max.
 * *data is allocated with @alloc. */
int dk_tar_extract_one(const void *tar, size_t tar_len, size_t max, void *(*alloc)(size_t),
                       void (*dfree)(void *), void **data, size_t *len, char *err, size_t errlen);

/* ---- pullref.c: image references, the pull's progress stream, its
 * errors, X-Registry-Auth (pure; unit-tested) ---- */
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

/* ---- pull.c: pulling missing images ---- */
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
/* The pulls of one daemon. */
struct dk_puller {
    struct dk_engine *eng;
    int policy;                /* enum dk_pull_policy */
    long timeout_ms;           /* deadline of one pull */
    char *auth_host;           /* registry_auth_host: where registry_auth goes, or NULL */
    bool sync;                 /* lock and cond are set up */
    pthread_mutex_t lock;      /* guards pulling */
    pthread_cond_t cond;       /* a pull ended */
    struct dk_pulling *pulling; /* pulls in flight, one per image */
};
/* The check of registry_auth_host for that table (sbx_setting_v1.check). */
const char *dk_check_registry_host(const char *v);
/* Takes the pull settings @c, checks that the two registry_auth keys go
 * together, and makes the lock; before any pull.  dk_pull_fini undoes it
 * (also after a failed init). */
int dk_pull_init(struct dk_puller *pl, struct dk_engine *e, const struct dk_pull_conf *c);
void dk_pull_fini(struct dk_puller *pl);
/* Pulls @image (POST /images/create), within pull_timeout; concurrent
 * pulls of one image share the first.  Sets the error and returns it. */
int dk_pull(struct dk_puller *pl, const char *image);
/* SBX_E_INVAL (set) when @image is no reference a pull can take: checked
 * before the daemon sees it (Podman answers a bad name with a 500). */
int dk_pull_check(struct dk_engine *e, const char *image);

#endif /* DOCKER_ENGINE_H */
