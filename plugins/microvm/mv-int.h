/* plugins/microvm/mv-int.h - what the microvm provider's files share */
#ifndef POLYSANDBOX_MV_INT_H
#define POLYSANDBOX_MV_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <polysandbox/provider.h>

#include "mv-proto.h"
#include "mv-vmm.h"

struct mv_prov {
    const sbx_host_v1 *host;
    sbx_host_handle *h;
    const struct mv_vmm *vmm;
    char *binary, *kernel, *initrd;
    char *rootfs;            /* firecracker only: a root drive, or NULL */
    char *jailer;            /* firecracker only: its jailer program, or NULL */
    unsigned jail_uid, jail_gid;
    char *accel;             /* setting: auto, kvm or tcg */
    uint64_t memory_mib;
    uint64_t boot_timeout_ms;
    uint64_t kvm_probe_ms;
    int snapshot;            /* setting: 1 auto (restore from a snapshot), 0 off */
    int snap_shared;         /* setting snapshot_memory: 1 shared (a file), 0 copy */
    struct mv_spawner *spawner; /* mv-spawn.c */
    /* QEMU's jail (mv-qjail.c): setting vmm_jail (1 on, the default),
     * the ids a root provider's QEMU drops to (vmm_uid, vmm_gid), what
     * the jail binds of the host (found once), and the snapshot's
     * sealed copies (mv-seal.c). */
    int vmm_jail;
    unsigned vmm_uid, vmm_gid;
    struct mv_qprog *qprog;
    struct mv_seals *seals;
    int egress_loopback;     /* setting: 1 true (egress allowed, loopback and all), 0 false */
};

/* Persistent sandboxes' ids (mv-persist.c); the others' are
 * "microvm-PID-N", never a directory's name. */
#define MV_PERSIST_PREFIX "microvm-p"
#define MV_SOCK "agent.sock"
/* A sandbox's record in its directory (mv-persist.c); an ephemeral one's
 * too, in <state>/vm.XXXXXX, for list. */
#define MV_RECORD "vm.json"
#define MV_EPHEMERAL_DIR "vm."

struct mv_sandbox {
    pid_t pid;               /* the VMM */
    int persistent;          /* outlives us: a record in dir, a socket, no child of ours */
    unsigned long long start_ticks; /* the VMM's start time (/proc/PID/stat) */
    char id[SBX_ID_MAX];     /* a persistent one's is also its VM's name */
    int chan;                /* our end of the agent's channel */
    char *dir;               /* console and VMM logs; removed at destroy */
    uint32_t unenforced;     /* limits the guest said it cannot apply */
    const char *accel;       /* static: "kvm" or "tcg" */
    /* The VMM that runs it (static): a persistent sandbox's is its
     * record's, whatever the settings say now. */
    const struct mv_vmm *vmm;
    sbx_limits_v1 limits;    /* of create */
    char *env;               /* create's environment: "KEY=VALUE\0" each */
    size_t env_len, n_env;
    int broken;              /* the channel is out of step: no more execs */
};

/* mv-chan.c: frames over the channel, within a deadline (CLOCK_MONOTONIC
 * ms; 0 = none).  Return SBX_OK or an error set on the host. */
int mv_chan_send(struct mv_prov *p, int fd, uint8_t type, const void *a, size_t alen,
                 const void *b, size_t blen);
/* Reads one frame from the guest: *payload (transfer full, malloc, NUL
 * after the bytes) and its header.  SBX_E_TIMEOUT at the deadline,
 * SBX_E_BACKEND on a frame that breaks the protocol or a closed channel. */
int mv_chan_recv(struct mv_prov *p, int fd, int64_t deadline_ms, struct mv_hdr *hd,
                 uint8_t **payload);
/* A stop for mv_chan_recv_stop: @fd (a cancel_fd; -1: none) readable
 * sets @until (0 before) to now + @grace_ms, which then bounds the rest
 * of the frame.  A frame is never cut short (what waits is read): that
 * would leave the channel out of step. */
struct mv_stop {
    int fd;
    int grace_ms;
    int64_t until;
};
/* mv_chan_recv, watching @stop (see struct mv_stop; the caller reads
 * stop->until after it, whatever it returned). */
