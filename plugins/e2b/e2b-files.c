/* plugins/e2b/e2b-files.c - upload and download through envd's /files
 *
 * Paths are relative to the work directory (the user's home by default).
 * envd follows links inside the sandbox; we refuse them instead, as the
 * provider contract asks: every existing component of the path is checked
 * with filesystem.Filesystem/Stat (which does not follow the last link)
 * before the transfer.  Modes other than 0644 are set with chmod, as envd's
 * file API has no mode.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2b-int.h"

int e2b_sandbox_path(struct e2b_prov *p, const char *rel, char **out)
{
    *out = NULL;
    if (!rel || !*rel)
        return p->host->set_error(p->h, SBX_E_PATH, "empty path");
    if (rel[0] == '/')
        return p->host->set_error(p->h, SBX_E_PATH, "path '%s' is absolute: paths are relative "
                                  "to the work directory", rel);
    for (const char *s = rel; *s;) {
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == 2 && s[0] == '.' && s[1] == '.')
            return p->host->set_error(p->h, SBX_E_PATH, "path '%s' has a '..' component", rel);
        s += n;
        while (*s == '/')
            s++;
    }
    for (const char *s = rel; *s; s++)
        if ((unsigned char)*s < 0x20)
            return p->host->set_error(p->h, SBX_E_PATH, "path has a control character");
    if (asprintf(out, "%s/%s", p->workdir, rel) < 0) {
        *out = NULL;
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    return SBX_OK;
}

enum ftype { FT_MISSING, FT_FILE, FT_DIR, FT_LINK, FT_OTHER };

/* Stat without following a last link: the type, and the size of a file. */
static int stat_path(struct e2b_prov *p, struct e2b_sb *sb, const char *abs, enum ftype *t,
                     uint64_t *size)
{
    json_t *req = json_pack("{s:s}", "path", abs), *ans = NULL;
    if (!req)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    int rc = e2b_rpc(p, sb, "/filesystem.Filesystem/Stat", req, 0, SBX_E_NOT_FOUND, &ans);
    json_decref(req);
    if (rc == SBX_E_NOT_FOUND) {
        *t = FT_MISSING;
        json_decref(ans);
        return SBX_OK;
    }
    if (rc) {
        json_decref(ans);
        return rc;
    }
    json_t *e = json_object_get(ans, "entry");
    const char *type = json_string_value(json_object_get(e, "type"));
    const char *sz = json_string_value(json_object_get(e, "size")); /* int64: a string */
    if (!type)
        *t = FT_FILE; /* FILE_TYPE_UNSPECIFIED is omitted; treat as a file */
    else if (!strcmp(type, "FILE_TYPE_FILE"))
        *t = FT_FILE;
    else if (!strcmp(type, "FILE_TYPE_DIRECTORY"))
        *t = FT_DIR;
    else if (!strcmp(type, "FILE_TYPE_SYMLINK"))
        *t = FT_LINK;
    else
        *t = FT_OTHER;
    if (json_string_value(json_object_get(e, "symlinkTarget")) && *t != FT_LINK)
        *t = FT_LINK;
    if (size)
        *size = sz ? strtoull(sz, NULL, 10) : 0;
    json_decref(ans);
    return SBX_OK;
}

/* Walks @rel's components below the work directory.  A link anywhere is
 * SBX_E_PATH; a non-directory parent SBX_E_PATH.  *last gets the type of
 * the whole path (FT_MISSING once a component is missing). */
static int check_path(struct e2b_prov *p, struct e2b_sb *sb, const char *rel, const char *what,
                      enum ftype *last, uint64_t *size)
{
    char *abs = NULL;
    int rc = e2b_sandbox_path(p, rel, &abs);
    if (rc)
        return rc;
    size_t base = strlen(p->workdir) + 1;
    *last = FT_MISSING;
    for (size_t i = base; !rc;) {
        while (abs[i] == '/')
            i++;
        if (!abs[i])
            break;
        size_t j = i;
        while (abs[j] && abs[j] != '/')
            j++;
        char save = abs[j];
        abs[j] = '\0';
        enum ftype t = FT_MISSING;
        rc = stat_path(p, sb, abs, &t, save ? NULL : size);
        if (!rc && t == FT_LINK)
            rc = p->host->set_error(p->h, SBX_E_PATH, "%s '%s': %s is a symbolic link the "
                                    "sandbox made; refused", what, rel, abs + base);
        else if (!rc && save && t != FT_DIR && t != FT_MISSING)
            rc = p->host->set_error(p->h, SBX_E_PATH, "%s '%s': %s is not a directory", what,
                                    rel, abs + base);
        abs[j] = save;
        *last = t;
        if (rc || t == FT_MISSING)
            break;
        i = j;
    }
    free(abs);
    return rc;
}

