/* plugins/local/local-int.h - internals of the local provider
 *
 * The local provider runs each exec in fresh Linux namespaces under a
 * per-exec cgroup, with a seccomp filter.  Everything from the core comes
 * through the host table stored in struct lcl_prov; nothing here is
 * exported (the module exports only sandbox_provider_v1).
 */
#ifndef LOCAL_INT_H
#define LOCAL_INT_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <polysandbox/provider.h>

/* Kernel constants an older libc's headers (included above) may lack. */
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif
/* The mount API's (include local-int.h after <sys/mount.h>). */
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV 0x00000004
#define MOUNT_ATTR_NOEXEC 0x00000008
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

#define LCL_ID_PREFIX "lcl-"
#define LCL_META_FILE "meta.json"
#define LCL_MOUNT_ATTR_IDMAP 0x00100000 /* MOUNT_ATTR_IDMAP, Linux 5.12 */
#define LCL_MAX_BINDS 64
#define LCL_MAX_HIDDEN 32
#define LCL_PATH_MAX 4096

/* In-sandbox identity of the payload (unsigned: it is printed with %u). */
#define LCL_SANDBOX_UID 1000u
#define LCL_SANDBOX_GID 1000u

/* One entry of the new root: a host path bound read-only at the same
 * place, or a symlink recreated with the host's target. */
struct lcl_bind {
    char *path;      /* absolute, e.g. "/usr" or "/etc/ld.so.cache" */
    char *link;      /* symlink target, or NULL for a bind */
    bool is_dir;     /* mount point is a directory (else a file) */
    bool optional;   /* skipped when gone by the time a sandbox starts */
};

enum lcl_cg_ctrl {
    LCL_CG_MEMORY,
    LCL_CG_PIDS,
    LCL_CG_CPUACCT,
    LCL_CG_FREEZER,
    LCL_CG_NCTRL
};

/* What the host offers, probed once at init. */
struct lcl_cgroups {
    int version;                        /* 0 = unusable, 1 or 2 */
    char *mount[LCL_CG_NCTRL];          /* v1: mount point per controller */
    char *base[LCL_CG_NCTRL];           /* v1: mount/<cgroup_root>, created */
    bool usable[LCL_CG_NCTRL];          /* we can create children there */
    bool memsw;                         /* v1: memory.memsw.* present */
    char *v2_base;                      /* v2: <mount>/<cgroup_root> */
    bool v2_kill;                       /* v2: cgroup.kill present */
    char *why;                          /* why not usable, for doctor/logs */
};

/* One entry of the root's skeleton (a tmpfs made per exec). */
enum { LCL_SK_DIR, LCL_SK_FILE, LCL_SK_LINK };
struct lcl_skel_ent {
    int kind;
    char *path;             /* relative to the root, parents listed first */
    const char *data;       /* link target, file text, or NULL (empty file) */
};

/* Limits of ours this host does not let us enforce (jail/limits.c). */
struct lcl_unenforced {
    uint64_t bits;          /* SBX_LIMIT_BIT_* */
    char *why;              /* allocated (lcl_limits_free) */
};

