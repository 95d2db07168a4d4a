/* core/eval-jsonl.c - JSON Lines files, plain or gzip-compressed (zlib) */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <zlib.h>

#include "eval-int.h"

/* Datasets are small (HumanEval is 200 KB); this only stops a wrong file
 * (a disk image, /dev/zero) from eating all memory. */
#define JSONL_MAX ((size_t)1 << 30)

/* The whole (decompressed) file.  gzread reads plain files as they are. */
static int slurp(const char *path, char **data, size_t *len)
{
    gzFile gz;
    char *buf = NULL;
    size_t n = 0, cap = 0;

    errno = 0;
    if (!(gz = gzopen(path, "rb")))
        return core_error_set(SBX_E_IO, NULL, "%s: cannot open: %s", path,
                              errno ? strerror(errno) : "out of memory");
    for (;;) {
        int r;
        if (cap - n < 65536) {
            size_t ncap = cap ? cap * 2 : 262144;
            char *nb;
            if (ncap > JSONL_MAX + 65536) {
                free(buf);
                gzclose(gz);
                return core_error_set(SBX_E_INVAL, NULL, "%s: larger than 1 GiB", path);
            }
            if (!(nb = realloc(buf, ncap + 1))) {
                free(buf);
                gzclose(gz);
                return core_error_set(SBX_E_NOMEM, NULL, "out of memory reading %s", path);
            }
            buf = nb;
            cap = ncap;
        }
        r = gzread(gz, buf + n, 65536);
        if (r < 0) {
            int zerr;
            const char *msg = gzerror(gz, &zerr);
            char why[256];
            snprintf(why, sizeof why, "%s", zerr == Z_ERRNO ? strerror(errno) : msg);
            free(buf);
            gzclose(gz);
            return core_error_set(SBX_E_IO, NULL, "%s: cannot read: %s", path, why);
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    gzclose(gz);
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return SBX_OK;
}

int core_jsonl_read(const char *path, core_jsonl_cb cb, void *ud)
{
    char *data = NULL;
    size_t len = 0;
    int rc;

    if ((rc = slurp(path, &data, &len)) != SBX_OK)
        return rc;
    rc = core_jsonl_parse(path, data, len, cb, ud);
    free(data);
    return rc;
}

int core_jsonl_parse(const char *path, const char *data, size_t len, core_jsonl_cb cb, void *ud)
{
    const char *p, *end = data + len;
    size_t line = 0;
    int rc = SBX_OK;

    for (p = data; p < end && rc == SBX_OK;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        const char *q = p;
        json_error_t jerr;
        json_t *obj;

        line++;
        while (q < eol && (*q == ' ' || *q == '\t' || *q == '\r'))
            q++;
        if (q == eol) {          /* blank lines are allowed */
            p = eol + 1;
            continue;
        }
        obj = json_loadb(p, (size_t)(eol - p), JSON_REJECT_DUPLICATES, &jerr);
        if (!obj) {
            rc = core_error_set(SBX_E_INVAL, NULL, "%s:%zu:%d: bad JSON: %s", path, line,
                                jerr.column, jerr.text);
        } else if (!json_is_object(obj)) {
            rc = core_error_set(SBX_E_INVAL, NULL, "%s:%zu: not a JSON object", path, line);
        } else {
            rc = cb(ud, obj, line);
        }
        json_decref(obj);
        p = eol + 1;
    }
    return rc;
}

char *core_jsonl_task_id(json_t *obj)
{
    json_t *v = json_object_get(obj, "task_id");
    char num[32];

    if (json_is_string(v))
        return strdup(json_string_value(v));
    if (json_is_integer(v)) {
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return strdup(num);
    }
    return NULL;
}
