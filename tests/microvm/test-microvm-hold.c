/* tests/microvm/test-microvm-hold.c - the holder of a snapshot's sealed
 * copies (plugins/microvm/mv-hold.c) without a VM: a holder started on two
 * files' sealed copies hands the right one, refuses another file's, ends
 * after its idle time (shortened) and when a file is replaced, and gc's
 * stop kills it; fake holders on the socket (an unsealed memfd, a plain
 * file, the wrong size, two fds, another version, a short answer) are
 * all refused, no fd of theirs left open.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "mv-int.h"
#include "tap.h"

#define SEALS (F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL)

static char dir[PATH_MAX];

static void put(const char *leaf, const char *text)
{
    char path[PATH_MAX + 16];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, leaf);
    if (!(f = fopen(path, "w")) || fputs(text, f) < 0 || fclose(f) != 0) {
        perror(path);
        exit(99);
    }
}

static void id_of(const char *leaf, struct mv_hold_id *id)
{
    char path[PATH_MAX + 16];
    struct stat st;

    snprintf(path, sizeof path, "%s/%s", dir, leaf);
    if (stat(path, &st) != 0) {
        perror(path);
        exit(99);
    }
    mv_hold_id_of(&st, id);
}

/* A memfd named @name holding @text, with @seals added. */
static int memfd(const char *name, const char *text, size_t size, int seals)
{
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

    if (fd < 0 || ftruncate(fd, (off_t)size) != 0 ||
        pwrite(fd, text, strlen(text), 0) != (ssize_t)strlen(text) ||
        (seals && fcntl(fd, F_ADD_SEALS, seals) != 0)) {
        perror("memfd");
        exit(99);
    }
    return fd;
}

static int n_fds(void)
{
    char path[64];
    int n = 0;

    for (int i = 0; i < 1024; i++) {
        snprintf(path, sizeof path, "/proc/self/fd/%d", i);
        n += access(path, F_OK) == 0;
    }
    return n;
}

