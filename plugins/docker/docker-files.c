/* plugins/docker/docker-files.c - files in and out of a sandbox's work
 * directory through the archive API
 *
 * The daemon resolves symbolic links inside the container when it
 * resolves ?path=, so a link the sandbox made in the middle of a path would
 * be followed.  The same safety as the local provider comes from checking
 * each component first: HEAD .../archive?path=/work/a, then /work/a/b, ...
 * The stat the daemon answers (X-Docker-Container-Path-Stat) is that of
 * the last component itself (a link is reported as a link), and every
 * component before it was already proven a real directory.  Nothing runs
 * in the container between execs (the helper kills every process an exec
 * started), so the check and the transfer see the same tree.
 *
 * The work directory is a volume: the archive API reaches it, where it
 * would not reach a HostConfig tmpfs or a read-only root.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "docker-int.h"

#define PATH_MAX_LEN SBX_PATH_MAX

/* Go's os.FileMode bits in the path stat. */
#define GO_MODE_DIR (UINT64_C(1) << 31)
#define GO_MODE_SYMLINK (UINT64_C(1) << 27)
#define GO_MODE_TYPE (GO_MODE_DIR | GO_MODE_SYMLINK | (UINT64_C(1) << 26) | \
                      (UINT64_C(1) << 25) | (UINT64_C(1) << 24) | (UINT64_C(1) << 21) | \
                      (UINT64_C(1) << 19))

/* The rule every provider applies (host->path_check, ABI 1.10). */
int dk_path_check(struct dk_prov *p, const char *path)
{
    return p->eng.host->path_check(p->eng.h, path);
}

/* ---- HEAD .../archive: the daemon's stat of one path ---- */

/* 1 found (mode and size set), 0 missing, or minus an sbx_status. */
static int stat_path(struct dk_prov *p, const char *id, const char *abs, uint64_t *mode,
                     uint64_t *size)
{
    static const char *const keep[] = {"X-Docker-Container-Path-Stat", NULL};
    char err[PH_ERR_MAX];
    char *esc = ph_escape(abs);
    char path[PATH_MAX_LEN * 3 + 128];
    if (!esc)
        return -dk_err(&p->eng, SBX_E_NOMEM, "out of memory");
    snprintf(path, sizeof path, DK_API "/containers/%s/archive?path=%s", id, esc);
    free(esc);
    ph_request rq = {.method = "HEAD", .path = path, .timeout_ms = 30000, .keep_headers = keep};
    ph_response resp;
    int ret = ph_do(p->eng.http, &rq, &resp, err);
    long status = resp.status;
    const char *b64 = ph_response_header(&resp, keep[0]);
    bool have = b64 != NULL;
    size_t jlen = 0;
    /* Podman answers 404 for a dangling link, with the link's own stat:
     * it exists (and is refused as a link). */
    unsigned char *js = ret == SBX_OK && (status == 200 || status == 404) && have
                            ? pc_b64_decode(b64, &jlen) : NULL;
    ph_response_clear(&resp);
    if (ret != SBX_OK)
        return -dk_err(&p->eng, ret, "%s (%s)", err, p->eng.socket);
    if (status == 404 && !have)
        return 0;
    if ((status != 200 && status != 404) || !have) {
        free(js);
        return -dk_err(&p->eng, ph_status_code(status) ? ph_status_code(status) : SBX_E_BACKEND,
                       "stat of %s in %s: the daemon answered %ld", abs, id, status);
    }
    json_t *j = js ? json_loadb((const char *)js, jlen, 0, NULL) : NULL;
    free(js);
    json_t *m = j ? json_object_get(j, "mode") : NULL, *s = j ? json_object_get(j, "size") : NULL;
    if (!json_is_integer(m) || !json_is_integer(s)) {
        json_decref(j);
        return -dk_err(&p->eng, SBX_E_BACKEND, "stat of %s in %s: unreadable answer", abs, id);
    }
    *mode = (uint64_t)json_integer_value(m);
    *size = (uint64_t)json_integer_value(s);
    json_decref(j);
    return 1;
}

/* Walks @path component by component.  For each existing component:
 * links are refused, parents must be directories.  *missing_from is the
 * index of the first missing component (n when all exist); the last
 * component's mode and size are returned when it exists. */
