/* plugins/local/wire/exec-req.c - one exec request, encoded and decoded
 *
 * See exec-req.h for the layout.  The decoder checks every length
 * against what is left, every string's NUL within the buffer, every
 * count against the bytes that could hold it and every reserved field;
 * what it accepts encodes back to the same bytes (tests/fuzz/fuzz-xreq.c).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exec-req.h"
#include "fdpass.h"

struct hdr {
    uint32_t magic, version;
    uint32_t len; /* the whole request, this header included */
    uint32_t parts;
    uint32_t nfds; /* descriptors that come with it */
    uint32_t n_argv, n_env, n_path;
    sbx_limits_v1 limits;
};

/* A daemon of version 2 reads a request's bytes 676-679 as the length
 * of its strings before it looks at the version: here they are CPU bits
 * 928-959 of the client's affinity, 0 on any smaller machine, so it
 * reads no further, answers MISMATCH and retires. */
_Static_assert(sizeof(struct hdr) + offsetof(struct lcl_xr_inherit, cpus) <= 676 &&
                   sizeof(struct hdr) + sizeof(struct lcl_xr_inherit) >= 680,
               "a version 2 daemon must read CPU bits as its blob's length");

static size_t list_len(char *const *v, uint32_t *n)
{
    size_t len = 0;
    *n = 0;
    for (; v && *v; v++, (*n)++)
        len += strlen(*v) + 1;
    return len;
}

static int expected_fds(uint32_t parts, const struct lcl_xr_init *in)
{
    if (!(parts & LCL_XR_INIT))
        return LCL_XR_NFD;
    return LCL_XR_NFD + 1 + __builtin_popcount(in->tasks_mask) + __builtin_popcount(in->leave_mask);
}

static char *put(char *w, const void *d, size_t n)
{
    memcpy(w, d, n);
    return w + n;
}

static char *put_list(char *w, char *const *v)
{
    for (; v && *v; v++)
        w = put(w, *v, strlen(*v) + 1);
    return w;
}

int lcl_xr_encode(const struct lcl_xreq *r, char **buf, size_t *len, int fds[LCL_XR_MAX_FDS],
                  int *nfds)
{
    struct hdr h;
    memset(&h, 0, sizeof h);
    h.magic = LCL_XR_MAGIC;
    h.version = LCL_XR_VERSION;
    h.parts = r->parts & (LCL_XR_INHERIT | LCL_XR_INIT);
    h.limits = r->limits;
    size_t n = sizeof h + list_len(r->argv, &h.n_argv) + list_len(r->envp, &h.n_env) +
               list_len(r->path, &h.n_path) + strlen(r->cwd) + 1;
    if (h.parts & LCL_XR_INHERIT)
        n += sizeof r->inh + (r->rootfs ? strlen(r->rootfs) : 0) + 1;
    if (h.parts & LCL_XR_INIT) {
        if (r->init.bpf_len > LCL_XR_BPF_MAX || strlen(r->tmp_opts) >= LCL_XR_TMP_OPTS_MAX ||
            (r->init.tasks_mask >> LCL_XR_CG_MAX) ||
            (r->init.leave_mask && r->init.leave_mask != r->init.tasks_mask))
            return -E2BIG;
        n += sizeof r->init + strlen(r->tmp_opts) + 1 + (size_t)r->init.bpf_len * 8;
    }
    if (n > LCL_XR_MAX)
        return -E2BIG;
    h.len = (uint32_t)n;
    int k = 0;
    for (int i = 0; i < LCL_XR_NFD; i++)
        fds[k++] = r->fd[i];
    if (h.parts & LCL_XR_INIT) {
        fds[k++] = r->fd_sync;
        for (int i = 0; i < LCL_XR_CG_MAX; i++)
            if (r->init.tasks_mask & (1u << i))
                fds[k++] = r->fd_tasks[i];
        for (int i = 0; i < LCL_XR_CG_MAX; i++)
            if (r->init.leave_mask & (1u << i))
                fds[k++] = r->fd_leave[i];
    }
    h.nfds = (uint32_t)k;
    char *b = malloc(n), *w = b;
    if (!b)
        return -ENOMEM;
    w = put(w, &h, sizeof h);
    if (h.parts & LCL_XR_INHERIT)
        w = put(w, &r->inh, sizeof r->inh);
    if (h.parts & LCL_XR_INIT)
        w = put(w, &r->init, sizeof r->init);
    w = put_list(w, r->argv);
    w = put_list(w, r->envp);
    w = put_list(w, r->path);
    w = put(w, r->cwd, strlen(r->cwd) + 1);
    if (h.parts & LCL_XR_INHERIT) {
        const char *img = r->rootfs ? r->rootfs : "";
        w = put(w, img, strlen(img) + 1);
    }
    if (h.parts & LCL_XR_INIT) {
        w = put(w, r->tmp_opts, strlen(r->tmp_opts) + 1);
        if (r->init.bpf_len)
            w = put(w, r->bpf, (size_t)r->init.bpf_len * 8);
    }
    *buf = b;
    *len = (size_t)(w - b);
    *nfds = k;
    return 0;
}

