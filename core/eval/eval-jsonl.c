/* core/eval/eval-jsonl.c - JSON Lines files, plain or gzip-compressed (zlib)
 *
 * Read as a stream, line by line, under the caps of [eval] (max_input
 * decompressed bytes, max_line bytes per line, max_records records): a
 * file past one is refused when it gets there, with an error naming the
 * file, the cap and how to raise it, so neither a gzip bomb nor a huge
 * line takes more memory than one line's cap before it is refused.
 * Bytes already in memory (core_jsonl_parse) are held to the same caps.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <zlib.h>

#include <polysandbox/sandbox.h>

#include "eval-int.h"
#include "error.h"

#define CHUNK 65536

/* "256 MiB" or "1000 bytes" for messages. */
static void size_text(uint64_t n, char *buf, size_t size)
{
    if (n >= (1u << 20) && n % (1u << 20) == 0)
        snprintf(buf, size, "%" PRIu64 " MiB", n >> 20);
    else if (n >= 1024 && n % 1024 == 0)
        snprintf(buf, size, "%" PRIu64 " KiB", n >> 10);
    else
        snprintf(buf, size, "%" PRIu64 " bytes", n);
}

/* The error of a file past one of its caps: @what, the cap, and how to
 * raise it (the [eval] @key, the flag --max-@key's tail). */
static int over_cap(const char *path, size_t line, const char *what, const char *cap,
                    const char *key, const char *flag)
{
    char at[32] = "";

    if (line)
        snprintf(at, sizeof at, ":%zu", line);
    return core_error_set(SBX_E_INVAL, NULL, "%s%s: %s %s (eval.%s; raise it with %s or "
                          "[eval] %s in polysandbox.ini)", path, at, what, cap, key, flag, key);
}

static int over_size(const char *path, size_t line, const char *what, uint64_t cap,
                     bool line_cap)
{
    char c[32];

    size_text(cap, c, sizeof c);
    return over_cap(path, line, what, c, line_cap ? "max_line" : "max_input",
                    line_cap ? "--max-line" : "--max-input");
}

/* One line (without its newline): skipped when blank, else parsed and
 * given to @cb; *records counts it, within @caps. */
static int one_line(const char *path, size_t line, const char *p, size_t n,
                    const core_jsonl_caps *caps, core_jsonl_cb cb, void *ud, size_t *records)
{
    const char *q = p, *end = p + n;
    json_error_t jerr;
    json_t *obj;
    char c[32];
    int rc;

    if (n > caps->line)
        return over_size(path, line, "a line longer than the cap of", caps->line, true);
    while (q < end && (*q == ' ' || *q == '\t' || *q == '\r'))
        q++;
    if (q == end)           /* blank lines are allowed */
        return SBX_OK;
    if (++*records > caps->records) {
        snprintf(c, sizeof c, "%" PRIu64, caps->records);
        return over_cap(path, line, "more records than the cap of", c, "max_records",
                        "--max-records");
    }
    obj = json_loadb(p, n, JSON_REJECT_DUPLICATES, &jerr);
    if (!obj)
        return core_error_set(SBX_E_INVAL, NULL, "%s:%zu:%d: bad JSON: %s", path, line,
                              jerr.column, jerr.text);
    if (!json_is_object(obj))
        rc = core_error_set(SBX_E_INVAL, NULL, "%s:%zu: not a JSON object", path, line);
    else
        rc = cb(ud, obj, line);
    json_decref(obj);
    return rc;
}

/* Is the file on @fd gzip (its first two bytes)? */
static bool is_gzip(int fd)
{
    unsigned char magic[2];

    return pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

const core_jsonl_caps *core_jsonl_caps_of(const sbx_ctx *ctx, core_jsonl_caps *c)
{
    sbx_ctx_eval_caps(ctx, &c->input, &c->line, &c->records);
    return c;
}

int core_jsonl_read(const char *path, const core_jsonl_caps *caps, core_jsonl_cb cb,
                    void *ud, core_file_id *id)
{
    char *buf = NULL;
    size_t cap = 0, have = 0, line = 0, records = 0;
    uint64_t total = 0;
    struct stat st;
    gzFile gz;
    int fd, rc = SBX_OK;

    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return core_error_set(SBX_E_IO, NULL, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
        rc = core_error_set(SBX_E_IO, NULL, "%s: cannot read: %s", path,
                            S_ISDIR(st.st_mode) ? "a directory" : strerror(errno));
        close(fd);
        return rc;
    }
    if (id) {
        id->dev = st.st_dev;
        id->ino = st.st_ino;
    }
    /* A plain file's size is known before reading a byte (a compressed
     * one is counted as it inflates). */
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > caps->input && !is_gzip(fd)) {
        close(fd);
        return over_size(path, 0, "is larger than the cap of", caps->input, false);
    }
    if (!(gz = gzdopen(fd, "rb"))) {
        close(fd);
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory reading %s", path);
    }
    for (;;) {
        char *nl, *p = buf;
        int r;

        /* Room for one more chunk: at most the line cap and two chunks
         * are ever held. */
        if (cap - have < CHUNK) {
            size_t ncap = have + 2 * CHUNK > 2 * cap ? have + 2 * CHUNK : 2 * cap;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory reading %s", path);
                break;
            }
            buf = p = nb;
            cap = ncap;
        }
        r = gzread(gz, buf + have, CHUNK);
        if (r < 0) {
            int zerr;
            const char *msg = gzerror(gz, &zerr);
            rc = core_error_set(SBX_E_IO, NULL, "%s: cannot read: %s", path,
                                zerr == Z_ERRNO ? strerror(errno) : msg);
            break;
        }
        if ((total += (uint64_t)r) > caps->input) {
            rc = over_size(path, 0, "decompresses to more than the cap of", caps->input,
                           false);
            break;
        }
        have += (size_t)r;
        /* Every whole line in the buffer, then the start of the next. */
        while (rc == SBX_OK && (nl = memchr(p, '\n', have - (size_t)(p - buf)))) {
            rc = one_line(path, ++line, p, (size_t)(nl - p), caps, cb, ud, &records);
            p = nl + 1;
        }
        have -= (size_t)(p - buf);
        memmove(buf, p, have);
        if (rc == SBX_OK && have > caps->line)
            rc = over_size(path, line + 1, "a line longer than the cap of", caps->line, true);
        if (rc != SBX_OK)
            break;
        if (r == 0) {
            /* The last line may lack its newline. */
            if (have)
                rc = one_line(path, ++line, buf, have, caps, cb, ud, &records);
            break;
        }
    }
    free(buf);
    gzclose(gz);
    return rc;
}

int core_jsonl_parse(const char *path, const char *data, size_t len,
                     const core_jsonl_caps *caps, core_jsonl_cb cb, void *ud)
{
    const char *p, *end = data + len;
    size_t line = 0, records = 0;
    int rc = SBX_OK;

    if (len > caps->input)
        return over_size(path, 0, "is larger than the cap of", caps->input, false);
    for (p = data; p < end && rc == SBX_OK;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        rc = one_line(path, ++line, p, (size_t)(eol - p), caps, cb, ud, &records);
        p = eol + 1;
    }
    return rc;
}

char *core_jsonl_task_id(json_t *obj)
{
    return core_jsonl_field_id(obj, "task_id");
}

char *core_jsonl_field_id(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    char num[32];

    if (json_is_string(v))
        return strdup(json_string_value(v));
    if (json_is_integer(v)) {
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return strdup(num);
    }
    return NULL;
}