static int files_path(struct e2b_prov *p, const char *abs, char **out)
{
    char *enc = NULL, *user = NULL;
    size_t el = 0, ec = 0, ul = 0, uc = 0;
    *out = NULL;
    if (e2b_pct_append(&enc, &el, &ec, abs) || e2b_pct_append(&user, &ul, &uc, p->user) ||
        asprintf(out, "/files?path=%s&username=%s", enc, user) < 0) {
        *out = NULL;
        free(enc);
        free(user);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    free(enc);
    free(user);
    return SBX_OK;
}

static int files_error(struct e2b_prov *p, struct e2b_sb *sb, const char *what, const char *rel,
                       const ph_response *r)
{
    json_t *j = r->body_len ? json_loadb(r->body, r->body_len, 0, NULL) : NULL;
    const char *m = json_string_value(json_object_get(j, "message"));
    char msg[300];
    snprintf(msg, sizeof msg, "%s", m ? m : (r->body ? r->body : ""));
    for (char *c = msg; *c; c++)
        if ((unsigned char)*c < 0x20)
            *c = ' ';
    json_decref(j);
    int code = r->status == 507 ? SBX_E_LIMIT : ph_status_code(r->status);
    char ra[48] = "";
    e2b_retry_after(p, sb, r->retry_after_ms);
    if (r->retry_after_ms >= 0)
        snprintf(ra, sizeof ra, " (retry after %ld s)", (r->retry_after_ms + 999) / 1000);
    return p->host->set_error(p->h, code, "sandbox %s: %s '%s': envd answered HTTP %ld%s%s%s%s",
                              sb->id, what, rel, r->status, msg[0] ? ": " : "", msg, ra,
                              r->status == 502 ? " (the sandbox is not running)" : "");
}

/* A multipart/form-data body with one part "file" (envd < 0.5.7). */
static int multipart(const char *abs, const void *data, size_t len, char **body, size_t *blen,
                     char ctype[128])
{
    char boundary[40];
    memcpy(boundary, "sbx", 3);
    if (pc_random_hex(boundary + 3, 16))
        return SBX_E_IO;
    char *head = NULL;
    int hl = asprintf(&head, "--%s\r\nContent-Disposition: form-data; name=\"file\"; "
                      "filename=\"%s\"\r\nContent-Type: application/octet-stream\r\n\r\n",
                      boundary, abs);
    if (hl < 0)
        return SBX_E_NOMEM;
    char tail[64];
    int tl = snprintf(tail, sizeof tail, "\r\n--%s--\r\n", boundary);
    char *b = malloc((size_t)hl + len + (size_t)tl);
    if (!b) {
        free(head);
        return SBX_E_NOMEM;
    }
    memcpy(b, head, (size_t)hl);
    if (len)
        memcpy(b + hl, data, len);
    memcpy(b + (size_t)hl + len, tail, (size_t)tl);
    free(head);
    *body = b;
    *blen = (size_t)hl + len + (size_t)tl;
    snprintf(ctype, 128, "multipart/form-data; boundary=%s", boundary);
    return SBX_OK;
}

int e2b_upload(struct e2b_prov *p, struct e2b_sb *sb, const char *path, const void *data,
               size_t len, uint32_t mode)
{
    enum ftype t;
    int rc = check_path(p, sb, path, "upload", &t, NULL);
    if (rc)
        return rc;
    if (t == FT_DIR)
        return p->host->set_error(p->h, SBX_E_PATH, "upload '%s': a directory is there", path);
    char *abs = NULL, *url = NULL, *mp = NULL, ctype[128], err[PH_ERR_MAX] = "";
    size_t mplen = 0;
    if ((rc = e2b_sandbox_path(p, path, &abs)) || (rc = files_path(p, abs, &url)))
        goto out;
    const char *headers[E2B_SB_HEADERS + 5];
    e2b_envd_headers(sb, NULL, headers);
    ph_request rq = {.method = "POST", .path = url, .headers = headers,
                     .body = data ? data : "", .body_len = len,
                     .content_type = "application/octet-stream",
                     .timeout_ms = p->request_timeout_ms + (long)(len / 65536)};
    if (!sb->octet_upload) {
        if ((rc = multipart(abs, data, len, &mp, &mplen, ctype))) {
            rc = p->host->set_error(p->h, rc, "upload '%s': out of memory", path);
            goto out;
        }
        rq.body = mp;
        rq.body_len = mplen;
        rq.content_type = ctype;
    }
    ph_response r;
    rc = ph_do(sb->envd, &rq, &r, err);
    if (rc)
        rc = p->host->set_error(p->h, rc, "sandbox %s: upload '%s': %s", sb->id, path, err);
    else if (r.status < 200 || r.status > 299)
        rc = files_error(p, sb, "upload", path, &r);
    ph_response_clear(&r);
    if (!rc && (mode & 07777) != 0644) {
        char m[16];
        int code = -1;
        snprintf(m, sizeof m, "%04o", (unsigned)(mode & 07777));
        /* Relative to the work directory, where e2b_run_quiet runs. */
        const char *argv[] = {"chmod", m, "--", path, NULL};
        rc = e2b_run_quiet(p, sb, argv, 30000, &code);
        if (rc || code)
            rc = p->host->set_error(p->h, rc ? rc : SBX_E_BACKEND,
                                    "sandbox %s: upload '%s': chmod %s failed", sb->id, path, m);
    }
out:
    free(abs);
    free(url);
    free(mp);
    return rc;
}

int e2b_download(struct e2b_prov *p, struct e2b_sb *sb, const char *path, size_t max,
                 void **data, size_t *len)
{
    enum ftype t;
    uint64_t size = 0;
    *data = NULL;
    *len = 0;
    int rc = check_path(p, sb, path, "download", &t, &size);
    if (rc)
        return rc;
    if (t == FT_MISSING)
        return p->host->set_error(p->h, SBX_E_NOT_FOUND, "sandbox %s: download '%s': no such "
                                  "file", sb->id, path);
    if (t != FT_FILE)
        return p->host->set_error(p->h, SBX_E_PATH, "download '%s': not a regular file; refused",
                                  path);
    if (size > max)
        return p->host->set_error(p->h, SBX_E_LIMIT, "download '%s': the file is %llu bytes, "
                                  "more than the %zu allowed", path, (unsigned long long)size, max);
    char *abs = NULL, *url = NULL, err[PH_ERR_MAX] = "";
    if ((rc = e2b_sandbox_path(p, path, &abs)) || (rc = files_path(p, abs, &url))) {
        free(abs);
        return rc;
    }
    static const char *const accept[] = {"Accept: application/octet-stream", NULL};
    const char *headers[E2B_SB_HEADERS + 5];
    e2b_envd_headers(sb, accept, headers);
    ph_request rq = {.method = "GET", .path = url, .headers = headers,
                     .timeout_ms = p->request_timeout_ms + (long)(max / 65536),
                     .max_body = max ? max : 1};
    ph_response r;
    rc = ph_do(sb->envd, &rq, &r, err);
    if (rc == SBX_E_LIMIT)
        rc = p->host->set_error(p->h, SBX_E_LIMIT, "download '%s': the file is larger than the "
                                "%zu bytes allowed", path, max);
    else if (rc)
        rc = p->host->set_error(p->h, rc, "sandbox %s: download '%s': %s", sb->id, path, err);
    else if (r.status < 200 || r.status > 299)
        rc = files_error(p, sb, "download", path, &r);
    if (!rc) {
        void *out = p->host->alloc(r.body_len + 1);
        if (!out) {
            rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        } else {
            memcpy(out, r.body, r.body_len);
            ((char *)out)[r.body_len] = '\0';
            *data = out;
            *len = r.body_len;
        }
    }
    ph_response_clear(&r);
    free(abs);
    free(url);
    return rc;
}
