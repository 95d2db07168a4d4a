/* core/config/config-parse.c - reading one ini file of the configuration, and
 * the loader's errors
 *
 * inih does the tokenising.  It is fed through our own line reader: that
 * counts lines (Debian's inih is built without INI_HANDLER_LINENO), turns
 * lines too long for inih's fixed buffer into an error instead of a silent
 * truncation, and strips leading blanks so that an indented line is never
 * glued to the previous value as a continuation.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <polysandbox/sandbox.h>

#include "config-int.h"

/* inih reads lines into a fixed 200-byte buffer; a longer "key = value"
 * line reaches it as "key = LONG_VALUE" while the loader keeps the value
 * (a sealed credential is longer than that). */
#define LINE_MAX_CHARS 65536
#define LONG_VALUE "\x01"

/* Record the first error; later ones are consequences and are dropped. */
int core_cfg_err(loader *ld, int code, const where *w, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (ld->rc != SBX_OK)
        return ld->rc;
    ld->rc = code;
    ld->err_line = w ? w->line : 0;
    if (!w)
        n = 0;
    else if (w->line > 0)
        n = snprintf(ld->msg, sizeof ld->msg, "%s:%d: ", w->name, w->line);
    else
        n = snprintf(ld->msg, sizeof ld->msg, "%s: ", w->name);
    if (n < 0 || (size_t)n >= sizeof ld->msg)
        n = 0;
    va_start(ap, fmt);
    vsnprintf(ld->msg + n, sizeof ld->msg - (size_t)n, fmt, ap);
    va_end(ap);
    return code;
}

int core_cfg_nomem(loader *ld)
{
    return core_cfg_err(ld, SBX_E_NOMEM, NULL, "out of memory reading the configuration");
}

static void seen_clear(loader *ld)
{
    for (size_t i = 0; i < ld->n_seen; i++)
        free(ld->seen[i].key);
    free(ld->seen);
    ld->seen = NULL;
    ld->n_seen = 0;
}

static int note_key(loader *ld, const char *section, const char *key)
{
    char *k;

    if (asprintf(&k, "%s\n%s", section, key) < 0)
        return core_cfg_nomem(ld);
    for (size_t i = 0; i < ld->n_seen; i++) {
        if (strcmp(ld->seen[i].key, k) == 0) {
            free(k);
            return core_cfg_err(ld, SBX_E_CONFIG, &ld->at, "duplicate key '%s' in [%s] "
                                "(first set at line %d)", key, section, ld->seen[i].line);
        }
    }
    struct seen_key *ns = realloc(ld->seen, (ld->n_seen + 1) * sizeof *ns);
    if (!ns) {
        free(k);
        return core_cfg_nomem(ld);
    }
    ld->seen = ns;
    ns[ld->n_seen].key = k;
    ns[ld->n_seen].line = ld->at.line;
    ld->n_seen++;
    return SBX_OK;
}

/* inih's callback: nonzero means go on. */
static int on_value(void *user, const char *section, const char *key,
                    const char *value)
{
    loader *ld = user;
    int rc;

    if (ld->rc != SBX_OK)
        return 0;
    if (strcmp(value, LONG_VALUE) == 0 && ld->long_value)
        value = ld->long_value;
    if (!*section)
        return !core_cfg_err(ld, SBX_E_CONFIG, &ld->at, "'%s' is outside any [section]", key);
    if (!*key)
        return !core_cfg_err(ld, SBX_E_CONFIG, &ld->at, "empty key in [%s]", section);
    if (note_key(ld, section, key) != SBX_OK)
        return 0;
    if (ld->kind)
        rc = ld->kind->apply(ld, section, key, value);
    else
        rc = core_cfg_apply_main(ld, &ld->at, section, key, value);
    return rc == SBX_OK;
}

struct line_reader {
    loader *ld;
    FILE *f;
};

static void read_error(loader *ld, FILE *f)
{
    where w = { ld->at.name, 0 };
    int e = errno;

    if (ferror(f))
        core_cfg_err(ld, SBX_E_CONFIG, &w, "read error: %s", strerror(e ? e : EIO));
}

/*
 * Hand inih a line longer than its buffer: a comment as an empty comment;
 * "key = value" as "key = LONG_VALUE", the value (trimmed, inline comment
 * cut as inih would) kept in ld->long_value for on_value.  @line has @len
 * characters, leading blanks already gone.
 */