struct lcl_prov {
    const sbx_host_v1 *host;
    sbx_host_handle *h;
    char *state_dir;        /* <state>/ (created 0700) */
    char *skel;             /* <state>/root: where the child mounts its root */
    struct lcl_skel_ent *skel_ents; /* what the root tmpfs holds, built once */
    size_t n_skel;
    char *skel_shared;      /* root only: where the skeleton is kept mounted (jail/skel.c) */
    char *run_dir;          /* tmpfs home of non-persistent sandboxes, or NULL */
    char *state_abs;        /* state_dir as an absolute path (in meta.json), or NULL */
    bool root;              /* euid 0: tmpfs work dirs, mapped uid */
    uid_t host_uid;         /* host uid of the sandbox user's files (work, uploads, skeleton) */
    gid_t host_gid;
    uid_t id_uid;           /* settings uid, gid, ids: the range of host ids (local-ids.c) */
    gid_t id_gid;
    uint64_t id_count;
    bool ids_per_exec;      /* each init its own id of the range; work/ idmapped */
    bool allow_host_net;    /* settings: network = host permitted */
    bool egress_loopback;   /* settings: egress reaches the host's loopback as 10.0.2.2 */
    struct lcl_zyg *zyg_idle; /* idle zygotes (launch/zygote.c) */
    bool zyg_broken;        /* a zygote could not start: execs go the plain way */
    struct lcl_bind binds[LCL_MAX_BINDS];
    size_t n_binds;
    char *cache_dir;  /* cache_dir's path (bound when a directory), or NULL */
    char *cache_unbound; /* the built-in cache_dir when it could not be bound, or NULL */
    char *hidden[LCL_MAX_HIDDEN]; /* our own host paths: never shown (jail/layout.c) */
    size_t n_hidden;
    char *masks[LCL_MAX_HIDDEN];  /* those below a bind: covered in every root */
    size_t n_masks;
    struct lcl_cgroups cg;
    void *bpf;              /* struct sock_filter[], built once */
    size_t bpf_len;         /* number of instructions */
    char *seccomp_why;      /* why the filter could not be built */
    uint64_t work_inodes;
    long ncpu;
    int cap_last;           /* /proc/sys/kernel/cap_last_cap (63 if unknown) */
    bool locald;            /* settings: daemon = auto (launch/daemon.c) */
    char *locald_path;      /* polysandbox-locald */
    char locald_key[40];    /* its build and settings, hashed */
    bool locald_strict;     /* tests: wait for the daemon and its sandboxes, never in-process */
    bool cg_v2_slots;       /* polysandbox-locald: v2 cgroups as one-shot pool slots (cgroup/slots.c) */
    struct lcl_unenforced unenforced[4]; /* told the core at each create and attach */
    size_t n_unenforced;
    bool floor_data;        /* no memory cgroup: RLIMIT_DATA per process */
    bool floor_nproc;       /* no pids cgroup: RLIMIT_NPROC per user namespace */
};

struct lcl_sb {
    char id[SBX_ID_MAX];
    char *dir;              /* <state>/<id> */
    char *work;             /* <state>/<id>/work */
    char *template_name;
    char *rootfs;           /* image directory shown read-only as /, or NULL */
    sbx_limits_v1 limits;
    sbx_network network;
    bool egress;            /* network = egress: each exec gets slirp4netns (local-egress.c) */
    bool persistent;
    bool work_tmpfs;        /* work/ is a tmpfs we mounted */
    uid_t work_uid;         /* host ids its files are stored as (LCL_SANDBOX_UID: idmapped) */
    gid_t work_gid;
    uint64_t created_ns;    /* Unix time */
    uint64_t ttl_ns;
    sbx_kv_v1 *env;         /* owned copies */
    size_t n_env;
    sbx_kv_v1 *labels;
    size_t n_labels;
};

/* ---- local-util.c ---- */
/* Every signal to SIG_DFL, none blocked (system calls only: safe in a
 * fork of a multi-threaded process). */
void lcl_signals_default(void);
/* In the sandbox init, before it says the payload runs: forward the
 * signals an exec's signal_fd may carry (sbx_signal_deliverable) to
 * @payload's process group (a pid namespace's init gets only the signals
 * it handles; the supervisor sends them to it).  System calls only. */
void lcl_signal_forward_to(pid_t payload);
/* A detached copy of the mount at @sb's work directory (open_tree, no
 * link followed: lcl_work_open), nosuid, nodev and private, for a mount
 * namespace that has nothing of the host's to bind it from (the
 * daemon's and the zygote's sandboxes); idmapped through the user
 * namespace @userns unless it is -1 (local-ids.c): a descriptor, or -1
 * with errno set. */
int lcl_work_detached(const struct lcl_sb *sb, int userns);
/* FNV-1a, 64 bits, of @n bytes at @data, continuing @h (LCL_FNV_BASIS to
 * start): names and cache keys, never a security boundary. */
