/* plugins/local/jail/etcscan.c - the /etc entries a sandbox shows
 *
 * Which /etc entries go into every sandbox root (ld.so cache, ssl
 * certificates, language runtimes' configuration, ...) is decided by
 * name patterns over a readdir of /etc.  On ext4 that readdir walks the
 * directory's hash tree (150-odd entries) and the patterns run over every
 * name: 0.1-0.2 ms of every process start, for a list that changes when
 * a package is installed.  So the list is kept in the state directory
 * (etc-scan.cache), keyed by /etc's device, inode, mtime and ctime (an
 * entry added, removed or renamed changes the mtime) and by the patterns,
 * and only read again while the key matches.  Every name read back is
 * checked against the patterns again, so the file can only ever name
 * entries a scan could have chosen.  A list is stored only when /etc was
 * last changed over two seconds before it was looked at: a change later
 * in the same (coarse) timestamp tick would otherwise go unseen.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../local-int.h"

/* /etc entries worth showing, as fnmatch patterns. */
static const char *const etc_patterns[] = {
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "ssl",
    "ca-certificates", "ca-certificates.conf", "localtime", "timezone",
    "nsswitch.conf", "host.conf", "gai.conf", "protocols", "services",
    "networks", "mime.types", "magic", "magic.mime", "os-release", "debian_version",
    "python3*", "perl", "java-*", "fpc*.cfg", "gnucobol", "mono", "php", "ruby*",
    "R", "julia", "gprolog", "ocaml*", "ghc*", "locale.alias",
};

#define CACHE_NAME "etc-scan.cache"
#define CACHE_MAGIC "polysandbox etc-scan 1"
#define CACHE_MAX 65536
/* Seconds /etc must have stood still before its list is stored. */
#define SETTLE_S 2

static bool wanted(const char *name)
{
    if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
        return false;
    for (size_t i = 0; i < sizeof etc_patterns / sizeof *etc_patterns; i++) {
        /* fnmatch only where needed (every pattern starts with a plain
         * character): 150-odd entries times 36 patterns of fnmatch were
         * 0.2 ms of every start. */
        const char *pat = etc_patterns[i];
        if (pat[0] != name[0])
            continue;
        if (strpbrk(pat, "*?[") ? fnmatch(pat, name, 0) == 0 : strcmp(pat, name) == 0)
            return true;
    }
    return false;
}

static uint64_t etc_key(const struct stat *st)
{
    uint64_t id[6] = {(uint64_t)st->st_dev, (uint64_t)st->st_ino,
                      (uint64_t)st->st_mtim.tv_sec, (uint64_t)st->st_mtim.tv_nsec,
                      (uint64_t)st->st_ctim.tv_sec, (uint64_t)st->st_ctim.tv_nsec};
    uint64_t h = lcl_fnv(LCL_FNV_BASIS, CACHE_MAGIC, sizeof CACHE_MAGIC);
    for (size_t i = 0; i < sizeof etc_patterns / sizeof *etc_patterns; i++)
        h = lcl_fnv(h, etc_patterns[i], strlen(etc_patterns[i]) + 1);
    return lcl_fnv(h, id, sizeof id);
}

void lcl_etc_list_free(struct lcl_etc_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->ents[i].name);
    free(l->ents);
    l->ents = NULL;
    l->n = 0;
}

static int list_add(struct lcl_etc_list *l, const char *name, size_t len, unsigned char type)
{
    struct lcl_etc_ent *n = realloc(l->ents, (l->n + 1) * sizeof *n);
    if (!n)
        return -ENOMEM;
    l->ents = n;
    if (!(n[l->n].name = strndup(name, len)))
        return -ENOMEM;
    n[l->n].type = type == DT_DIR || type == DT_REG || type == DT_LNK ? type : DT_UNKNOWN;
    l->n++;
    return 0;
}

/* 0: @l holds the stored list for @key; -1: none (or damaged): scan. */
static int cache_load(const char *path, uint64_t key, struct lcl_etc_list *l)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    struct stat st;
    char *buf = NULL;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        st.st_size <= 0 || st.st_size > CACHE_MAX || !(buf = malloc((size_t)st.st_size + 1)) ||
        pread(fd, buf, (size_t)st.st_size, 0) != (ssize_t)st.st_size) {
        free(buf);
        close(fd);
        return -1;
    }
    close(fd);
    size_t size = (size_t)st.st_size;
    buf[size] = '\0';
    char head[64];
    int hl = snprintf(head, sizeof head, CACHE_MAGIC " %016" PRIx64 "\n", key);
    int ret = -1;
    if (strncmp(buf, head, (size_t)hl))
        goto out;
    /* Lines "TYPE NAME", then "end". */
    for (char *s = buf + hl, *nl; *s; s = nl + 1) {
        if (!(nl = strchr(s, '\n')))
            goto out;
        *nl = '\0';
        if (!strcmp(s, "end")) {
            ret = nl + 1 == buf + size ? 0 : -1;
            goto out;
        }
        char *end;
        errno = 0;
        unsigned long type = strtoul(s, &end, 10);
        if (errno || end == s || *end != ' ' || type > 255 || !wanted(end + 1) ||
            list_add(l, end + 1, strlen(end + 1), (unsigned char)type))
            goto out;
    }
out:
    free(buf);
    if (ret)
        lcl_etc_list_free(l);
    return ret;
}

/* Atomically; a failure only costs the next process a scan. */
static void cache_store(struct lcl_prov *p, const char *path, uint64_t key,
                        const struct lcl_etc_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (strchr(l->ents[i].name, '\n'))
            return; /* not representable: scanned each time */
    char tmp[LCL_PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        return;
    }
    fprintf(f, CACHE_MAGIC " %016" PRIx64 "\n", key);
    for (size_t i = 0; i < l->n; i++)
        fprintf(f, "%u %s\n", (unsigned)l->ents[i].type, l->ents[i].name);
    fputs("end\n", f);
    bool ok = !ferror(f);
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) < 0) {
        unlink(tmp);
        p->host->log(p->h, SBX_LOG_DEBUG, "could not cache the /etc scan at %s", path);
    }
}

int lcl_etc_scan(struct lcl_prov *p, struct lcl_etc_list *l)
{
    l->ents = NULL;
    l->n = 0;
    struct stat st;
    if (stat("/etc", &st) < 0 || !S_ISDIR(st.st_mode))
        return 0; /* nothing of /etc to show */
    uint64_t key = etc_key(&st);
    char path[LCL_PATH_MAX];
    int pl = snprintf(path, sizeof path, "%s/" CACHE_NAME, p->state_dir);
    bool cache = pl > 0 && (size_t)pl < sizeof path;
    if (cache && cache_load(path, key, l) == 0)
        return 0;
    DIR *d = opendir("/etc");
    if (!d)
        return 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (wanted(de->d_name) && list_add(l, de->d_name, strlen(de->d_name), de->d_type)) {
            closedir(d);
            lcl_etc_list_free(l);
            return -ENOMEM;
        }
    closedir(d);
    struct timespec now;
    if (cache && clock_gettime(CLOCK_REALTIME, &now) == 0 &&
        now.tv_sec - st.st_mtim.tv_sec > SETTLE_S && now.tv_sec - st.st_ctim.tv_sec > SETTLE_S)
        cache_store(p, path, key, l);
    return 0;
}
