/* plugins/daytona/daytona-files.c - upload and download through the
 * toolbox's /files/upload (multipart, field "file") and /files/download
 *
 * The daemon follows symbolic links and knows no file modes, so a small
 * wrapper script (daytona-exec.c) checks every component of the path for
 * links first, and an upload lands in a scratch directory before the
 * script moves it into place with its mode.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daytona-int.h"

/* A multipart/form-data body with one part, "file".  The boundary is
 * random and checked against the data. */
static int multipart(const void *data, size_t len, dt_buf *body, char ctype[96])
{
    char bnd[48];
    for (int tries = 0;; tries++) {
        char hex[33];
        if (pc_random_hex(hex, 16) != 0)
            return -1;
        snprintf(bnd, sizeof bnd, "polysandbox%s", hex);
        if (!len || !memmem(data, len, bnd, strlen(bnd)))
            break;
        if (tries > 8)
            return -1;
    }
    snprintf(ctype, 96, "multipart/form-data; boundary=%s", bnd);
    dt_buf_addf(body,
                "--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"file\"\r\n"
                "Content-Type: application/octet-stream\r\n\r\n", bnd);
    dt_buf_add(body, data, len);
    dt_buf_addf(body, "\r\n--%s--\r\n", bnd);
    return body->oom ? -1 : 0;
}

int dt_upload_raw(struct dt_prov *p, struct dt_sb *s, const char *abspath, const void *data,
                  size_t len)
{
    char err[PH_ERR_MAX], ctype[96];
    dt_buf body = {0}, path = {0};
    ph_response r = {0};
    int rc;

    dt_buf_adds(&path, "/files/upload?path=");
    dt_buf_addurl(&path, abspath);
    if (path.oom || multipart(data, len, &body, ctype) != 0) {
        rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        goto out;
    }
    ph_request rq = {.method = "POST", .path = path.p, .body = body.p, .body_len = body.len,
                     .content_type = ctype, .timeout_ms = p->request_ms + (long)(len >> 10)};
    rc = ph_do(s->tb, &rq, &r, err);
    if (rc == SBX_OK && dt_revive(p, s, r.status)) {
        ph_response_clear(&r);
        rc = ph_do(s->tb, &rq, &r, err);
    }
    if (rc != SBX_OK) {
        rc = p->host->set_error(p->h, rc, "daytona: sandbox %s: upload: %s", s->id, err);
        goto out;
    }
    if (r.status < 200 || r.status >= 300) {
        rc = dt_toolbox_refused(p, s, &r, "upload of %s", abspath);
        goto out;
    }
    rc = SBX_OK;
out:
    ph_response_clear(&r);
    dt_buf_free(&body);
    dt_buf_free(&path);
    return rc;
}

int dt_upload(void *prov, void *sb, const char *path, const void *data, size_t len,
              uint32_t mode)
{
    struct dt_prov *p = prov;
    struct dt_sb *s = sb;
    char *scratch = NULL, *tmp = NULL, *res = NULL;
    size_t res_len;
    bool timed_out;
    dt_buf b = {0};
    int rc;

    if (!dt_path_ok(path))
        return p->host->set_error(p->h, SBX_E_PATH,
                                  "daytona: upload: '%s' must be a relative path without '..'",
                                  path ? path : "(null)");
    if ((rc = dt_scratch(p, s, &scratch)) != SBX_OK)
        return rc;
    struct dt_place f = {path, len <= DT_INLINE_MAX ? (len ? data : "") : NULL, len, mode};
    if (!f.data) {
        if (asprintf(&tmp, "%s/f0", scratch) < 0) {
            tmp = NULL;
            rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
            goto out;
        }
        if ((rc = dt_upload_raw(p, s, tmp, data, len)) != SBX_OK)
            goto out;
    }
    dt_script_begin(&b, scratch);
    dt_script_place(&b, 0, &f);
    dt_buf_adds(&b, "echo 'SBX1 OK'; rm -rf -- \"$_sbx_s\"; "
                    "rmdir -- \"${_sbx_s%/*}\" 2>/dev/null; exit 0\n");
    if (b.oom) {
        rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        goto out;
    }
    if ((rc = dt_run_script(p, s, "upload", b.p, 0, 0, &res, &res_len, &timed_out)) != SBX_OK)
        goto out;
    if (timed_out) {
        rc = p->host->set_error(p->h, SBX_E_TIMEOUT, "daytona: upload of '%s' timed out", path);
        goto out;
    }
    if ((rc = dt_place_failed(p, "upload", res, &f, 1)) != SBX_OK)
        goto out;
    if (strstr(res, "SBX1 X scratch")) {
        rc = p->host->set_error(p->h, SBX_E_IO, "daytona: upload: cannot make %s", scratch);
        goto out;
    }
    if (!strstr(res, "SBX1 OK"))
        rc = p->host->set_error(p->h, SBX_E_BACKEND, "daytona: upload of '%s': no answer from the "
                                "wrapper", path);
out:
    dt_buf_free(&b);
    free(res);
    free(tmp);
    free(scratch);
    return rc;
}