static char *long_line(loader *ld, const char *line, size_t len, char *str, int num)
{
    const char *eq, *v, *end = line + len;
    size_t klen;

    if (line[0] == ';' || line[0] == '#') {
        memcpy(str, ";\n", 3);
        return str;
    }
    eq = memchr(line, '=', len);
    if (!eq || line[0] == '[') {
        core_cfg_err(ld, SBX_E_CONFIG, &ld->at, "line too long (at most %d characters, "
                     "or %d for a key = value line)", num - 2, LINE_MAX_CHARS);
        return NULL;
    }
    klen = (size_t)(eq - line);
    while (klen > 0 && core_cfg_is_blank(line[klen - 1]))
        klen--;
    if (klen + sizeof(" = " LONG_VALUE "\n") > (size_t)num) {
        core_cfg_err(ld, SBX_E_CONFIG, &ld->at, "key too long");
        return NULL;
    }
    for (v = eq + 1; v < end && core_cfg_is_blank(*v); v++)
        ;
    for (const char *c = v; c < end; c++)
        if (*c == ';' && c > v && core_cfg_is_blank(c[-1])) {
            end = c;
            break;
        }
    while (end > v && core_cfg_is_blank(end[-1]))
        end--;
    free(ld->long_value);
    if (!(ld->long_value = strndup(v, (size_t)(end - v)))) {
        core_cfg_nomem(ld);
        return NULL;
    }
    memcpy(str, line, klen);
    memcpy(str + klen, " = " LONG_VALUE "\n", sizeof(" = " LONG_VALUE "\n"));
    return str;
}

/*
 * inih's fgets-like reader, giving it exactly one whole line per call,
 * without its leading blanks and line end.  A line longer than
 * LINE_MAX_CHARS is an error found before reading on, so a huge file costs
 * no memory.  After an error it ends the file (NULL), so inih stops there.
 */
static char *read_line(char *str, int num, void *stream)
{
    struct line_reader *r = stream;
    loader *ld = r->ld;
    size_t len = 0;
    bool leading = true;
    int c;

    if (ld->rc != SBX_OK || num < 3)
        return NULL;
    if (!ld->line && !(ld->line = malloc(LINE_MAX_CHARS + 1))) {
        core_cfg_nomem(ld);
        return NULL;
    }
    errno = 0;
    c = getc(r->f);
    if (c == EOF) {
        read_error(ld, r->f);
        return NULL;
    }
    ld->at.line++;
    for (; c != EOF && c != '\n'; c = getc(r->f)) {
        if (c == '\r') {
            int next = getc(r->f);
            if (next == '\n' || next == EOF) {
                c = next;
                break;
            }
            ungetc(next, r->f);
        }
        if (c == '\0' || c == LONG_VALUE[0]) {
            core_cfg_err(ld, SBX_E_CONFIG, &ld->at, "line contains a %s byte",
                         c ? "control (0x01)" : "NUL");
            return NULL;
        }
        if (leading && core_cfg_is_blank((char)c))
            continue;
        leading = false;
        if (len >= LINE_MAX_CHARS) {
            core_cfg_err(ld, SBX_E_CONFIG, &ld->at, "line too long (at most %d characters)",
                         LINE_MAX_CHARS);
            return NULL;
        }
        ld->line[len++] = (char)c;
    }
    if (c == EOF && ferror(r->f)) {
        read_error(ld, r->f);
        return NULL;
    }
    /* Room is left for '\n' and '\0'. */
    if (len > (size_t)num - 2)
        return long_line(ld, ld->line, len, str, num);
    memcpy(str, ld->line, len);
    str[len] = '\n';
    str[len + 1] = '\0';
    return str;
}

int core_cfg_parse_file(loader *ld, const char *path, const cfg_kind *kind, bool missing_ok)
{
    struct line_reader r = { ld, NULL };
    struct stat st;
    int fd, res;
    where w = { path, 0 };

    /* O_NONBLOCK: never hang opening a FIFO that was left in the way. */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT && missing_ok)
            return SBX_OK;
        return core_cfg_err(ld, SBX_E_CONFIG, &w, "cannot open: %s", strerror(errno));
    }
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        return core_cfg_err(ld, SBX_E_CONFIG, &w, "cannot stat: %s", strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return core_cfg_err(ld, SBX_E_CONFIG, &w, "not a regular file");
    }
    r.f = fdopen(fd, "r");
    if (!r.f) {
        close(fd);
        return core_cfg_nomem(ld);
    }

    ld->at.name = path;
    ld->at.line = 0;
    ld->kind = kind;
    seen_clear(ld);
    res = ini_parse_stream(read_line, &r, on_value, ld);
    fclose(r.f);

    /* inih reports the first line it disliked; our reader feeds it one line
     * per call, so its count is ours.  A syntax error before the first
     * error we recorded wins. */
    if (res == -2)
        return core_cfg_nomem(ld);
    if (res > 0 && (ld->rc == SBX_OK ||
                    (ld->rc == SBX_E_CONFIG && ld->err_line > res))) {
        w.line = res;
        ld->rc = SBX_OK;
        core_cfg_err(ld, SBX_E_CONFIG, &w, "syntax error (expected [section] or "
                     "key = value)");
    }
    seen_clear(ld);
    return ld->rc;
}

void core_cfg_parse_free(loader *ld)
{
    seen_clear(ld);
    free(ld->line);
    free(ld->long_value);
    ld->line = ld->long_value = NULL;
}