int mv_chan_recv_stop(struct mv_prov *p, int fd, int64_t deadline_ms, struct mv_stop *stop,
                      struct mv_hdr *hd, uint8_t **payload);
/* SBX_OK when nothing waits on the channel between requests; else
 * SBX_E_BACKEND: a frame the agent sent unasked (after an EXIT, say),
 * or the channel closed. */
int mv_chan_quiet(struct mv_prov *p, int fd);
int64_t mv_now_ms(void);
/* Reads the agent's first frame, its HELLO.  *answered: whether any frame
 * came (else the VM stopped or timed out before its agent spoke). */
int mv_chan_hello(struct mv_prov *p, int fd, int64_t deadline_ms, struct mv_hello *hl,
                  int *answered);
/* Sets the error an ERROR frame @pl of @len bytes names (its code mapped
 * to SBX_E_*, its text made printable) about @what, and returns it. */
int mv_chan_error(struct mv_prov *p, const char *what, const uint8_t *pl, size_t len);

/* mv-image.c: the read-only disk image (erofs, or ext4 without
 * mkfs.erofs: setting image_fs) of the root directory @root, built once
 * under the state directory (STATE/MV_IMAGE_DIR/KEY.FS, KEY the root's
 * identity, mv_image_key), checked against its record (KEY.FS.sum) at
 * each use: *path (transfer full) its file.  SBX_OK, or an error set on
 * the host (SBX_E_NOTSUP without a mkfs). */
int mv_image_for(struct mv_prov *p, const char *root, char **path);
#define MV_IMAGE_DIR "images"
#define MV_IMAGE_SUM ".sum"
#define MV_IMAGE_LOCK ".lock"
/* A disk's record: its BLAKE2b (hex), size, inode and times when it was
 * made or last hashed, and the root it was made of. */
struct mv_image_sum {
    char hash[65];
    unsigned long long size, ino;
    long long mtime, mtime_ns, ctime, ctime_ns;
    char root[4096];
};
/* Reads the record @sum_path: 0, or -1 (errno; EINVAL: damaged). */
int mv_image_sum_read(const char *sum_path, struct mv_image_sum *v);
/* The key of the root directory @root whose stat is @st. */
struct stat;
uint64_t mv_image_key(const char *root, const struct stat *st);
/* One line for doctor into @buf (the file system, the disks cached and
 * their roots): 1 when disks can be made, else 0. */
int mv_image_describe(struct mv_prov *p, char *buf, size_t n);
/* mv-imagegc.c: removes the disks whose image's root is gone (list). */
void mv_image_sweep(struct mv_prov *p);
/* "ext4" for a disk named *.ext4, else "erofs": the guest's sbx.image. */
const char *mv_image_fstype(const char *path);

/* mv-net.c: whether the sandbox @spec gets a network device (*net 1:
 * its template allows egress); SBX_OK, or SBX_E_NOTSUP set on the host
 * when this provider's settings cannot give it (nothing started).  And
 * doctor's line on it. */
int mv_net_egress(struct mv_prov *p, const sbx_create_spec_v1 *spec, int *net);
void mv_net_describe(const struct mv_prov *p, char *buf, size_t n);

/* mv-exec.c */
int mv_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
            const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out);
/* mv-xrun.c: after the EXEC, the command's output to @sink, its streamed
 * stdin, signals and cancel, until its EXIT (*@ex) within @deadline.
 * *@over: the sink said stop (the agent was told to kill it).  SBX_OK
 * (the channel back in step); SBX_E_CANCELLED; or another error set. */
int mv_xrun_wait(struct mv_prov *p, struct mv_sandbox *s, const sbx_exec_spec_v1 *spec,
                 const sbx_output_sink_v1 *sink, int64_t deadline, struct mv_exit *ex,
                 int *over);

/* mv-files.c: the SBX_CAP_FILES slots, and one FILE placed (answered). */
int mv_put_file(struct mv_prov *p, struct mv_sandbox *s, const char *path, const void *data,
                size_t len, uint32_t mode);
int mv_upload(void *prov, void *sb, const char *path, const void *data, size_t len,
              uint32_t mode);
int mv_download(void *prov, void *sb, const char *path, size_t max, void **data,
                size_t *len);

