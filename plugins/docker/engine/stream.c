/* plugins/docker/engine/stream.c - the attach stream of an exec
 *
 * Docker multiplexes stdout and stderr of a non-tty exec into frames: one
 * byte stream type (1 stdout, 2 stderr; 0 and 3 are folded into them),
 * three zero bytes, a big-endian 32-bit length, the payload.  Frames do
 * not align with lines or writes.  The helper's report (init/init.c) is
 * the last thing on stderr, behind a mark holding a nonce the sandbox
 * never sees; stderr bytes that might be the start of that mark are held
 * back until the next bytes decide, so the report never reaches the user
 * and everything else does, in order.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"

void dk_demux_init(struct dk_demux *d, const char *nonce, dk_out_fn out, void *ud)
{
    memset(d, 0, sizeof *d);
    int n = snprintf(d->mark, sizeof d->mark, "\036SBX%s:", nonce);
    d->mark_len = n > 0 && (size_t)n < sizeof d->mark ? (size_t)n : 0;
    d->out = out;
    d->ud = ud;
}

static int emit(struct dk_demux *d, int stream, const void *buf, size_t len)
{
    return len ? d->out(d->ud, stream, buf, len) : 0;
}

/* The longest k < mark_len such that the last k bytes of w are the mark's
 * first k. */
static size_t partial_mark(const struct dk_demux *d, const unsigned char *w, size_t len)
{
    size_t k = len < d->mark_len - 1 ? len : d->mark_len - 1;
    for (; k > 0; k--)
        if (!memcmp(w + len - k, d->mark, k))
            return k;
    return 0;
}

static void hold(struct dk_demux *d, const void *buf, size_t len)
{
    size_t room = sizeof d->held - d->held_len;
    if (len > room)
        len = room; /* a report is short: more is not a report */
    memcpy(d->held + d->held_len, buf, len);
    d->held_len += len;
}

static int feed_stderr(struct dk_demux *d, const unsigned char *buf, size_t len)
{
    if (!d->mark_len)
        return emit(d, 2, buf, len);
    while (len) {
        if (d->in_report) {
            hold(d, buf, len);
            return 0;
        }
        unsigned char w[4096 + DK_MARK_MAX];
        size_t piece = len < 4096 ? len : 4096;
        size_t wl = d->held_len;
        memcpy(w, d->held, wl);
        memcpy(w + wl, buf, piece);
        wl += piece;
        buf += piece;
        len -= piece;
        d->held_len = 0;
        unsigned char *m = memmem(w, wl, d->mark, d->mark_len);
        if (m) {
            int rc = emit(d, 2, w, (size_t)(m - w));
            d->in_report = true;
            hold(d, m, wl - (size_t)(m - w));
            if (rc)
                return rc;
            continue;
        }
        size_t k = partial_mark(d, w, wl);
        int rc = emit(d, 2, w, wl - k);
        hold(d, w + wl - k, k);
        if (rc)
            return rc;
    }
    return 0;
}

int dk_demux_feed(struct dk_demux *d, const void *data, size_t len)
{
    const unsigned char *p = data;
    while (len) {
        if (d->bad)
            return -1;
        if (d->left == 0) {
            size_t take = 8 - d->hdr_got;
            if (take > len)
                take = len;
            memcpy(d->hdr + d->hdr_got, p, take);
            d->hdr_got += take;
            p += take;
            len -= take;
            if (d->hdr_got < 8)
                return 0;
            d->hdr_got = 0;
            if (d->hdr[0] > 3 || d->hdr[1] || d->hdr[2] || d->hdr[3]) {
                d->bad = true;
                return -1;
            }
            d->stream = d->hdr[0] == 2 || d->hdr[0] == 3 ? 2 : 1;
            d->left = (size_t)d->hdr[4] << 24 | (size_t)d->hdr[5] << 16 |
                      (size_t)d->hdr[6] << 8 | d->hdr[7];
            continue;
        }
        size_t take = d->left < len ? d->left : len;
        int rc = d->stream == 2 ? feed_stderr(d, p, take) : emit(d, 1, p, take);
        d->left -= take;
        p += take;
        len -= take;
        if (rc)
            return rc;
    }
    return 0;
}

bool dk_report_parse(const char *s, struct dk_report *rep)
{
    memset(rep, 0, sizeof *rep);
    size_t n = strcspn(s, "= ");
    if (n == 0 || n >= sizeof rep->status)
        return false;
    memcpy(rep->status, s, n);
    s += n;
    if (*s == '=') {
        char *end;
        long v = strtol(s + 1, &end, 10);
        if (end == s + 1 || v < 0 || v > 65535)
            return false;
        rep->value = (int)v;
        s = end;
    }
    long long cpu, rss;
    int used = 0;
    /* The report is one line.  Podman may add words of its own to stderr
     * after the exec ended ("Error: read unixpacket ...: connection reset
     * by peer" when the command left stdin unread): not the sandbox's (it
     * cannot know the nonce, and nothing of it runs after the report), so
     * they are dropped. */
    if (sscanf(s, " cpu=%lld rss=%lld%n", &cpu, &rss, &used) != 2)
        return false;
    if (!strncmp(s + used, " pids=1", 7)) {
        rep->pids_hit = true;
        used += 7;
    }
    if (s[used] != '\0' && s[used] != '\n')
        return false;
    rep->cpu_ns = cpu;
    rep->rss = rss;
    return true;
}

bool dk_demux_finish(struct dk_demux *d, struct dk_report *rep)
{
    memset(rep, 0, sizeof *rep);
    if (d->in_report && d->held_len > d->mark_len && d->held_len < sizeof d->held) {
        char text[sizeof d->held + 1];
        size_t tl = d->held_len - d->mark_len;
        memcpy(text, d->held + d->mark_len, tl);
        text[tl] = '\0';
        if (strlen(text) == tl && dk_report_parse(text, rep)) {
            d->held_len = 0;
            return true;
        }
    }
    emit(d, 2, d->held, d->held_len);
    d->held_len = 0;
    return false;
}