#define LCL_FNV_BASIS UINT64_C(0xcbf29ce484222325)
uint64_t lcl_fnv(uint64_t h, const void *data, size_t n);
uint64_t lcl_now_mono(void);
uint64_t lcl_now_unix(void);
char *lcl_join(const char *a, const char *b);
int lcl_write_file(const char *path, const char *text);
int lcl_read_file(const char *path, char *buf, size_t size);
int lcl_read_u64(const char *path, uint64_t *v);
int lcl_read_keyed_u64(const char *path, const char *key, uint64_t *v);
int lcl_rm_tree(const char *path);
int lcl_err_code(int err);
bool lcl_id_valid(const char *id);
void lcl_kv_free(sbx_kv_v1 *kv, size_t n);
int lcl_kv_copy(const sbx_kv_v1 *in, size_t n, sbx_kv_v1 **out);
void lcl_sb_free(struct lcl_sb *sb);

/* Opens @sb's work directory without following a link in the last two
 * components (the sandbox's directory and work/; the state directory
 * above was checked at init): an O_PATH|O_DIRECTORY descriptor, or -1
 * with errno set.  System calls only (the child may call it). */
int lcl_work_open(const struct lcl_sb *sb, int flags);

/* ---- local-owner.c ---- */
/* @path made (0700, missing parents too) or found, then required to be
 * a directory of ours (not a link) with no access for others (0755 is
 * tightened, group- or world-writable refused), in a directory only root
 * or we may change: 0, or an sbx code with the error set naming the
 * path and its owner.  @what names it ("state directory"). */
int lcl_private_dir(struct lcl_prov *p, const char *path, const char *what);
/* The same check of an open directory @fd (no parents). */
int lcl_private_check(struct lcl_prov *p, int fd, const char *path, const char *what);

/* ---- local-ids.c ---- */
/* A host id of the range, held by an init while it lives. */
struct lcl_id {
    uid_t uid;
    gid_t gid;
    int fd;                 /* the lock's open file description, or -1 (a shared id) */
    int userns;             /* lcl_id_userns: the init's user namespace, or -1 */
};
/* One id per init, or the range's first for all (settings, kernel). */
void lcl_ids_probe(struct lcl_prov *p);
/* Takes a free id (p->ids_per_exec) or the shared one: 0 or an sbx code
 * with the error set (SBX_E_BUSY: all in use). */
int lcl_id_take(struct lcl_prov *p, struct lcl_id *id);
void lcl_id_give(struct lcl_id *id);
/* Writes @pid's uid and gid maps: 1000 inside to @id.  0 or -errno. */
int lcl_id_maps(const struct lcl_id *id, pid_t pid);
/* @pid's user namespace (opened once, kept in @id): a descriptor or -1. */
int lcl_id_userns(struct lcl_id *id, pid_t pid);
/* The detached mount @mfd idmapped through @userns (its 1000 is what the
 * files carry): 0 or -1 with errno set. */
int lcl_mount_idmap(int mfd, int userns);

/* ---- local-rundir.c ---- */
#define LCL_SHM "/dev/shm"
/* <state>/run-dir: the link naming the state directory's run dir. */
#define LCL_RUN_DIR_LINK "run-dir"
void lcl_run_dir_probe(struct lcl_prov *p);
/* The directory a new sandbox goes in (the run dir, made on demand, or
 * the state dir). */
const char *lcl_sb_base(struct lcl_prov *p, bool persistent);
/* Remove the run dir if @sb_dir was in it and it is empty now. */
void lcl_run_dir_tidy(struct lcl_prov *p, const char *sb_dir);

/* ---- local-orphans.c ---- */
/* Collects the expired non-persistent sandboxes of this euid's other run
 * dirs whose state directory is gone or no longer names that run dir
 * (their process was killed, then the state directory removed: nobody
 * else would ever find them), and removes emptied run dirs.  Returns how
 * many sandboxes went. */
int lcl_orphans_sweep(struct lcl_prov *p);