/* mv-accel.c: the accelerator to use, "kvm" or "tcg", and why. */
const char *mv_accel_choose(struct mv_prov *p, char *why, size_t whylen);
/* Records what a KVM boot showed, for the next choose. */
void mv_accel_record(struct mv_prov *p, int kvm_boots);

/* How mv_boot starts a VM other than by a plain cold boot (mv-snap.c):
 * a QMP monitor on @qmp_fd (the snapshot's builder), or restored from
 * the migration stream @incoming_fd (then its agent gets a SEED and
 * answers it with its hello); -1 for none each.  @tsc_khz and
 * @cmdline_disk: the kernel command line's (the snapshot's). */
struct mv_boot_from {
    int qmp_fd;
    int incoming_fd;
    unsigned long tsc_khz;
    uint64_t cmdline_disk;
    /* Firecracker: the snapshot's two files (NULL each: not this way). */
    const char *snap_state;
    const char *snap_mem;
    /* QEMU: the guest's RAM in this file (NULL: anonymous), mapped shared
     * (the builder) or private (a restore: then the migration is
     * started over QMP, @qmp_host the host's end of @qmp_fd's socket). */
    const char *mem_path;
    int mem_share;
    int mem_fd;
    int qmp_host;
    /* Since images (mv-image.c): a cold boot with this read-only file
     * system image (erofs or ext4) as the guest's root, @cmdline_disk the size
     * of /work; NULL: the initrd's own root. */
    const char *image;
    /* Since egress (mv-net.c): a cold boot with a network device. */
    int net;
};

/* microvm.c: boots one VM with @accel (or restores it, @from; NULL for a
 * cold boot) and waits for the agent's hello within @timeout_ms. */
int mv_boot(struct mv_prov *p, const char *accel, uint64_t timeout_ms, uint64_t disk_bytes,
            const char *persist_id, const struct mv_boot_from *from, struct mv_sandbox **out);

/* microvm.c: the last line the VMM (vmm.log) or else the guest's console
 * (console.log) wrote in the VM's directory @dir, made printable: why a
 * boot failed.  "" when neither wrote. */
void mv_last_words(const char *dir, char *buf, size_t n);

/* microvm.c: whether the VMM program @bin (a path, or a name looked up
 * on PATH) exists and is executable: 1 with its path in @full, else 0. */
int mv_vmm_path(const char *bin, char *full, size_t n);

/* mv-snap.c: snapshots (see there). */
/* A VM restored from the snapshot for @accel (built first when missing
 * or stale), its agent seeded; as mv_boot. */
int mv_snap_restore(struct mv_prov *p, const char *accel, uint64_t disk_bytes,
                    const char *persist_id, struct mv_sandbox **out);
/* The same for a VM with the image disk @image (mv_image_for's, checked):
 * its own snapshot, keyed by the disk's path and BLAKE2b. */
int mv_snap_restore_image(struct mv_prov *p, const char *accel, uint64_t disk_bytes,
                          const char *persist_id, const char *image, struct mv_sandbox **out);
/* Starts the deferred migration of a VM restored with its RAM in a file:
 * over the QMP monitor @qmp, x-ignore-shared on (the RAM is the file's,
 * not the stream's), then migrate-incoming from @fd, waited for. */
int mv_snap_incoming(struct mv_prov *p, int qmp, int fd);
/* Sends a restored VM's agent its SEED and reads the hello answering it. */
int mv_snap_seed(struct mv_prov *p, struct mv_sandbox *s, uint64_t disk_bytes,
                 int64_t deadline_ms, struct mv_hello *hl, int *answered);
/* One line for doctor: the setting, where the snapshot is, whether it is current. */
void mv_snap_describe(struct mv_prov *p, const char *accel, char *buf, size_t n);
/* Where snapshots live: MV_SNAP_SHM/MV_SNAP_PREFIX<euid>-<mv_snap_hash of
 * the state directory, 16 hex digits>, holding these files. */
#define MV_SNAP_SHM "/dev/shm"
#define MV_SNAP_PREFIX "polysandbox-microvm-"
#define MV_SNAP_FILE "vm.snap"
#define MV_SNAP_RAM "vm.ram"
#define MV_SNAP_REC "snap.json"
#define MV_SNAP_LOCK "lock"
/* The failures in a row of a key's snapshot, kept across its rebuilds
 * until a VM restores from it (mv-snap.c). */
