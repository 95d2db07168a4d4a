/* plugins/microvm/mv-fc.c - the Firecracker backend
 *
 * `vmm = firecracker`: the VMM is the firecracker program, started in
 * the VM's own directory with `--api-sock api.sock` and driven over that
 * unix socket by its REST API (libcurl, CURLOPT_UNIX_SOCKET_PATH):
 * PUT /machine-config, /boot-source, /drives/rootfs (only with a
 * `rootfs` setting), /vsock, then /actions InstanceStart; a snapshot is
 * PATCH /vm Paused, PUT /snapshot/create, PATCH /vm Resumed; a restore a
 * fresh firecracker given PUT /snapshot/load (resume_vm) alone.  Any
 * answer other than 204 is an error naming the request and Firecracker's
 * fault_message.
 *
 * The agent's channel is vsock: Firecracker maps guest port MV_VSOCK_PORT
 * to the unix socket `vsock.sock` in the VM's directory, where the host
 * writes "CONNECT <port>\n" and reads "OK <n>\n" before the stream is the
 * agent's.  The path is relative (Firecracker resolves it in its working
 * directory, the VM's), so every VM restored from one snapshot, which
 * records the path, binds its own.  Firecracker needs KVM: there is no TCG.
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mv-int.h"

#define FC_API "api.sock"
#define FC_VSOCK "vsock.sock"
/* The guest's vsock context id: any from 3 up; each VM has its own device. */
#define FC_CID 3
/* How long one API request may take; a snapshot writes the VM's memory;
 * firecracker binds its API socket at once, but a loaded host is slow. */
#define FC_API_MS 10000
#define FC_START_MS 60000
#define FC_SNAP_MS 120000
/* The longest answer body kept (fault messages are one line). */
#define FC_BODY_MAX 65536

struct fc_body {
    char buf[FC_BODY_MAX];
    size_t len;
};

static size_t fc_collect(char *data, size_t size, size_t n, void *ud)
{
    struct fc_body *b = ud;
    size_t len = size * n, room = sizeof b->buf - 1 - b->len;

    memcpy(b->buf + b->len, data, len < room ? len : room);
    b->len += len < room ? len : room;
    return len;
}

/* @text made printable into @out (a fault message is Firecracker's text). */
static void fc_printable(const char *text, char *out, size_t n)
{
    size_t j = 0;

    for (; *text && j + 1 < n; text++)
        out[j++] = (*text >= 0x20 && *text < 0x7f) ? *text : '?';
    out[j] = '\0';
}

/* Why an answer of @status with @body is a refusal: Firecracker's
 * {"fault_message": "..."}, else the body itself, else the status alone. */
static void fc_fault(long status, const struct fc_body *b, char *err, size_t errlen,
                     const char *method, const char *path)
{
    char text[512] = "";
    json_t *j = json_loadb(b->buf, b->len, 0, NULL);
    const char *msg = json_string_value(json_object_get(j, "fault_message"));

    if (msg)
        fc_printable(msg, text, sizeof text);
    else if (b->len)
        fc_printable(b->buf, text, sizeof text);
    json_decref(j);
    snprintf(err, errlen, "%s %s: HTTP %ld%s%s", method, path, status, text[0] ? ": " : "",
             text[0] ? text : " (no fault_message)");
}

/* One request to the API socket in @dir; @body a JSON object (or NULL).
 * 0 when answered 204, else -1 with @err naming the request. */
