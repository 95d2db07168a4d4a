/* plugins/microvm/mv-accel.c - accel = auto: KVM where a guest really boots
 *
 * /dev/kvm opening is not enough: on a host that is itself a VM, nested
 * KVM can create a VM whose Linux boot then hangs.  So the first create
 * of a kernel on a host boots it under KVM within kvm_probe_timeout; a
 * guest agent that answers proves KVM, one that does not sends this and
 * every later create to TCG.  The verdict is kept in the state directory
 * (file accel), keyed by the kernel (path, size, time) and the host's
 * kernel release, so the probe runs once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "mv-int.h"

static int cache_path(struct mv_prov *p, char *path, size_t n)
{
    const char *dir = p->host->state_dir(p->h);

    if (!dir || (mkdir(dir, 0700) != 0 && errno != EEXIST))
        return -1;
    return (size_t)snprintf(path, n, "%s/accel", dir) < n ? 0 : -1;
}

static void cache_key(struct mv_prov *p, char *key, size_t n)
{
    struct stat st;
    struct utsname u;

    if (stat(p->kernel, &st) != 0)
        memset(&st, 0, sizeof st);
    if (uname(&u) != 0)
        strcpy(u.release, "?");
    snprintf(key, n, "%s:%lld:%lld:%s", p->kernel, (long long)st.st_size,
             (long long)st.st_mtime, u.release);
}

const char *mv_accel_choose(struct mv_prov *p, char *why, size_t whylen)
{
    char path[4096], key[4400], line[4500];
    FILE *f;
    int fd;

    if (strcmp(p->accel, "auto")) {
        snprintf(why, whylen, "accel = %s is configured", p->accel);
        return p->accel;
    }
    fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, whylen, "/dev/kvm: %s", strerror(errno));
        return "tcg";
    }
    close(fd);
    cache_key(p, key, sizeof key);
    if (cache_path(p, path, sizeof path) == 0 && (f = fopen(path, "re"))) {
        const char *verdict = NULL;
        size_t k = strlen(key);
        if (fgets(line, sizeof line, f) && !strncmp(line, key, k) && line[k] == ' ') {
            if (!strcmp(line + k + 1, "kvm\n"))
                verdict = "kvm";
            else if (!strcmp(line + k + 1, "tcg\n"))
                verdict = "tcg";
        }
        fclose(f);
        if (verdict) {
            snprintf(why, whylen, "%s: a boot under KVM %s", path,
                     verdict[0] == 'k' ? "reached the agent" : "hung (nested KVM?)");
            return verdict;
        }
    }
    snprintf(why, whylen, "no probe yet for this kernel and host");
    return "probe";
}

void mv_accel_record(struct mv_prov *p, int kvm_boots)
{
    char path[4096], tmp[4200], key[4400];
    FILE *f;

    if (cache_path(p, path, sizeof path) != 0)
        return;
    cache_key(p, key, sizeof key);
    /* The thread's id: pools' threads may probe at once. */
    snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)gettid());
    if (!(f = fopen(tmp, "we")))
        return;
    fprintf(f, "%s %s\n", key, kvm_boots ? "kvm" : "tcg");
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        (void)unlink(tmp);
        p->host->log(p->h, SBX_LOG_WARNING, "microvm: could not keep the KVM probe's verdict in %s",
                     path);
    }
}