/* ---- local-meta.c ---- */
int lcl_meta_save(struct lcl_prov *p, const struct lcl_sb *sb);
int lcl_meta_load(struct lcl_prov *p, const char *id, struct lcl_sb **out);
/* A whole number > 0 at @key of a metadata object (jansson's json_t), 0
 * when absent or anything else. */
struct json_t;
uint64_t lcl_meta_u64(const struct json_t *o, const char *key);

/* ---- local-files.c ---- */
int lcl_file_write(struct lcl_prov *p, struct lcl_sb *sb, const char *path,
                   const void *data, size_t len, uint32_t mode);
int lcl_file_read(struct lcl_prov *p, struct lcl_sb *sb, const char *path,
                  size_t max, void **data, size_t *len);

/* ---- cgroup/cgroup.c: the primitives ---- */
struct lcl_cg_run {
    char *dir[LCL_CG_NCTRL];    /* v1: one directory per controller */
    char *v2dir;                /* v2: the single directory */
    int v2fd;                   /* v2: O_PATH|O_DIRECTORY for CLONE_INTO_CGROUP */
    int pool_fd;                /* v1 pool slot held (flock), or -1 (cgroup/slots.c) */
    bool active;
    bool counted;               /* oom and pids_hits read (final once the init is reaped) */
    uint64_t oom, pids_hits;
};
void lcl_cg_probe(struct lcl_prov *p, const char *root_name);
void lcl_cg_free(struct lcl_cgroups *cg);
/* A fresh cgroup of @sb's limits (none at all where cgroups are
 * unusable): 0 or the error set.  lcl_cg_create is what an exec calls. */
int lcl_cg_fresh(struct lcl_prov *p, struct lcl_sb *sb, struct lcl_cg_run *run);
/* Waits (bounded, killing now and then) until @run's cgroup is empty;
 * closes its v2 descriptor.  Whether it emptied. */
bool lcl_cg_drain(struct lcl_prov *p, struct lcl_cg_run *run);
/* Removes @run's directories and forgets them (after lcl_cg_drain). */
void lcl_cg_rmdirs(struct lcl_prov *p, struct lcl_cg_run *run);
/* This process's start time (clock ticks since boot, /proc), as cgroup
 * names and slot marks carry it. */
unsigned long long lcl_cg_self_start(void);
int lcl_cg_attach(struct lcl_prov *p, struct lcl_cg_run *run, pid_t pid, bool joined);
int lcl_cg_open_tasks(struct lcl_prov *p, struct lcl_cg_run *run, int fds[LCL_CG_NCTRL]);
void lcl_cg_kill(struct lcl_prov *p, struct lcl_cg_run *run);
int64_t lcl_cg_cpu_ns(struct lcl_prov *p, struct lcl_cg_run *run);
int64_t lcl_cg_peak(struct lcl_prov *p, struct lcl_cg_run *run);
uint64_t lcl_cg_oom_kills(struct lcl_prov *p, struct lcl_cg_run *run);
uint64_t lcl_cg_pids_max_hits(struct lcl_prov *p, struct lcl_cg_run *run);
/* Is @name a cgroup of ours whose supervisor is certainly gone? */
bool lcl_cg_stale(const char *name);
/* rmdir @name in every hierarchy; false if one still holds it. */
bool lcl_cg_remove(struct lcl_prov *p, const char *name);

/* ---- cgroup/slots.c: on top of cgroup/cgroup.c, never below it ---- */
#define LCL_POOL_XATTR "trusted.polysandbox.owner"
/* An exec's cgroup: a slot when one can be had, else a fresh one. */
int lcl_cg_create(struct lcl_prov *p, struct lcl_sb *sb, struct lcl_cg_run *run);
/* Waits (bounded) until it is empty, then gives the slot back or
 * removes the cgroup. */
void lcl_cg_destroy(struct lcl_prov *p, struct lcl_cg_run *run);
/* Removes the empty cgroups of ours whose supervisor died (SIGKILL)
 * before removing them, and slots whose holder died mid-exec; returns
 * how many went. */
