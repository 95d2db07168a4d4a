/* plugins/local/daemon/locald.h - internals of polysandbox-locald (the program)
 *
 * locald.c: the start and the event loop; host.c: the host table the
 * provider's sources are given; stock.c: the spares (sandboxes made
 * before an exec asks), started and ended; serve.c: one request;
 * spare.c: a spare's init.  Prefix lcl_d_ for what they share.
 */
#ifndef LOCALD_H
#define LOCALD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../jail/jail.h"
#include "../wire/locald-proto.h"

/* local.c's descriptor: its ops make the provider here too. */
extern const sbx_provider_v1 sandbox_provider_v1;

#define SPARE_MAX 64          /* prepared and serving sandboxes, at most */
#define WMAX 2           /* limits kept prepared for */
#define MAX_FAILS 3      /* preparations failing in a row: that limits goes in-process */

/* ---- host.c: the provider's host, the SDK's test host (no core) ---- */
struct lcl_d_conf {
    const char *sets[16];  /* "key=value" from --set */
    int n_sets;
    const char *hide[LCL_MAX_HIDDEN + 1]; /* --hide: the client's core's private paths */
    int n_hide;
    const char *state_dir;
    bool verbose;
};

extern struct lcl_d_conf lcl_d_conf;
/* The host table and handle for the provider's init, from lcl_d_conf;
 * 0, or -1 (said why). */
int lcl_d_host_open(const sbx_host_v1 **table, sbx_host_handle **h);
/* The last error the provider set, "" when none. */
const char *lcl_d_host_error(void);
void lcl_d_host_close(void);
/* To stderr, with our pid; debug and info only with --verbose. */
void lcl_d_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- the daemon's state ---- */

/* What a prepared sandbox is made for: the limits its cgroup and /tmp
 * carry, its network, and its root (the skeleton, or an image directory
 * as it was when its top level was read: its identity and times). */
struct key {
    uint64_t mem, pids, disk;
    int net;                  /* SBX_NET_NONE or SBX_NET_HOST */
    uint64_t img[5];          /* image: dev, ino, mtime, ctime (s, ns mixed) */
    char rootfs[LCL_PATH_MAX]; /* image directory, or "" */
};

struct want {
    bool used;
    struct key k;
    uint64_t last;       /* last asked for (monotonic ns) */
    int fails;
};

struct spare {
    bool live;
    struct key k;
    pid_t pid;
    int pidfd, ctl, rep; /* rep: the init's setup failures, until it serves */
    struct lcl_cg_run cg;
    bool ready, serving, exited, finishing;
    int client;
    int want;            /* index into wants (preparation failures count there) */
    struct lcl_id id;    /* its host id, held while it lives (local-ids.c) */
};

struct daemon {
    struct lcl_prov *p;
    const char *run_dir;
    char key[LCL_LD_KEY_MAX];
    char sock_path[108];
    char lock_path[LCL_PATH_MAX];
    dev_t sock_dev;
    ino_t sock_ino;
    int lock_fd, listen_fd, sig_fd;
    int per_key;         /* K */
    uint64_t idle_ns, last_req;
    uint64_t mnt_ns, net_ns;
    dev_t state_dev;     /* the state directory we serve (gone: we go) */
    ino_t state_ino;
    bool retiring, stop;
    bool strict;         /* tests: a request waits for a sandbox prepared for it */
    struct want wants[WMAX];
    struct spare z[SPARE_MAX];
};

/* ---- stock.c: the spares, made and ended ---- */
void lcl_d_close_fd(int *fd);
bool lcl_d_key_eq(const struct key *a, const struct key *b);
/* The image directory's identity now; false if it is not one. */
bool lcl_d_image_id(const char *dir, uint64_t img[5]);
/* Clones a spare for limits @wi and lets it build its root; false when
 * it could not. */
bool lcl_d_spare_start(struct daemon *d, int wi);
/* Ends @z: kills what runs, reaps, gives the slot back; the entry is free. */
void lcl_d_spare_end(struct daemon *d, struct spare *z);
/* Keeps K prepared for each limits asked for lately. */
void lcl_d_fill(struct daemon *d);
/* The index into d->wants of limits @k; when new, it takes the least
 * recently asked entry, whose idle spares end. */
int lcl_d_want_for(struct daemon *d, const struct key *k);

/* ---- serve.c: one request ---- */
/* Answers the request on @conn (the connection is then ours). */
void lcl_d_serve(struct daemon *d, int conn);
/* Lets go of the socket and the lock; we end with our last exec. */
void lcl_d_retire(struct daemon *d);

/* ---- locald.c: events ---- */
/* @z said it is ready (or its end closed). */
void lcl_d_on_ready(struct daemon *d, struct spare *z);
/* @z's init ended: reaped now or when its client is done, its setup
 * failure logged, the entry freed. */
void lcl_d_on_exit(struct daemon *d, struct spare *z);


/* The init of a prepared sandbox: @c as for lcl_child_main, fd_sync its
 * end of the daemon's socket (keep_sync), fd_report the daemon's pipe
 * (until a request brings the client's). */
_Noreturn void lcl_spare_main(struct lcl_child *c);

#endif /* LOCALD_H */