static int walk(struct dk_prov *p, struct dk_sb *sb, const char *path, bool need_all,
                uint64_t *mode, uint64_t *size)
{
    char abs[PATH_MAX_LEN + 16];
    snprintf(abs, sizeof abs, DK_WORKDIR "/%s", path);
    size_t base = strlen(DK_WORKDIR) + 1;
    for (size_t i = base;; i++) {
        if (abs[i] != '/' && abs[i] != '\0')
            continue;
        bool last = abs[i] == '\0';
        abs[i] = '\0';
        uint64_t m = 0, s = 0;
        int r = stat_path(p, sb->id, abs, &m, &s);
        if (r < 0)
            return -r;
        if (r == 0) {
            if (need_all)
                return dk_err(&p->eng, SBX_E_NOT_FOUND, "file '%s': '%s' does not exist", path,
                              abs + base);
            return SBX_OK;
        }
        if (m & GO_MODE_SYMLINK)
            return dk_err(&p->eng, SBX_E_PATH, "file path '%s': '%s' is a link; refused", path,
                          abs + base);
        if (!last && !(m & GO_MODE_DIR))
            return dk_err(&p->eng, SBX_E_PATH, "file path '%s': '%s' is not a directory; refused",
                          path, abs + base);
        if (last) {
            if (m & GO_MODE_TYPE)
                return dk_err(&p->eng, SBX_E_PATH, "file '%s' is not a regular file; refused",
                              path);
            *mode = m;
            *size = s;
            return SBX_OK;
        }
        abs[i] = '/';
    }
}

int dk_upload(struct dk_prov *p, struct dk_sb *sb, const char *path, const void *data,
              size_t len, uint32_t mode)
{
    uint64_t m = 0, s = 0;
    int ret = dk_path_check(p, path);
    if (ret || (ret = walk(p, sb, path, false, &m, &s)))
        return ret;
    void *tar = NULL;
    size_t tar_len = 0;
    char err[PH_ERR_MAX];
    if ((ret = dk_tar_file(path, data, len, mode, &tar, &tar_len, err, sizeof err)))
        return dk_err(&p->eng, ret, "upload of '%s': %s", path, err);
    char url[256];
    snprintf(url, sizeof url, DK_API "/containers/%s/archive?path=" DK_WORKDIR, sb->id);
    ph_request rq = {.method = "PUT", .path = url, .body = tar, .body_len = tar_len,
                     .content_type = "application/x-tar", .timeout_ms = 120000};
    ph_response resp;
    ret = ph_do(p->eng.http, &rq, &resp, err);
    free(tar);
    if (ret) {
        ph_response_clear(&resp);
        return dk_err(&p->eng, ret, "upload of '%s': %s", path, err);
    }
    if (resp.status != 200) {
        const char *msg = resp.body ? resp.body : "";
        int code = ph_status_code(resp.status);
        if (strstr(msg, "no space left"))
            code = SBX_E_LIMIT;
        ret = dk_err(&p->eng, code ? code : SBX_E_BACKEND, "upload of '%s' into %s: the daemon "
                     "answered %ld: %.200s", path, sb->id, resp.status, msg);
    }
    ph_response_clear(&resp);
    return ret;
}

int dk_download(struct dk_prov *p, struct dk_sb *sb, const char *path, size_t max,
                void **data, size_t *len)
{
    uint64_t m = 0, s = 0;
    *data = NULL;
    *len = 0;
    int ret = dk_path_check(p, path);
    if (ret || (ret = walk(p, sb, path, true, &m, &s)))
        return ret;
    if (s > max)
        return dk_err(&p->eng, SBX_E_LIMIT, "file '%s' is %llu bytes, more than the %zu allowed",
                      path, (unsigned long long)s, max);
    char err[PH_ERR_MAX];
    char *esc = ph_escape(path);
    if (!esc)
        return dk_err(&p->eng, SBX_E_NOMEM, "out of memory");
    char url[PATH_MAX_LEN * 3 + 128];
    snprintf(url, sizeof url, DK_API "/containers/%s/archive?path=" DK_WORKDIR "%%2F%s", sb->id,
             esc);
    free(esc);
    /* The tar adds headers and padding to the file. */
    size_t cap = s + 64 * 1024 + 10240;
    ph_request rq = {.method = "GET", .path = url, .timeout_ms = 120000, .max_body = cap};
    ph_response resp;
    ret = ph_do(p->eng.http, &rq, &resp, err);
    if (ret) {
        ph_response_clear(&resp);
        return dk_err(&p->eng, ret, "download of '%s': %s", path, err);
    }
    if (resp.status != 200) {
        int code = ph_status_code(resp.status);
        ret = dk_err(&p->eng, code ? code : SBX_E_BACKEND, "download of '%s' from %s: the daemon "
                     "answered %ld: %.200s", path, sb->id, resp.status, resp.body ? resp.body : "");
        ph_response_clear(&resp);
        return ret;
    }
    ret = dk_tar_extract_one(resp.body, resp.body_len, max, p->eng.host->alloc,
                             p->eng.host->free, data, len, err, sizeof err);
    ph_response_clear(&resp);
    if (ret)
        return dk_err(&p->eng, ret, "download of '%s': %s", path, err);
    return SBX_OK;
}