static int fc_call(const char *dir, const char *method, const char *path, json_t *body,
                   long timeout_ms, char *err, size_t errlen)
{
    char sock[4200], url[256], *text = NULL;
    struct fc_body b = { .len = 0 };
    struct curl_slist *hdr = NULL;
    long status = 0;
    CURLcode cc;
    int rc = -1;

    if (mv_jail_sock(dir, FC_API, sock, sizeof sock) ||
        strlen(sock) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
        snprintf(err, errlen, "%s %s: the API socket's path %s is too long for a unix socket",
                 method, path, sock);
        return -1;
    }
    snprintf(url, sizeof url, "http://localhost%s", path);
    CURL *c = curl_easy_init();
    if (!c || (body && !(text = json_dumps(body, JSON_COMPACT))) ||
        !(hdr = curl_slist_append(hdr, "Content-Type: application/json")) ||
        !(hdr = curl_slist_append(hdr, "Accept: application/json"))) {
        snprintf(err, errlen, "%s %s: out of memory", method, path);
        goto out;
    }
    curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, sock);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, text ? text : "");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, fc_collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if ((cc = curl_easy_perform(c)) != CURLE_OK) {
        snprintf(err, errlen, "%s %s: %s", method, path, curl_easy_strerror(cc));
        goto out;
    }
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (status != 204) {
        fc_fault(status, &b, err, errlen, method, path);
        goto out;
    }
    rc = 0;
out:
    curl_slist_free_all(hdr);
    free(text);
    if (c)
        curl_easy_cleanup(c);
    return rc;
}

/* fc_call taking its body's reference. */
static int fc_send(const char *dir, const char *method, const char *path, json_t *body,
                   long timeout_ms, char *err, size_t errlen)
{
    int rc;

    if (!body) {
        snprintf(err, errlen, "%s %s: out of memory", method, path);
        return -1;
    }
    rc = fc_call(dir, method, path, body, timeout_ms, err, errlen);
    json_decref(body);
    return rc;
}

static void fc_sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Whether firecracker @pid has ended (its status and the last line of its
 * log, in the VM's directory @dir, in @err).  Not reaped (WNOWAIT):
 * mv_vmm_stop reaps it, and its pid is not reused meanwhile. */
static int fc_gone(pid_t pid, const char *dir, char *err, size_t errlen)
{
    siginfo_t si = { .si_pid = 0 };
    char last[256];

    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid != pid)
        return 0;
    mv_last_words(dir, last, sizeof last);
    snprintf(err, errlen, "firecracker %s %d: %s",
             si.si_code == CLD_EXITED ? "exited with status" : "was killed by signal",
             si.si_status, last[0] ? last : "nothing in its log");
    return 1;
}

/* Waits until the API socket takes connections (firecracker binds it as
 * it starts): 0, or -1 with @err set. */
static int fc_wait_api(const char *dir, pid_t pid, char *err, size_t errlen)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int64_t deadline = mv_now_ms() + FC_START_MS;

    if (mv_jail_sock(dir, FC_API, sa.sun_path, sizeof sa.sun_path)) {
        snprintf(err, errlen, "the API socket's path %s/" FC_API " is too long", dir);
        return -1;
    }
    for (;;) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            snprintf(err, errlen, "socket: %s", strerror(errno));
            return -1;
        }
        int ok = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
        close(fd);
        if (ok)
            return 0;
        if (fc_gone(pid, dir, err, errlen))
            return -1;
        if (mv_now_ms() > deadline) {
            snprintf(err, errlen, "its API socket %s took no connection within %d s",
                     sa.sun_path, FC_START_MS / 1000);
            return -1;
        }
        fc_sleep_ms(10);
    }
}

/* The requests that boot a VM, in the order Firecracker's guide gives. */
static int fc_boot(const struct mv_vm_config *cfg, char *err, size_t errlen)
{
    char args[256];

    snprintf(args, sizeof args, "console=ttyS0 reboot=k panic=1 pci=off quiet sbx.disk=%llu"
             " sbx.vsock=%u", (unsigned long long)cfg->disk_bytes, MV_VSOCK_PORT);
    if (fc_send(cfg->dir, "PUT", "/machine-config",
                json_pack("{s:i, s:I}", "vcpu_count", 1, "mem_size_mib",
                          (json_int_t)cfg->memory_mib), FC_API_MS, err, errlen) ||
        fc_send(cfg->dir, "PUT", "/boot-source",
                json_pack("{s:s, s:s, s:s}", "kernel_image_path", cfg->kernel, "initrd_path",
                          cfg->initrd, "boot_args", args), FC_API_MS, err, errlen))
        return -1;
    if (cfg->rootfs &&
        fc_send(cfg->dir, "PUT", "/drives/rootfs",
                json_pack("{s:s, s:s, s:b, s:b}", "drive_id", "rootfs", "path_on_host",
                          cfg->rootfs, "is_root_device", 1, "is_read_only", 1),
                FC_API_MS, err, errlen))
        return -1;
    return fc_send(cfg->dir, "PUT", "/vsock",
                   json_pack("{s:i, s:s}", "guest_cid", FC_CID, "uds_path", FC_VSOCK),
                   FC_API_MS, err, errlen) ||
           fc_send(cfg->dir, "PUT", "/actions",
                   json_pack("{s:s}", "action_type", "InstanceStart"), FC_API_MS, err, errlen)
               ? -1 : 0;
}

