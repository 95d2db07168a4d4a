/* tests/fuzz/fuzz-execreq.c - the local provider's exec request, as
 * polysandbox-locald, its spares and a zygote read it
 * (plugins/local/wire/exec-req.c)
 *
 * The first byte is how many descriptors came with the request (made-up
 * numbers: the decoder only places them); the rest is the request.  A
 * refused one says why (or ran out of memory); another version is
 * refused as such only when the header's magic is right.  An accepted
 * one has a command, every string it hands out lies within the bytes
 * and ends there, its working directory and image root are absolute,
 * its descriptors are the ones given, in order, and it encodes back to
 * the same bytes and descriptors.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exec-req.h"
#include "fuzz.h"

static void within(const char *s, const uint8_t *b, size_t len, const char *what)
{
    const char *lo = (const char *)b, *hi = lo + len;
    if (!s || s < lo || s >= hi || !memchr(s, '\0', (size_t)(hi - s)))
        fz_fail("%s lies outside the request", what);
}

static void within_all(char **v, const uint8_t *b, size_t len, const char *what)
{
    for (; v && *v; v++)
        within(*v, b, len, what);
}

static int one(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int nfds = data[0] % (LCL_XR_MAX_FDS + 2), fds[LCL_XR_MAX_FDS + 1];
    for (int i = 0; i <= LCL_XR_MAX_FDS; i++)
        fds[i] = 100 + i;
    /* A copy of its own size, so that a read past it is caught. */
    size_t len = size - 1;
    uint8_t *b = fz_xmalloc(len ? len : 1);
    memcpy(b, data + 1, len);
    struct lcl_xreq r;
    const char *why = NULL;
    int e = lcl_xr_decode(b, len, fds, nfds, &r, &why);
    uint32_t magic = 0;
    if (len >= sizeof magic)
        memcpy(&magic, b, sizeof magic);
    if (e) {
        if (e != -EPROTO && e != -EPROTONOSUPPORT && e != -ENOMEM)
            fz_fail("refused with %d", e);
        if (e != -ENOMEM && (!why || !*why))
            fz_fail("a refused request without a reason");
        if (e == -EPROTONOSUPPORT && magic != LCL_XR_MAGIC)
            fz_fail("another version, said of bytes without the magic");
        lcl_xr_free(&r);
        free(b);
        return 0;
    }
    if (!r.argv || !r.argv[0] || !r.envp || !r.path)
        fz_fail("an accepted request without its lists");
    within_all(r.argv, b, len, "an argument");
    within_all(r.envp, b, len, "a variable");
    within_all(r.path, b, len, "a PATH directory");
    within(r.cwd, b, len, "the working directory");
    if (r.cwd[0] != '/')
        fz_fail("a relative working directory accepted");
    if (r.rootfs) {
        within(r.rootfs, b, len, "the image root");
        if (r.rootfs[0] != '/' || !(r.parts & LCL_XR_INHERIT))
            fz_fail("an image root accepted that is relative or without the daemon's part");
    }
    if (r.parts & LCL_XR_INHERIT) {
        if (!memchr(r.inh.key, '\0', sizeof r.inh.key) || !memchr(r.inh.id, '\0', sizeof r.inh.id))
            fz_fail("a key or id without its end accepted");
    }
    if (r.parts & LCL_XR_INIT) {
        within(r.tmp_opts, b, len, "the /tmp options");
        if (strlen(r.tmp_opts) >= LCL_XR_TMP_OPTS_MAX || r.init.bpf_len > LCL_XR_BPF_MAX ||
            (r.init.bpf_len && (const uint8_t *)r.bpf + (size_t)r.init.bpf_len * 8 != b + len))
            fz_fail("/tmp options or a filter out of bounds accepted");
    }
    char *back = NULL;
    size_t blen = 0;
    int bfds[LCL_XR_MAX_FDS], bn = 0;
    e = lcl_xr_encode(&r, &back, &blen, bfds, &bn);
    if (e == -ENOMEM) {
        lcl_xr_free(&r);
        free(b);
        return 0;
    }
    if (e)
        fz_fail("an accepted request does not encode (%d)", e);
    if (blen != len || memcmp(back, b, len))
        fz_fail("a request does not encode back to its bytes");
    if (bn != nfds || memcmp(bfds, fds, sizeof *fds * (size_t)nfds))
        fz_fail("a request does not encode back to its descriptors");
    free(back);
    lcl_xr_free(&r);
    free(b);
    return 0;
}

FZ_TARGET(execreq, NULL, one)
