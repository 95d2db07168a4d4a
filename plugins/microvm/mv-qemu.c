/* plugins/microvm/mv-qemu.c - the QEMU backend: `-M microvm`
 *
 * No firmware, no PCI, no network device unless egress was allowed
 * (then user-mode networking alone: QEMU's slirp, no tap, no bridge):
 * the kernel and initrd loaded directly, one virtio-serial port (the
 * agent's channel, a socket handed in as fd), the console to a file.  QEMU's own seccomp filter is on
 * (-sandbox): no new privileges, no spawning, no resource control.
 *
 * tsc_early_khz: the guest is told the TSC's rate (the host's, which
 * TCG's TSC runs at) because, on a loaded host under TCG, calibration
 * against the PIT fails and the boot then waits forever for a clock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mv-int.h"

unsigned long mv_host_tsc_khz(void)
{
    FILE *f = fopen("/proc/cpuinfo", "re");
    char line[256];
    unsigned long khz = 0;

    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        double mhz;
        if (sscanf(line, "cpu MHz : %lf", &mhz) == 1 && mhz > 0 && mhz < 100000) {
            khz = (unsigned long)(mhz * 1000);
            break;
        }
    }
    fclose(f);
    return khz;
}

static int qemu_start(const struct mv_vm_config *cfg, pid_t *pid, char *err, size_t errlen)
{
    char mem[32], append[256], chardev[96], serial[4200], tsc[48] = "", qmp[64], incoming[32];
    char backend[4400];
    unsigned long khz = cfg->tsc_khz ? cfg->tsc_khz : mv_host_tsc_khz();
    int kvm = !strcmp(cfg->accel, "kvm");

    if (khz && !kvm)
        snprintf(tsc, sizeof tsc, " tsc_early_khz=%lu", khz);
    snprintf(mem, sizeof mem, "%llu", (unsigned long long)cfg->memory_mib);
    snprintf(append, sizeof append, "console=ttyS0 panic=-1 quiet sbx.disk=%llu%s%s%s%s",
             (unsigned long long)cfg->disk_bytes, tsc, cfg->image ? " sbx.image=" : "",
             cfg->image ? mv_image_fstype(cfg->image) : "", cfg->net ? " sbx.net=user" : "");
    snprintf(chardev, sizeof chardev, "socket,id=agent,fd=%d%s", cfg->chan_fd,
             cfg->detach ? ",server=on,wait=off" : "");
    if ((size_t)snprintf(serial, sizeof serial, "file:%s", cfg->console) >= sizeof serial) {
        snprintf(err, errlen, "console path too long");
        return -1;
    }
    snprintf(qmp, sizeof qmp, "socket,id=qmp,fd=%d", cfg->qmp_fd);
    snprintf(incoming, sizeof incoming, cfg->mem_path ? "defer" : "fd:%d", cfg->incoming_fd);
    if (cfg->mem_path &&
        (size_t)snprintf(backend, sizeof backend, "memory-backend-file,id=mem,size=%lluM,"
                         "mem-path=%s,share=%s", (unsigned long long)cfg->memory_mib,
                         cfg->mem_path, cfg->mem_share ? "on" : "off") >= sizeof backend) {
        snprintf(err, errlen, "memory file path too long");
        return -1;
    }
    const char *argv[56] = {
        cfg->binary, "-M", cfg->mem_path ? "microvm,memory-backend=mem" : "microvm",
        "-accel", cfg->accel, "-cpu", kvm ? "host" : "max",
        "-m", mem, "-smp", "1", "-nodefaults", "-no-user-config", "-display", "none",
        "-no-reboot", "-sandbox", "on,obsolete=deny,elevateprivileges=deny,spawn=deny,"
        "resourcecontrol=deny", "-kernel", cfg->kernel, "-initrd", cfg->initrd,
        "-append", append, "-serial", serial, "-chardev", chardev,
        "-device", "virtio-serial-device",
        "-device", "virtserialport,chardev=agent,name=org.polysandbox.agent",
    };
    size_t na = 0;
    while (argv[na])
        na++;
    if (cfg->name) {
        argv[na++] = "-name";
        argv[na++] = cfg->name;
    }
    if (cfg->qmp_fd >= 0) {
        argv[na++] = "-chardev";
        argv[na++] = qmp;
        argv[na++] = "-mon";
        argv[na++] = "chardev=qmp,mode=control";
    }
    if (cfg->mem_path) {
        argv[na++] = "-object";
        argv[na++] = backend;
    }
    /* The guest's root image, shared read-only by every VM of it. */
    char drive[4400];
    if (cfg->image) {
        if (strchr(cfg->image, ',') ||
            (size_t)snprintf(drive, sizeof drive, "file=%s,if=none,id=image,format=raw,"
                             "readonly=on", cfg->image) >= sizeof drive) {
            snprintf(err, errlen, "image path %s: too long or has a comma", cfg->image);
            return -1;
        }
        argv[na++] = "-drive";
        argv[na++] = drive;
        argv[na++] = "-device";
        argv[na++] = "virtio-blk-device,drive=image";
    }
    /* Egress: slirp's stack inside QEMU, its fixed addresses (the agent
     * configures them); no port forwarded in. */
    if (cfg->net) {
        argv[na++] = "-netdev";
        argv[na++] = "user,id=n0,ipv6=off";
        argv[na++] = "-device";
        argv[na++] = "virtio-net-device,netdev=n0";
    }
    if (cfg->incoming_fd >= 0) {
        argv[na++] = "-incoming";
        argv[na++] = incoming;
    }
    pid_t parent = getpid();
    /* PR_SET_PDEATHSIG fires when the forking *thread* ends: the main
     * thread's VMs, and those of a thread that lasts (cfg->tie,
     * mv-spawn.c), are tied to the process. */
    int tie = !cfg->detach && (cfg->tie || gettid() == parent);
    int pp[2] = { -1, -1 };

    /* A detached VMM is started through a middle process that exits at
     * once: it is nobody's child then, reaped by init, never a zombie of
     * a long-lived caller that did not destroy it. */
    if (cfg->detach && pipe2(pp, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    /* Jailed, the VMM's own process is cloned into its namespaces (by
     * the middle process when detached). */
    pid_t child = cfg->detach ? fork() : mv_qjail_fork(cfg->qjail);

    if (child < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        if (pp[0] >= 0) {
            close(pp[0]);
            close(pp[1]);
        }
        return -1;
    }
    if (child == 0 && cfg->detach) {
        pid_t vmm;
        if (setsid() < 0 || chdir("/") != 0 || (vmm = mv_qjail_fork(cfg->qjail)) < 0)
            _exit(127);
        if (vmm > 0) {
            _exit(write(pp[1], &vmm, sizeof vmm) == (ssize_t)sizeof vmm ? 0 : 127);
        }
    }
    if (child == 0) {
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        int log = open(cfg->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        char jerr[512];
        if (null < 0 || log < 0 || dup2(null, 0) < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0)
            _exit(127);
        /* The jail's reason, if any, is the VMM's last words (vmm.log). */
        if (cfg->qjail && mv_qjail_enter(cfg->qjail, jerr, sizeof jerr) != 0) {
            dprintf(2, "%s\n", jerr);
            _exit(126);
        }
        /* A VM never outlives the process that made it (ephemeral
         * sandboxes).  Set after the jail dropped its ids (that clears
         * it); in a pid namespace of its own getppid() is 0, so the
         * parent's end before this point goes unseen there. */
        if (tie && (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 ||
                    (!cfg->qjail && getppid() != parent)))
            _exit(127);
        /* Only what it is handed: not a caller's fd left inheritable. */
        if (close_range(3, ~0u, CLOSE_RANGE_CLOEXEC) != 0)
            _exit(127);
        int keep[] = { cfg->chan_fd, cfg->qmp_fd, cfg->incoming_fd, cfg->mem_fd };
        for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
            int fl = keep[i] >= 0 ? fcntl(keep[i], F_GETFD) : 0;
            if (fl < 0 || (keep[i] >= 0 && fcntl(keep[i], F_SETFD, fl & ~FD_CLOEXEC) < 0))
                _exit(127);
        }
        if (cfg->qjail)
            execv(mv_qjail_exe(cfg->qjail), (char *const *)argv);
        else
            execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    if (cfg->detach && (child = mv_vmm_detached(child, pp, err, errlen)) < 0)
        return -1;
    *pid = child;
    return 0;
}

pid_t mv_vmm_detached(pid_t middle, int pp[2], char *err, size_t errlen)
{
    pid_t vmm = 0;
    int st = 0;
    ssize_t n;

    close(pp[1]);
    while ((n = read(pp[0], &vmm, sizeof vmm)) < 0 && errno == EINTR)
        ;
    close(pp[0]);
    while (waitpid(middle, &st, 0) < 0 && errno == EINTR)
        ;
    if (n != (ssize_t)sizeof vmm || vmm <= 0) {
        snprintf(err, errlen, "starting it in a session of its own failed");
        return -1;
    }
    return vmm;
}

const struct mv_vmm mv_vmm_qemu = { "qemu", qemu_start, NULL, NULL };

void mv_vmm_stop(pid_t pid)
{
    if (pid <= 0)
        return;
    (void)kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}