/* Whether @pid has ended (or is a zombie not ours to reap) within 60 s. */
static int ends(pid_t pid)
{
    for (int i = 0; i < 600; i++) {
        char path[64], st[256];
        FILE *f;
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        if (!(f = fopen(path, "r")))
            return 1;
        char *ok = fgets(st, sizeof st, f);
        fclose(f);
        char *rp = ok ? strrchr(st, ')') : NULL;
        if (rp && rp[1] == ' ' && rp[2] == 'Z')
            return 1;
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* ---- fake holders: the wire as mv-hold.c speaks it ---------------------- */

struct wire_req {
    uint32_t magic;
    uint16_t version, which;
    struct mv_hold_id id;
};
struct wire_rep {
    uint32_t magic;
    uint16_t version, status;
    uint32_t which, pid;
    struct mv_hold_id id;
};

enum fake { UNSEALED, PLAIN, WRONG_SIZE, TWO_FDS, OTHER_VERSION, SHORT, N_FAKES };
static const char *const fake_names[] = {
    "an unsealed memfd", "a plain file",           "a sealed memfd of the wrong size",
    "two fds",           "an answer of version 2", "a short answer",
};
static int listener = -1;

static void *fake_holder(void *arg)
{
    (void)arg;
    for (int k = 0; k < N_FAKES; k++) {
        struct wire_req q;
        int c = accept(listener, NULL, NULL);
        if (c < 0 || recv(c, &q, sizeof q, MSG_WAITALL) != (ssize_t)sizeof q)
            return NULL;
        struct wire_rep r = {q.magic, q.version, 0, q.which, (uint32_t)getpid(), q.id};
        char path[PATH_MAX + 16];
        int fds[2] = {-1, -1}, n = 1;
        snprintf(path, sizeof path, "%s/vm.ram", dir);
        switch ((enum fake)k) {
        case UNSEALED: fds[0] = memfd("polysandbox-vm-ram", "ram", q.id.size, 0); break;
        case PLAIN: fds[0] = open(path, O_RDONLY | O_CLOEXEC); break;
        case WRONG_SIZE: fds[0] = memfd("polysandbox-vm-ram", "ram", q.id.size + 1, SEALS); break;
        case TWO_FDS:
            fds[0] = memfd("polysandbox-vm-ram", "ram", q.id.size, SEALS);
            fds[1] = memfd("polysandbox-vm-ram", "ram", q.id.size, SEALS);
            n = 2;
            break;
        case OTHER_VERSION:
            r.version = 2;
            fds[0] = memfd("polysandbox-vm-ram", "ram", q.id.size, SEALS);
            break;
        default: break;
        }
        union {
            char b[CMSG_SPACE(2 * sizeof(int))];
            struct cmsghdr align;
        } ctl;
        struct iovec iov = {&r, k == SHORT ? sizeof r - 8 : sizeof r};
        struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
        if (fds[0] >= 0) {
            memset(&ctl, 0, sizeof ctl);
            m.msg_control = ctl.b;
            m.msg_controllen = CMSG_SPACE(n * sizeof(int));
            struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
            cm->cmsg_level = SOL_SOCKET;
            cm->cmsg_type = SCM_RIGHTS;
            cm->cmsg_len = CMSG_LEN(n * sizeof(int));
            memcpy(CMSG_DATA(cm), fds, n * sizeof(int));
        }
        (void)sendmsg(c, &m, MSG_NOSIGNAL);
        for (int i = 0; i < 2; i++)
            if (fds[i] >= 0)
                close(fds[i]);
        close(c);
    }
    return NULL;
}

static void fakes(const struct mv_hold_id *ram_id)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    pthread_t t;
    char why[160];
    pid_t pid = 0;

    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/" MV_HOLD_SOCK, dir);
    if (strlen(path) >= sizeof a.sun_path) {
        fprintf(stderr, "%s: too long\n", path);
        exit(99);
    }
    memcpy(a.sun_path, path, strlen(path) + 1);
    unlink(a.sun_path);
    if ((listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
        bind(listener, (struct sockaddr *)&a, sizeof a) != 0 || listen(listener, 8) != 0 ||
        pthread_create(&t, NULL, fake_holder, NULL) != 0) {
        perror("fake holder");
        exit(99);
    }
    int before = n_fds();
    for (int k = 0; k < N_FAKES; k++) {
        int fd = mv_hold_fetch(dir, 1, ram_id, &pid, why, sizeof why);
        ok(fd < 0 && why[0], "a holder handing %s is refused (%s)", fake_names[k], why);
        if (fd >= 0)
            close(fd);
    }
    pthread_join(t, NULL);
    ok(n_fds() == before, "no fd of the fakes' is left open (%d, %d before)", n_fds(), before);
    close(listener);
    unlink(a.sun_path);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    struct mv_hold_id ids[2], other;
    int fds[2];
    char why[160], buf[16] = "";
    pid_t pid, got = 0;

    snprintf(dir, sizeof dir, "%s/mvhold.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 99;
    }
    put(MV_SNAP_FILE, "stream");
    put(MV_SNAP_RAM, "ram");
    id_of(MV_SNAP_FILE, &ids[0]);
    id_of(MV_SNAP_RAM, &ids[1]);
    fds[0] = memfd("polysandbox-vm-snap", "stream", ids[0].size, SEALS);
    fds[1] = memfd("polysandbox-vm-ram", "ram", ids[1].size, SEALS);
    tap_plan(15);

    setenv("POLYSANDBOX_MICROVM_HOLD_IDLE", "3", 1);
    pid = mv_hold_start(dir, fds, ids);
    ok(pid > 0, "a holder starts (pid %d)", (int)pid);
    int fd = mv_hold_fetch(dir, 1, &ids[1], &got, why, sizeof why);
    ok(fd >= 0 && got == pid && pread(fd, buf, sizeof buf - 1, 0) == 3 && !strcmp(buf, "ram") &&
           fcntl(fd, F_GET_SEALS) == SEALS,
       "it hands the RAM's sealed copy (%s)", why);
    if (fd >= 0)
        close(fd);
    other = ids[0];
    other.ino++;
    fd = mv_hold_fetch(dir, 0, &other, &got, why, sizeof why);
    ok(fd < 0 && strstr(why, "another file"), "not for another file (%s)", why);
    ok(kill(pid, 0) == 0, "a request for another file leaves it serving its own");
    ok(ends(pid), "it ends after its idle time (3 s)");
    char sock[PATH_MAX + 16];
    snprintf(sock, sizeof sock, "%s/" MV_HOLD_SOCK, dir);
    ok(access(sock, F_OK) != 0 && errno == ENOENT, "and removes its socket");

    setenv("POLYSANDBOX_MICROVM_HOLD_IDLE", "600", 1);
    pid = mv_hold_start(dir, fds, ids);
    ok(pid > 0 && mv_hold_stop(dir) == 1 && ends(pid), "gc's stop kills a holder");

    pid = mv_hold_start(dir, fds, ids);
    put(MV_SNAP_RAM ".tmp", "new");
    char from[PATH_MAX + 16], to[PATH_MAX + 16];
    snprintf(from, sizeof from, "%s/" MV_SNAP_RAM ".tmp", dir);
    snprintf(to, sizeof to, "%s/" MV_SNAP_RAM, dir);
    ok(pid > 0 && rename(from, to) == 0 && ends(pid), "a holder ends when a file is replaced");
    id_of(MV_SNAP_RAM, &ids[1]);

    fakes(&ids[1]);

    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return 99;
    return tap_done();
}