int lcl_cg_reap_stale(struct lcl_prov *p);
/* Takes a free clean slot (or makes one) for an exec of @sb, as root on
 * v1 (on v2, with cg_v2_slots, a fresh one-shot slot); false: none to be
 * had, make a fresh cgroup (nothing set). */
bool lcl_cg_pool_claim(struct lcl_prov *p, const struct lcl_sb *sb, struct lcl_cg_run *run,
                       unsigned long long start);
/* Gives the slot back (clean) or removes it; @empty: it holds no process. */
void lcl_cg_pool_release(struct lcl_prov *p, struct lcl_cg_run *run, bool empty);
/* Is cgroup @name a pool slot held for an exec of sandbox @sb? */
bool lcl_cg_pool_owned_by(struct lcl_prov *p, const char *name, const struct lcl_sb *sb);
/* Kills what runs in slot @name while it is held for an exec of @sb. */
void lcl_cg_pool_kill(struct lcl_prov *p, const char *name, const struct lcl_sb *sb);
/* Removes slot @name if its holder died mid-exec; true if it went. */
bool lcl_cg_pool_reap(struct lcl_prov *p, const char *name);

/* ---- jail/limits.c ---- */
struct lcl_child;
/* After lcl_cg_probe: which limits go unenforced here, and the rlimit
 * floors used instead. */
void lcl_limits_probe(struct lcl_prov *p);
/* Frees what lcl_limits_probe wrote down. */
void lcl_limits_free(struct lcl_prov *p);
/* Tell the core (create, attach): SBX_OK, or its refusal (set). */
int lcl_limits_report(struct lcl_prov *p);
/* The floors of the exec @c describes (c->sb set); @zygote: started by a
 * zygote, whose user namespace it shares. */
void lcl_limits_floors(const struct lcl_prov *p, struct lcl_child *c, bool zygote);
void lcl_limits_doctor(struct lcl_prov *p, sbx_doctor_cb_v1 cb, void *ud);

/* ---- jail/seccomp.c ---- */
int lcl_seccomp_build(struct lcl_prov *p);
/* Build the filter once, at first use (thread safe). */
int lcl_seccomp_ensure(struct lcl_prov *p);

/* ---- jail/skel.c ---- */
/* Where the shared skeleton would be (root only); errors: out of memory. */
int lcl_skel_shared_init(struct lcl_prov *p);
/* The shared skeleton's directory, made on first use, or NULL when it
 * cannot be had (the init then makes the skeleton per exec). */
const char *lcl_skel_shared(struct lcl_prov *p);

/* ---- jail/etcscan.c ---- */
struct lcl_etc_ent {
    char *name;             /* an entry of /etc, e.g. "ld.so.cache" */
    unsigned char type;     /* DT_DIR, DT_REG, DT_LNK or DT_UNKNOWN */
};
struct lcl_etc_list {
    struct lcl_etc_ent *ents;
    size_t n;
};
/* The /etc entries a sandbox shows, into @l (freed with
 * lcl_etc_list_free); 0, or -ENOMEM. */
int lcl_etc_scan(struct lcl_prov *p, struct lcl_etc_list *l);
void lcl_etc_list_free(struct lcl_etc_list *l);

/* ---- jail/layout.c ---- */
/* The orchestrator's own host paths (configuration, state, modules:
 * compiled in, and the host's private_paths) into p->hidden; call
 * before lcl_layout_probe, which turns those below a bind into masks. */
int lcl_layout_hidden(struct lcl_prov *p);
/* The binds: system trees, /etc entries, @extra (ro_binds) and @cache
 * (cache_dir: NULL is the built-in PKGCACHEDIR, "" none), bound when it
 * is a directory. */
int lcl_layout_probe(struct lcl_prov *p, const char *extra, const char *cache);
int lcl_skeleton_build(struct lcl_prov *p);
int lcl_layout_rootfs(struct lcl_prov *p, const char *image, char **out);
void lcl_layout_free(struct lcl_prov *p);

/* ---- jail/: what runs inside a sandbox (jail/jail.h) ---- */

