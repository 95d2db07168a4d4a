/* plugins/microvm/mv-vmm.h - the small VMM interface of the microvm provider
 *
 * A backend starts one VM from a kernel and an initrd (or restores one
 * from a snapshot), gives the host its end of the agent's channel,
 * snapshots a running VM, and stops it.  QEMU's microvm machine
 * (mv-qemu.c: the channel a socket it is handed, snapshots by QMP
 * migration in mv-snap.c) and Firecracker (mv-fc.c: a REST API on a unix
 * socket, the channel vsock, snapshots by the API) are the backends.
 */
#ifndef POLYSANDBOX_MV_VMM_H
#define POLYSANDBOX_MV_VMM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* What one VM is made of.  Strings (transfer none). */
struct mv_vm_config {
    const char *binary;    /* the VMM program (PATH looked up) */
    const char *kernel;
    const char *initrd;
    const char *accel;     /* "kvm" or "tcg" */
    const char *console;   /* file the guest's console is written to */
    const char *log;       /* file the VMM's own messages go to */
    uint64_t memory_mib;
    uint64_t disk_bytes;   /* size of the guest's /work */
    int chan_fd;           /* the VMM's end of the agent channel (a stream socket) */
    /* Since persistent sandboxes: non-zero when @chan_fd is a listening
     * unix socket the VMM accepts one client at a time on, and the VMM
     * is to outlive the caller (its own session, not the caller's child,
     * no PDEATHSIG). */
    int detach;
    const char *name;      /* the VM's name (-name), how its process is told apart; or NULL */
    /* Since snapshots (mv-snap.c): a QMP monitor on this stream socket
     * (the snapshot's builder), and a migration stream (a file) to
     * restore the VM from instead of booting it; -1 for none each.
     * @tsc_khz: the rate the guest is told its TSC runs at (0: the
     * host's now); a restore gives its snapshot's, so that the VM's
     * command line is the one it was saved with. */
    int qmp_fd;
    int incoming_fd;
    unsigned long tsc_khz;
    /* Since Firecracker: the VM's own directory (its API socket and
     * vsock socket are made there; the VMM runs in it), a root drive
     * (NULL: none, the initrd is the root), and a snapshot to restore
     * from instead of booting (NULL each: boot). */
    const char *dir;
    const char *rootfs;
    const char *snap_state;
    const char *snap_mem;
    /* Non-zero: the calling thread lives as long as the provider
     * (mv-spawn.c's), so the VMM is tied to it (PR_SET_PDEATHSIG) as to
     * the process; otherwise only when the caller is the main thread. */
    int tie;
    /* Since the jailer (mv-jail.c): Firecracker's jailer program, or
     * NULL to run firecracker directly, and the uid and gid it drops to. */
    const char *jailer;
    unsigned jail_uid, jail_gid;
    /* Since shared snapshot memory (mv-snap.c), QEMU only: the guest's
     * RAM a file (memory-backend-file) mapped shared (@mem_share: the
     * snapshot's builder writes it) or private (a restore: copy-on-write
     * pages shared by every VM restored from it); NULL: anonymous.  With
     * @mem_path and @incoming_fd, the migration waits (-incoming defer)
     * for the QMP monitor to enable x-ignore-shared and start it. */
    const char *mem_path;
    int mem_share;
    int mem_fd;            /* an fd @mem_path names (/proc/self/fd/N) kept open in QEMU, or -1 */
    /* Since images, QEMU only: a read-only erofs image (a path without
     * commas) the guest gets as a virtio-blk drive and runs its commands
     * in (sbx.image=erofs on its command line); NULL: none. */
    const char *image;
    /* Since the VMM's jail (mv-qjail.c), QEMU only: the jail it starts
     * in, or NULL to start it as we are. */
    const struct mv_qjail *qjail;
    /* Since egress, QEMU only: non-zero gives the guest a virtio-net
     * device on QEMU's user-mode network (slirp: 10.0.2.15/24, gateway
     * 10.0.2.2, DNS 10.0.2.3; sbx.net=user on its command line), and a
     * jailed QEMU keeps the host's network namespace for slirp's
     * sockets; 0: no network device at all. */
    int net;
};

struct mv_vmm {
    const char *name;
    /* Starts the VM; *pid is the VMM's process, which dies with the
     * caller's thread (PR_SET_PDEATHSIG) when that is the main thread or
     * @cfg->tie says it lasts, unless @cfg->detach.  0, or -1 with @err
     * set. */
    int (*start)(const struct mv_vm_config *cfg, pid_t *pid, char *err, size_t errlen);
    /* Since Firecracker; NULL when the channel is @cfg->chan_fd's peer.
     * Connects to the agent of the VM @start made, retrying until it
     * listens or @deadline_ms (CLOCK_MONOTONIC ms): 0 with *fd the
     * host's end (transfer full), or -1 with @err set. */
    int (*connect)(const struct mv_vm_config *cfg, pid_t pid, int64_t deadline_ms, int *fd,
                   char *err, size_t errlen);
    /* Since Firecracker; NULL where snapshots go another way (QEMU:
     * mv-snap.c over QMP).  Saves the running VM whose directory is
     * @dir to @state and @mem (the VM paused meanwhile, resumed after):
     * 0, or -1 with @err set. */
    int (*snapshot)(const char *dir, const char *state, const char *mem, char *err,
                    size_t errlen);
};

/* mv-qjail.c, for the QEMU backend: fork(), or with @j clone(2) into
 * the jail's new namespaces (the child then calls enter: 0, or -1 with
 * @err set, before it execs exe). */
struct mv_qjail;
pid_t mv_qjail_fork(const struct mv_qjail *j);
int mv_qjail_enter(const struct mv_qjail *j, char *err, size_t errlen);
const char *mv_qjail_exe(const struct mv_qjail *j);

extern const struct mv_vmm mv_vmm_qemu;
extern const struct mv_vmm mv_vmm_firecracker;

/* The host's TSC rate in kHz (/proc/cpuinfo's "cpu MHz"), or 0. */
unsigned long mv_host_tsc_khz(void);

/* The VMM's pid that the middle process @middle (a detached start: it
 * forked the VMM in a session of its own and exited) wrote on the pipe
 * @pp (both ends closed here), @middle reaped; or -1 with @err set. */
pid_t mv_vmm_detached(pid_t middle, int pp[2], char *err, size_t errlen);

/* Kills and reaps the VMM process @pid (SIGKILL: the guest has no state
 * worth keeping).  A detached VMM is no child of ours: mv-persist.c
 * stops those. */
void mv_vmm_stop(pid_t pid);

#endif