int dt_download(void *prov, void *sb, const char *path, size_t max, void **data, size_t *len)
{
    struct dt_prov *p = prov;
    struct dt_sb *s = sb;
    char *res = NULL, err[PH_ERR_MAX];
    size_t res_len;
    bool timed_out;
    dt_buf b = {0}, url = {0};
    ph_response r = {0};
    int rc;

    *data = NULL;
    *len = 0;
    if (!dt_path_ok(path))
        return p->host->set_error(p->h, SBX_E_PATH,
                                  "daytona: download: '%s' must be a relative path without '..'",
                                  path ? path : "(null)");
    if ((rc = dt_workdir(p, s)) != SBX_OK)
        return rc;
    /* Check the path in the sandbox first: the daemon would follow links. */
    struct dt_place f = {path, NULL, 0, 0};
    const char *last = strrchr(path, '/');
    dt_buf_adds(&b, "_sbx_bad() { printf 'SBX1 P %s %s\\n' \"$1\" \"$2\"; exit 0; }\n");
    if (last) {
        dt_buf_adds(&b, "for _sbx_x in");
        for (const char *c = strchr(path, '/'); c; c = strchr(c + 1, '/')) {
            char *pre = strndup(path, (size_t)(c - path));
            if (!pre) {
                b.oom = true;
                break;
            }
            dt_buf_adds(&b, " ");
            dt_buf_addq(&b, pre);
            free(pre);
        }
        dt_buf_adds(&b, "; do if [ -L \"$_sbx_x\" ]; then _sbx_bad link 0; "
                        "elif [ ! -d \"$_sbx_x\" ]; then _sbx_bad missing 0; fi; done\n");
    }
    dt_buf_adds(&b, "_sbx_f=");
    dt_buf_addq(&b, path);
    dt_buf_adds(&b, "\nif [ -L \"$_sbx_f\" ]; then _sbx_bad link 0; "
                    "elif [ ! -e \"$_sbx_f\" ]; then _sbx_bad missing 0; "
                    "elif [ ! -f \"$_sbx_f\" ]; then _sbx_bad notfile 0; "
                    "elif [ ! -r \"$_sbx_f\" ]; then _sbx_bad perm 0; fi\n"
                    "printf 'SBX1 F %s\\n' $(($(wc -c <\"$_sbx_f\")))\n");
    if (b.oom) {
        rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        goto out;
    }
    if ((rc = dt_run_script(p, s, "download", b.p, 0, 0, &res, &res_len, &timed_out)) != SBX_OK)
        goto out;
    if (timed_out) {
        rc = p->host->set_error(p->h, SBX_E_TIMEOUT, "daytona: download of '%s' timed out", path);
        goto out;
    }
    if (strstr(res, "SBX1 P missing")) {
        rc = p->host->set_error(p->h, SBX_E_NOT_FOUND, "daytona: download: '%s' does not exist",
                                path);
        goto out;
    }
    if (strstr(res, "SBX1 P notfile")) {
        rc = p->host->set_error(p->h, SBX_E_INVAL, "daytona: download: '%s' is not a regular file",
                                path);
        goto out;
    }
    if (strstr(res, "SBX1 P perm")) {
        rc = p->host->set_error(p->h, SBX_E_PERM, "daytona: download: '%s' is not readable", path);
        goto out;
    }
    if ((rc = dt_place_failed(p, "download", res, &f, 1)) != SBX_OK)
        goto out;
    const char *fl = strstr(res, "SBX1 F ");
    unsigned long long size = 0;
    if (!fl || sscanf(fl, "SBX1 F %llu", &size) != 1) {
        rc = p->host->set_error(p->h, SBX_E_BACKEND, "daytona: download of '%s': no answer from "
                                "the wrapper", path);
        goto out;
    }
    if (size > max) {
        rc = p->host->set_error(p->h, SBX_E_LIMIT,
                                "daytona: download: '%s' is %llu bytes, more than the %zu allowed",
                                path, size, max);
        goto out;
    }
    dt_buf_adds(&url, "/files/download?path=");
    dt_buf_addurl(&url, s->workdir);
    dt_buf_adds(&url, "/");
    dt_buf_addurl(&url, path);
    if (url.oom) {
        rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        goto out;
    }
    /* The file may grow between the check and the transfer: the cap
     * holds whatever happens. */
    ph_request rq = {.method = "GET", .path = url.p, .timeout_ms = p->request_ms + (long)(max >> 10),
                     .max_body = max ? max : 1};
    rc = ph_do(s->tb, &rq, &r, err);
    if (rc != SBX_OK) {
        rc = p->host->set_error(p->h, rc, "daytona: sandbox %s: download of '%s': %s", s->id, path,
                                err);
        goto out;
    }
    if (r.status < 200 || r.status >= 300) {
        rc = dt_toolbox_refused(p, s, &r, "download of '%s'", path);
        goto out;
    }
    if (r.body_len > max) {
        rc = p->host->set_error(p->h, SBX_E_LIMIT, "daytona: download: '%s' is larger than %zu bytes",
                                path, max);
        goto out;
    }
    *data = p->host->alloc(r.body_len ? r.body_len : 1);
    if (!*data) {
        rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        goto out;
    }
    memcpy(*data, r.body, r.body_len);
    *len = r.body_len;
    rc = SBX_OK;
out:
    ph_response_clear(&r);
    dt_buf_free(&url);
    dt_buf_free(&b);
    free(res);
    return rc;
}