/* A restore: a fresh firecracker given the snapshot and nothing else. */
static int fc_load(const struct mv_vm_config *cfg, char *err, size_t errlen)
{
    return fc_send(cfg->dir, "PUT", "/snapshot/load",
                   json_pack("{s:s, s:{s:s, s:s}, s:b}", "snapshot_path", cfg->snap_state,
                             "mem_backend", "backend_type", "File", "backend_path", cfg->snap_mem,
                             "resume_vm", 1), FC_SNAP_MS, err, errlen);
}

/* The firecracker process, in the VM's directory (its relative paths,
 * the sockets, are that directory's), its output to the log: the caller's
 * child tied to it, or (@cfg->detach) in a session of its own, started
 * through a middle process that exits, so nobody's child (as QEMU's).
 * Its pid, or -1 with @err set. */
static pid_t fc_spawn(const struct mv_vm_config *cfg, char *err, size_t errlen)
{
    pid_t parent = getpid(), vmm = 0;
    /* As QEMU's: PR_SET_PDEATHSIG follows the forking thread. */
    int tie = !cfg->detach && (cfg->tie || gettid() == parent), pp[2] = { -1, -1 };
    const char *direct[] = { cfg->binary, "--api-sock", FC_API, cfg->name ? "--id" : NULL,
                             cfg->name, NULL };
    const char *jailed[MV_JAIL_ARGC], *const *argv = direct;
    struct mv_jail *j = NULL;

    /* Through the jailer: its chroot made and its argv built before the
     * fork (nothing but async-signal-safe calls after it). */
    if (cfg->jailer) {
        if (!(j = malloc(sizeof *j))) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        if (mv_jail_prepare(cfg, j, err, errlen) != 0) {
            free(j);
            return -1;
        }
        mv_jail_argv(cfg, j, jailed);
        argv = jailed;
    }

    if (cfg->detach && pipe2(pp, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        free(j);
        return -1;
    }
    pid_t child = fork();
    if (child == 0) {
        if (cfg->detach && (setsid() < 0 || (vmm = fork()) < 0))
            _exit(127);
        if (vmm > 0)
            _exit(write(pp[1], &vmm, sizeof vmm) == (ssize_t)sizeof vmm ? 0 : 127);
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        int log = open(cfg->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if ((tie && (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)) ||
            null < 0 || log < 0 || dup2(null, 0) < 0 || dup2(log, 1) < 0 ||
            dup2(log, 2) < 0 || chdir(cfg->dir) != 0)
            _exit(127);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    free(j);
    if (child < 0)
        snprintf(err, errlen, "fork: %s", strerror(errno));
    if (!cfg->detach || child < 0) {
        if (pp[0] >= 0) {
            close(pp[0]);
            close(pp[1]);
        }
        return child;
    }
    return mv_vmm_detached(child, pp, err, errlen);
}

static int fc_start(const struct mv_vm_config *cfg, pid_t *pid, char *err, size_t errlen)
{
    char api[4200];

    if (!cfg->dir) {
        snprintf(err, errlen, "no directory for the VM");
        return -1;
    }
    snprintf(api, sizeof api, "%s/" FC_API, cfg->dir);
    (void)unlink(api); /* a stale one refuses firecracker's bind (a jail's: mv-jail.c) */
    pid_t child = fc_spawn(cfg, err, errlen);
    if (child < 0)
        return -1;
    /* Jailed, the guest's files are in the chroot, named relative to
     * firecracker's working directory, its root. */
    struct mv_vm_config in_jail = *cfg;
    if (cfg->jailer) {
        in_jail.kernel = MV_JAIL_KERNEL;
        in_jail.initrd = MV_JAIL_INITRD;
        in_jail.rootfs = cfg->rootfs ? MV_JAIL_ROOTFS : NULL;
    }
    if (fc_wait_api(cfg->dir, child, err, errlen) == 0 &&
        (cfg->snap_state ? fc_load(cfg, err, errlen) : fc_boot(&in_jail, err, errlen)) == 0) {
        *pid = child;
        return 0;
    }
    /* A detached one is no child of ours: killed, reaped by init. */
    if (cfg->detach)
        (void)kill(child, SIGKILL);
    else
        mv_vmm_stop(child);
    return -1;
}

/* Reads the vsock proxy's answer line: 1 "OK ...", 0 anything else (the
 * guest not listening yet: firecracker closes), -1 the deadline. */
static int fc_vsock_ack(int fd, int64_t deadline_ms)
{
    char line[64];
    size_t got = 0;

    while (got < sizeof line - 1) {
        int64_t left = deadline_ms - mv_now_ms();
        struct pollfd pf = { fd, POLLIN, 0 };
        if (left <= 0)
            return -1;
        int r = poll(&pf, 1, left > 1000 ? 1000 : (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return 0;
        if (r == 0)
            continue;
        /* One byte at a time: what follows the line is the agent's. */
        ssize_t n = read(fd, line + got, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return 0;
        if (line[got++] == '\n') {
            line[got] = '\0';
            return !strncmp(line, "OK ", 3);
        }
    }
    return 0;
}

static int fc_connect(const struct mv_vm_config *cfg, pid_t pid, int64_t deadline_ms, int *out,
                      char *err, size_t errlen)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    char hello[32];
    int hlen = snprintf(hello, sizeof hello, "CONNECT %u\n", MV_VSOCK_PORT);

    if (mv_jail_sock(cfg->dir, FC_VSOCK, sa.sun_path, sizeof sa.sun_path)) {
        snprintf(err, errlen, "the vsock socket's path %s/" FC_VSOCK " is too long", cfg->dir);
        return -1;
    }
    for (;;) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), ack = 0;
        if (fd < 0) {
            snprintf(err, errlen, "socket: %s", strerror(errno));
            return -1;
        }
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
            send(fd, hello, (size_t)hlen, MSG_NOSIGNAL) == hlen)
            ack = fc_vsock_ack(fd, deadline_ms);
        if (ack == 1) {
            *out = fd;
            return 0;
        }
        close(fd);
        if (fc_gone(pid, cfg->dir, err, errlen))
            return -1;
        if (ack < 0 || mv_now_ms() > deadline_ms) {
            snprintf(err, errlen, "no agent accepted vsock port %u (%s) in time", MV_VSOCK_PORT,
                     sa.sun_path);
            return -1;
        }
        fc_sleep_ms(20);
    }
}

static int fc_snapshot(const char *dir, const char *state, const char *mem, char *err,
                       size_t errlen)
{
    char err2[256] = "";

    if (fc_send(dir, "PATCH", "/vm", json_pack("{s:s}", "state", "Paused"), FC_API_MS, err,
                errlen))
        return -1;
    int rc = fc_send(dir, "PUT", "/snapshot/create",
                     json_pack("{s:s, s:s, s:s}", "snapshot_type", "Full", "snapshot_path", state,
                               "mem_file_path", mem), FC_SNAP_MS, err, errlen);
    /* Resumed even when the snapshot failed: the VM is still the caller's. */
    if (fc_send(dir, "PATCH", "/vm", json_pack("{s:s}", "state", "Resumed"), FC_API_MS,
                rc ? err2 : err, rc ? sizeof err2 : errlen))
        rc = -1;
    return rc;
}

const struct mv_vmm mv_vmm_firecracker = { "firecracker", fc_start, fc_connect, fc_snapshot };