const char *lcl_xr_next_str(const char **pos, const char *end)
{
    const char *s = *pos;
    const char *nul = s < end ? memchr(s, '\0', (size_t)(end - s)) : NULL;
    if (!nul)
        return NULL;
    *pos = nul + 1;
    return s;
}

/* @n strings from *@pos into @v (NULL-terminated there); false if short. */
static bool take(const char **pos, const char *end, uint32_t n, char **v)
{
    for (uint32_t i = 0; i < n; i++)
        if (!(v[i] = (char *)lcl_xr_next_str(pos, end)))
            return false;
    v[n] = NULL;
    return true;
}

static int bad(const char **why, const char *what)
{
    *why = what;
    return -EPROTO;
}

static int check_hdr(const struct hdr *h, const char **why)
{
    if (h->magic != LCL_XR_MAGIC)
        return bad(why, "not an exec request (magic)");
    if (h->version != LCL_XR_VERSION) {
        *why = "an exec request of another version";
        return -EPROTONOSUPPORT;
    }
    if (h->len < sizeof *h || h->len > LCL_XR_MAX)
        return bad(why, "its length is out of range");
    if (h->parts & ~(uint32_t)(LCL_XR_INHERIT | LCL_XR_INIT))
        return bad(why, "unknown parts");
    if (h->nfds > LCL_XR_MAX_FDS)
        return bad(why, "too many descriptors");
    return 0;
}

void lcl_xr_free(struct lcl_xreq *r)
{
    free(r->strv_);
    r->strv_ = NULL;
}