/* ---- local-egress.c ---- */
/* The user-mode stack of one exec with egress. */
struct lcl_egress {
    pid_t pid;              /* slirp4netns, or -1 */
    int exit_w;             /* closing it tells it to go, or -1 */
};
/* The slirp4netns to run (a static path), or NULL when not installed. */
const char *lcl_egress_binary(void);
/* 0 when egress can be given here, else the error (SBX_E_NOTSUP, naming
 * the missing binary) set and returned. */
int lcl_egress_check(struct lcl_prov *p);
/* Brings up tap0 in the network namespace of @init (its user namespace
 * mapped, the command not started yet) and waits until it is ready; 0,
 * or the error set (nothing left running). */
int lcl_egress_start(struct lcl_prov *p, pid_t init, struct lcl_egress *e);
/* Kills and reaps it; idempotent (pid -1, exit_w -1 is stopped). */
void lcl_egress_stop(struct lcl_egress *e);

/* ---- launch/exec.c ---- */
int lcl_exec(struct lcl_prov *p, struct lcl_sb *sb, const sbx_exec_spec_v1 *spec,
             const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out);
/* An exec whose init @sp starts (launch/zygote.c) instead of a clone:
 * start() gets the child's view with its descriptors and sets the
 * process whose uid/gid maps are written and whose exit ends the exec
 * (its namespaces made, waiting for the go) and a pidfd of it (ours). */
struct lcl_spawn {
    int (*start)(void *ud, struct lcl_child *c, pid_t *pid, int *pidfd);
    void *ud;
    bool maps_written;      /* the process's user namespace is mapped already (a zygote's) */
};
int lcl_exec_spawn(struct lcl_prov *p, struct lcl_sb *sb, const sbx_exec_spec_v1 *spec,
                   const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out,
                   const struct lcl_spawn *sp);

/* ---- launch/zygote.c ---- */
/* The zygote path of ops->exec: @spec through a zygote started from
 * @zygote (the template's words); SBX_E_NOTSUP when it cannot (nothing left behind). */
int lcl_zyg_exec(struct lcl_prov *p, struct lcl_sb *sb, const char *const *zygote,
                 const sbx_exec_spec_v1 *spec, const sbx_output_sink_v1 *sink,
                 sbx_exec_outcome_v1 *out);
/* Ends every idle zygote (fini). */
void lcl_zyg_fini(struct lcl_prov *p);

/* ---- launch/daemon.c: execs in sandboxes polysandbox-locald prepared ---- */
#define LCL_LOCALD_NO 1     /* not taken: run it in-process */
/* Decides from @setting (the `daemon` setting: "auto" or "off"), which
 * POLYSANDBOX_LOCAL_DAEMON overrides; errors: a bad value of that. */
int lcl_locald_init(struct lcl_prov *p, const char *setting);
/* Hands the exec @c describes (pipes made, files written) to a prepared
 * sandbox: 0 and *pidfd (the sandbox init's), @cg (its cgroup, to read
 * and kill; not ours to remove) and *conn (give it to lcl_locald_done);
 * LCL_LOCALD_NO: run it in-process; else an error (sbx code, set). */
int lcl_locald_exec(struct lcl_prov *p, const struct lcl_child *c, struct lcl_cg_run *cg,
                    int *pidfd, int *conn);
/* Can the daemon hold its sandboxes in this host's cgroups? */
bool lcl_locald_cg_ok(const struct lcl_prov *p);
/* The outcome is read: the daemon may take the cgroup back. */
void lcl_locald_done(struct lcl_prov *p, int *conn, struct lcl_cg_run *cg, const char *id);
/* doctor: whether the daemon is on, usable here and running. */
void lcl_locald_doctor(struct lcl_prov *p, sbx_doctor_cb_v1 cb, void *ud);

/* ---- local-doctor.c ---- */
void lcl_doctor(struct lcl_prov *p, const sbx_provider_ops_v1 *ops, sbx_doctor_cb_v1 cb, void *ud);
int lcl_health(struct lcl_prov *p);

#endif /* LOCAL_INT_H */