#define MV_SNAP_FAILS "failures.json"
uint64_t mv_snap_hash(const char *state_dir);
/* The hash naming the snapshot directory of @state_dir and the image
 * disk @image (NULL: the plain guest's, mv_snap_hash of @state_dir). */
uint64_t mv_snap_dir_hash(const char *state_dir, const char *image);
/* mv-snapgc.c: removes this euid's snapshots under MV_SNAP_SHM that no
 * state directory owns any more (see there).  Run by list, so by gc. */
void mv_snap_sweep(struct mv_prov *p);
/* Stops the VM and frees @s (an ephemeral one; a persistent one's VM
 * and record are left: mv_sandbox_release). */
void mv_sandbox_free(struct mv_sandbox *s);
/* Frees @s, leaving its VM running. */
void mv_sandbox_release(struct mv_sandbox *s);

/* mv-fcsnap.c: the same for vmm = firecracker (snapshots by its API). */
int mv_fc_snap_restore(struct mv_prov *p, uint64_t disk_bytes, const char *persist_id,
                       struct mv_sandbox **out);
void mv_fc_snap_describe(struct mv_prov *p, char *buf, size_t n);

/* mv-jail.c: firecracker through its jailer (see there).  The link in the
 * VM's directory to the chroot's root, the names the guest's files get
 * there, the cgroup memory the VMM may use beside the guest's. */
#define MV_JAIL_LINK "jail"
#define MV_JAIL_KERNEL "vmlinux"
#define MV_JAIL_INITRD "initrd"
#define MV_JAIL_ROOTFS "rootfs"
#define MV_JAIL_OVERHEAD_MIB 256
#define MV_JAIL_ARGC 24
struct mv_jail {
    char id[65];
    char exec_file[4200];
    char root[4400];
    char uid[16], gid[16];
    char memory_max[48], cpu_max[48];
};
/* Makes @cfg's chroot with the guest's files, and the link to it; fills
 * @j (what the jailer's argv points into).  0, or -1 with @err set. */
int mv_jail_prepare(const struct mv_vm_config *cfg, struct mv_jail *j, char *err,
                    size_t errlen);
/* The jailer's command line (pointing into @cfg and @j), NULL-ended. */
void mv_jail_argv(const struct mv_vm_config *cfg, const struct mv_jail *j,
                  const char *argv[MV_JAIL_ARGC]);
/* The path of the socket @leaf of the VM in @dir: in its chroot when it
 * was jailed (its link there), else in @dir.  0, or -1 when too long. */
int mv_jail_sock(const char *dir, const char *leaf, char *buf, size_t n);
/* Removes the chroot and the link of the VM in @dir, if any. */
void mv_jail_remove(const char *dir);

/* mv-qjail.c: QEMU in a jail of its own (see there).  init: 0, or -1
 * out of memory.  prepare: the VM's root's mount point, its cgroup and
 * console made, what the child needs gathered into *@j (free it with
 * mv_qjail_free once started); 0, or -1 with @err set.  remove: the
 * VM's (in @dir) mount point and cgroup, after its VMM ended. */
#define MV_QJAIL_CPU_QUOTA "100000"
#define MV_QJAIL_CPU_PERIOD "100000"
int mv_qjail_init(struct mv_prov *p);
void mv_qjail_fini(struct mv_prov *p);
int mv_qjail_prepare(struct mv_prov *p, const struct mv_vm_config *cfg, struct mv_qjail **j,
                     char *err, size_t errlen);
void mv_qjail_free(struct mv_qjail *j);
/* One line for doctor into @buf: 1 when VMs can start so, else 0. */
int mv_qjail_describe(struct mv_prov *p, char *buf, size_t n);
void mv_qjail_remove(const char *dir);
/* mv-cgroup.c: the cgroup @name of one VMM, memory.max @mem_bytes and
 * one CPU, its cgroup.procs open in @procs (v1: memory's and cpu's; v2:
 * [0] alone, [1] -1): 0, or -1 with @err set and nothing left.  remove:
 * rmdir, once its VMM is gone. */
int mv_cg_make(const char *name, uint64_t mem_bytes, int procs[2], char *err, size_t errlen);
void mv_cg_remove(const char *name);
/* gc (list): removes the VMM cgroups left empty by a provider killed
 * before it removed them (ten minutes old at least). */