int lcl_xr_decode(const void *buf, size_t len, const int *fds, int nfds, struct lcl_xreq *r,
                  const char **why)
{
    const char *b = buf, *pos = b, *end = b + len;
    struct hdr h;
    memset(r, 0, sizeof *r);
    r->fd_sync = -1;
    for (int i = 0; i < LCL_XR_CG_MAX; i++)
        r->fd_tasks[i] = r->fd_leave[i] = -1;
    if (len < sizeof h)
        return bad(why, "shorter than its header");
    memcpy(&h, pos, sizeof h);
    pos += sizeof h;
    int e = check_hdr(&h, why);
    if (e)
        return e;
    if (h.len != len)
        return bad(why, "its length is not the bytes received");
    r->parts = h.parts;
    r->limits = h.limits;
    if (h.parts & LCL_XR_INHERIT) {
        if ((size_t)(end - pos) < sizeof r->inh)
            return bad(why, "short of its daemon's part");
        memcpy(&r->inh, pos, sizeof r->inh);
        pos += sizeof r->inh;
        if (!memchr(r->inh.key, '\0', sizeof r->inh.key) ||
            !memchr(r->inh.id, '\0', sizeof r->inh.id) || r->inh.pad || r->inh.umask > 0777)
            return bad(why, "a bad key, id, umask or reserved field");
    }
    if (h.parts & LCL_XR_INIT) {
        if ((size_t)(end - pos) < sizeof r->init)
            return bad(why, "short of its init's part");
        memcpy(&r->init, pos, sizeof r->init);
        pos += sizeof r->init;
        const struct lcl_xr_init *in = &r->init;
        if ((in->flags & ~(uint32_t)(LCL_XR_F_DROP_GROUPS | LCL_XR_F_NET_NONE)) || in->pad ||
            (in->tasks_mask >> LCL_XR_CG_MAX) ||
            (in->leave_mask && in->leave_mask != in->tasks_mask) || in->bpf_len > LCL_XR_BPF_MAX)
            return bad(why, "bad flags, masks, filter length or reserved field");
    }
    if (nfds < 0 || h.nfds != (uint32_t)nfds || nfds != expected_fds(h.parts, &r->init))
        return bad(why, "not the descriptors it needs");
    for (int i = 0; i < nfds; i++)
        if (fds[i] < 0)
            return bad(why, "a descriptor is missing");
    /* Each string takes a byte at least: no count can ask for more. */
    uint64_t strs = (uint64_t)h.n_argv + h.n_env + h.n_path;
    if (!h.n_argv || strs > (uint64_t)(end - pos))
        return bad(why, "string counts beyond its length");
    if (!(r->strv_ = calloc((size_t)strs + 3, sizeof *r->strv_)))
        return -ENOMEM;
    r->argv = r->strv_;
    r->envp = r->argv + h.n_argv + 1;
    r->path = r->envp + h.n_env + 1;
    if (!take(&pos, end, h.n_argv, r->argv) || !take(&pos, end, h.n_env, r->envp) ||
        !take(&pos, end, h.n_path, r->path) || !(r->cwd = lcl_xr_next_str(&pos, end)))
        return bad(why, "its strings overrun it");
    if (r->cwd[0] != '/')
        return bad(why, "a relative working directory");
    if (h.parts & LCL_XR_INHERIT) {
        if (!(r->rootfs = lcl_xr_next_str(&pos, end)) || (r->rootfs[0] && r->rootfs[0] != '/'))
            return bad(why, "a bad image root");
        if (!r->rootfs[0])
            r->rootfs = NULL;
    }
    if (h.parts & LCL_XR_INIT) {
        if (!(r->tmp_opts = lcl_xr_next_str(&pos, end)) ||
            strlen(r->tmp_opts) >= LCL_XR_TMP_OPTS_MAX)
            return bad(why, "bad /tmp options");
        if ((size_t)(end - pos) != (size_t)r->init.bpf_len * 8)
            return bad(why, "its filter is not the rest of it");
        r->bpf = pos;
        pos += (size_t)r->init.bpf_len * 8;
    }
    if (pos != end)
        return bad(why, "bytes after its last part");
    int k = 0;
    for (int i = 0; i < LCL_XR_NFD; i++)
        r->fd[i] = fds[k++];
    if (h.parts & LCL_XR_INIT) {
        r->fd_sync = fds[k++];
        for (int i = 0; i < LCL_XR_CG_MAX; i++)
            if (r->init.tasks_mask & (1u << i))
                r->fd_tasks[i] = fds[k++];
        for (int i = 0; i < LCL_XR_CG_MAX; i++)
            if (r->init.leave_mask & (1u << i))
                r->fd_leave[i] = fds[k++];
    }
    return 0;
}

int lcl_xr_recv(int sock, char **buf, size_t *len, int fds[LCL_XR_MAX_FDS], int *nfds)
{
    struct hdr h;
    const char *why = NULL;
    *buf = NULL;
    *nfds = 0;
    int e = lcl_fds_recv(sock, &h, sizeof h, fds, LCL_XR_MAX_FDS);
    for (int i = 0; i < LCL_XR_MAX_FDS && fds[i] >= 0; i++)
        (*nfds)++;
    if (e)
        return e;
    if ((e = check_hdr(&h, &why)))
        return e;
    if (!(*buf = malloc(h.len)))
        return -ENOMEM;
    memcpy(*buf, &h, sizeof h);
    *len = h.len;
    return lcl_fds_recv(sock, *buf + sizeof h, h.len - sizeof h, NULL, 0);
}
