/* plugins/microvm/mv-files.c - files in and out of a running VM
 *
 * An upload is one FILE frame, answered DONE or ERROR; a download one GET
 * frame, answered FILEDATA (the whole file, never more than the GET's
 * max) or ERROR.  The agent confines both to its work directory and
 * follows no link on the way (it opens each component with O_NOFOLLOW);
 * the path is checked here too, so a bad one is refused before the VM
 * sees it.  What the guest answers is hostile: a FILEDATA longer than
 * asked, or any other frame out of place, gives the VM up.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mv-int.h"

/* How long the host waits for the agent's answer to a FILE or a GET: a
 * few MiB through a slow guest under TCG. */
#define MV_FILE_WAIT_MS 120000

static int path_check(struct mv_prov *p, const char *op, const char *path)
{
    if (mv_path_ok(path))
        return SBX_OK;
    return p->host->set_error(p->h, SBX_E_PATH,
                              "microvm: %s '%.200s': a path must be relative to the work "
                              "directory, 1 to %d bytes, with no '.', '..' or empty part", op,
                              path, MV_PATH_MAX);
}

/* The agent's answer to one request: @want (DONE or FILEDATA) with its
 * payload in *pl, or the ERROR's error set.  Anything else breaks the VM. */
static int answer(struct mv_prov *p, struct mv_sandbox *s, const char *what, uint8_t want,
                  struct mv_hdr *hd, uint8_t **pl)
{
    int rc = mv_chan_recv(p, s->chan, mv_now_ms() + MV_FILE_WAIT_MS, hd, pl);

    if (rc)
        return rc;
    if (hd->type == want) {
        s->broken = 0;
        return SBX_OK;
    }
    if (hd->type == MV_T_ERROR) {
        s->broken = 0;
        rc = mv_chan_error(p, what, *pl, hd->len);
    } else {
        rc = p->host->set_error(p->h, SBX_E_BACKEND,
                                "microvm: %s: the guest agent sent a frame out of place", what);
    }
    free(*pl);
    *pl = NULL;
    return rc;
}

int mv_put_file(struct mv_prov *p, struct mv_sandbox *s, const char *path, const void *data,
                size_t len, uint32_t mode)
{
    size_t plen = strlen(path) + 1;
    char what[300];
    struct mv_hdr hd;
    uint8_t *head, *pl = NULL;
    int rc;

    snprintf(what, sizeof what, "upload '%.200s'", path);
    if ((rc = path_check(p, "upload", path)))
        return rc;
    if (len > MV_MAX_PAYLOAD - 4 - plen)
        return p->host->set_error(p->h, SBX_E_LIMIT,
                                  "microvm: %s: %zu bytes, over the %zu a frame to the guest "
                                  "agent carries", what, len, (size_t)MV_MAX_PAYLOAD - 4 - plen);
    if (!(head = malloc(4 + plen)))
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    mv_put32(head, mode & 07777);
    memcpy(head + 4, path, plen);
    s->broken = 1; /* until the answer comes back in step */
    rc = mv_chan_send(p, s->chan, MV_T_FILE, head, 4 + plen, data, len);
    free(head);
    if (rc == SBX_OK && (rc = answer(p, s, what, MV_T_DONE, &hd, &pl)) == SBX_OK)
        free(pl);
    return rc;
}

static int usable(struct mv_prov *p, struct mv_sandbox *s)
{
    if (s->broken)
        return p->host->set_error(p->h, SBX_E_BACKEND,
                                  "microvm: this VM's agent broke off an earlier request");
    return SBX_OK;
}

int mv_upload(void *prov, void *sb, const char *path, const void *data, size_t len,
              uint32_t mode)
{
    struct mv_prov *p = prov;
    int rc = usable(p, sb);

    return rc ? rc : mv_put_file(p, sb, path, data, len, mode);
}

int mv_download(void *prov, void *sb, const char *path, size_t max, void **data, size_t *len)
{
    struct mv_prov *p = prov;
    struct mv_sandbox *s = sb;
    size_t plen = strlen(path) + 1;
    uint64_t cap = max < MV_MAX_PAYLOAD ? max : MV_MAX_PAYLOAD;
    char what[300];
    uint8_t head[MV_GET_HEAD_LEN], *pl = NULL;
    struct mv_hdr hd;
    int rc;

    *data = NULL;
    *len = 0;
    snprintf(what, sizeof what, "download '%.200s'", path);
    if ((rc = usable(p, s)) || (rc = path_check(p, "download", path)))
        return rc;
    mv_put64(head, cap);
    s->broken = 1;
    if ((rc = mv_chan_send(p, s->chan, MV_T_GET, head, sizeof head, path, plen)) ||
        (rc = answer(p, s, what, MV_T_FILEDATA, &hd, &pl))) {
        if (rc == SBX_E_LIMIT && cap < max)
            return p->host->set_error(p->h, SBX_E_LIMIT,
                                      "microvm: %s: larger than the %llu bytes a frame from the "
                                      "guest agent carries", what, (unsigned long long)cap);
        return rc;
    }
    if (hd.len > cap) {
        s->broken = 1;
        free(pl);
        return p->host->set_error(p->h, SBX_E_BACKEND,
                                  "microvm: %s: the guest agent sent %u bytes, more than the %llu "
                                  "asked for", what, hd.len, (unsigned long long)cap);
    }
    if (!(*data = p->host->alloc(hd.len ? hd.len : 1))) {
        free(pl);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    memcpy(*data, pl, hd.len);
    *len = hd.len;
    free(pl);
    return SBX_OK;
}