void mv_cg_sweep(void);
/* mv-seal.c: sealed memfd copies of the snapshot in @dir's stream *@fd
 * and RAM *@ram_fd (-1: none), from its holder or made here once per
 * file: 0 with each replaced by a new read-only open file description
 * of its copy (the originals closed), or -1 (errno; both left). */
int mv_seal_init(struct mv_prov *p);
void mv_seal_fini(struct mv_prov *p);
int mv_seal_pair(struct mv_prov *p, const char *dir, int *fd, int *ram_fd);
/* mv-hold.c: the holder of a snapshot's sealed copies, shared by this
 * euid's processes (see there).  A file's identity; fetch: the copy of
 * file @want (@which 0 the stream, 1 the RAM) from the holder in @dir
 * (transfer full), or -1: no holder (@why ""), or its answer refused
 * (@why says why; *pid its pid).  start: a holder of @fds (-1: none),
 * copies of the files @ids, its pid or -1 (errno; call it holding
 * MV_HOLD_LOCK).  stop (gc): kills the holder in @dir: 1, or 0 none. */
#define MV_HOLD_SOCK "hold.sock"
#define MV_HOLD_LOCK "hold.lock"
struct stat;
struct mv_hold_id {
    uint64_t dev, ino, size;
    int64_t sec, nsec; /* mtime */
};
void mv_hold_id_of(const struct stat *st, struct mv_hold_id *id);
int mv_hold_fetch(const char *dir, int which, const struct mv_hold_id *want, pid_t *pid,
                  char *why, size_t whylen);
pid_t mv_hold_start(const char *dir, const int fds[2], const struct mv_hold_id ids[2]);
int mv_hold_stop(const char *dir);
/* Sends @len bytes of @buf on @sock with @fd (SCM_RIGHTS; -1: none), no
 * SIGPIPE: sendmsg's result.  Async-signal-safe. */
ssize_t mv_send_fd(int sock, const void *buf, size_t len, int fd);

/* mv-spawn.c: the thread that starts every ephemeral VMM (see there).
 * init: 0, or -1 out of memory; start: as mv_vmm's start, from any
 * thread; fini: ends the thread (its VMMs, if any are left, die). */
int mv_spawn_init(struct mv_prov *p);
int mv_spawn_start(struct mv_prov *p, const struct mv_vm_config *cfg, pid_t *pid, char *err,
                   size_t errlen);
void mv_spawn_fini(struct mv_prov *p);

/* mv-persist.c: persistent sandboxes (see there). */
int mv_id_ok(const char *id);
void mv_persist_new_id(char id[SBX_ID_MAX]);
/* <state>/sandboxes/@id into @buf; made (0700, EEXIST an error) when @make. */
int mv_persist_dir(struct mv_prov *p, const char *id, int make, char *buf, size_t n);
/* A listening socket at @dir/agent.sock, or -1 (errno). */
int mv_persist_listen(const char *dir);
/* A connection to @dir/agent.sock, or -1 (errno). */
int mv_persist_connect(const char *dir, int64_t deadline_ms);
unsigned long long mv_proc_start(pid_t pid);
/* SIGKILLs the VMM @pid if it still is the one named @name started at
 * @start, and waits for its end: 1 killed, 0 not there (or another
 * process now), -1 (errno). */
int mv_persist_stop(pid_t pid, unsigned long long start, const char *name);
int mv_persist_alive(const struct mv_sandbox *s);
int mv_persist_save(struct mv_prov *p, const struct mv_sandbox *s,
                    const sbx_create_spec_v1 *spec, uint64_t created_ns);
/* A persistent sandbox's handle from its record (no connection yet). */
int mv_persist_load(struct mv_prov *p, const char *id, struct mv_sandbox **out);
int mv_persist_remove(struct mv_prov *p, const char *dir);
/* Whether @s can take a request now: a persistent sandbox opened by
 * attach connects at its first request (so that destroy never waits on
 * a busy or wedged VM) and gets its agent in step; SBX_E_BACKEND for one
 * whose VM is gone. */
int mv_ready(struct mv_prov *p, struct mv_sandbox *s);
int mv_list(void *prov, const sbx_kv_v1 *filter, size_t n_filter, sbx_list_cb_v1 cb, void *ud);

#endif
