/* plugins/common/shwrap.c - the exec wrapper of text-only shell services
 * and the decoder of what it prints (see shwrap.h) */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "base64.h"
#include "shwrap.h"

/* A line longer than this is not the wrapper's (base64 writes 76). */
#define SW_LINE_MAX 4096

static bool grow(sw_buf *b, size_t more)
{
    if (b->oom)
        return false;
    if (b->len + more + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more + 1) {
        if (cap > SIZE_MAX / 2) {
            b->oom = true;
            return false;
        }
        cap *= 2;
    }
    char *n = realloc(b->p, cap);
    if (!n) {
        b->oom = true;
        return false;
    }
    b->p = n;
    b->cap = cap;
    return true;
}

void sw_buf_add(sw_buf *b, const void *s, size_t n)
{
    if (!grow(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void sw_buf_adds(sw_buf *b, const char *s)
{
    sw_buf_add(b, s, strlen(s));
}

void sw_buf_addf(sw_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = true;
        return;
    }
    sw_buf_add(b, s, (size_t)n);
    free(s);
}

void sw_buf_addq(sw_buf *b, const char *s)
{
    sw_buf_add(b, "'", 1);
    for (const char *q; (q = strchr(s, '\'')); s = q + 1) {
        sw_buf_add(b, s, (size_t)(q - s));
        sw_buf_add(b, "'\\''", 4);
    }
    sw_buf_adds(b, s);
    sw_buf_add(b, "'", 1);
}

void sw_buf_free(sw_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

bool sw_path_ok(const char *path)
{
    if (!path || !*path || path[0] == '/')
        return false;
    for (const char *c = path;;) {
        const char *e = strchr(c, '/');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return false;
        if (!e)
            return true;
        c = e + 1;
    }
}

bool sw_env_name_ok(const char *name)
{
    if (!name || !((*name >= 'A' && *name <= 'Z') || (*name >= 'a' && *name <= 'z') ||
                   *name == '_'))
        return false;
    for (const char *c = name + 1; *c; c++)
        if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
              (*c >= '0' && *c <= '9') || *c == '_'))
            return false;
    return true;
}

/* Returns 1 when a component of workdir/$1 is a symbolic link. */
static const char fn_link[] =
    "_sbx_link() { _sbx_c=$_sbx_w; _sbx_r=$1\n"
    "  while :; do\n"
    "    case $_sbx_r in */*) _sbx_h=${_sbx_r%%/*}; _sbx_r=${_sbx_r#*/};; "
    "*) _sbx_h=$_sbx_r; _sbx_r=;; esac\n"
    "    _sbx_c=$_sbx_c/$_sbx_h\n"
    "    [ -L \"$_sbx_c\" ] && return 0\n"
    "    [ -z \"$_sbx_r\" ] && return 1\n"
    "  done; }\n"
    "_sbx_end() { rm -rf -- \"$_sbx_s\" \"$_sbx_s\".*; printf '\\nSBX1 %s\\n' \"$1\"; exit 0; }\n";

/* fork, exec, waitpid: "w<wait status>" into $dir/rc, exec's errno into
 * $dir/x (the child then exits 127). */
static const char perl_runner[] =
    "$d=shift;$p=fork;exit 125 unless defined $p;"
    "if(!$p){exec {$ARGV[0]} @ARGV;$e=$!+0;open(F,\">\",\"$d/x\")&&print F $e;exit 127}"
    "waitpid($p,0);$s=$?;open(F,\">\",\"$d/rc\")||exit 125;print F \"w$s\";close F;exit 0";

char *sw_script(const sw_job *job)
{
    sw_buf b = {0};

    if (job->workdir) {
        sw_buf_adds(&b, "_sbx_w=");
        sw_buf_addq(&b, job->workdir);
    } else {
        sw_buf_adds(&b, "_sbx_w=$(pwd)");
    }
    sw_buf_adds(&b, "; _sbx_s=\"$_sbx_w\"/");
    sw_buf_addq(&b, job->scratch);
    sw_buf_adds(&b, "\n");
    sw_buf_adds(&b, fn_link);
    sw_buf_adds(&b, "mkdir -p -- \"$_sbx_w\" \"$_sbx_s\" 2>/dev/null\n");
    for (size_t i = 0; i < job->n_files; i++) {
        const char *p = job->files[i].path, *slash = strrchr(p, '/');
        sw_buf_adds(&b, "_sbx_p=");
        sw_buf_addq(&b, p);
        sw_buf_addf(&b, "\n_sbx_link \"$_sbx_p\" && _sbx_end 'P %zu'\n", i);
        if (slash) {
            sw_buf_adds(&b, "mkdir -p -- \"$_sbx_w\"/");
            char *dir = strndup(p, (size_t)(slash - p));
            if (!dir) {
                sw_buf_free(&b);
                return NULL;
            }
            sw_buf_addq(&b, dir);
            free(dir);
            sw_buf_addf(&b, " 2>/dev/null; _sbx_link \"$_sbx_p\" && _sbx_end 'P %zu'\n", i);
        }
        sw_buf_addf(&b, "[ -d \"$_sbx_w/$_sbx_p\" ] && _sbx_end 'W %zu'\n", i);
        sw_buf_addf(&b, "mv -f -- \"$_sbx_s.f%zu\" \"$_sbx_w/$_sbx_p\" && "
                        "chmod %o \"$_sbx_w/$_sbx_p\" || _sbx_end 'W %zu'\n",
                    i, (unsigned)(job->files[i].mode & 07777), i);
    }
    if (job->download) {
        sw_buf_adds(&b, "_sbx_p=");
        sw_buf_addq(&b, job->download);
        sw_buf_adds(&b, "\n_sbx_link \"$_sbx_p\" && _sbx_end P\n"
                        "[ -e \"$_sbx_w/$_sbx_p\" ] || _sbx_end N\n"
                        "[ -f \"$_sbx_w/$_sbx_p\" ] || _sbx_end D\n");
        sw_buf_addf(&b, "_sbx_n=$(wc -c <\"$_sbx_w/$_sbx_p\") || _sbx_end D\n"
                        "[ \"$_sbx_n\" -gt %llu ] && _sbx_end \"B $_sbx_n\"\n"
                        "base64 <\"$_sbx_w/$_sbx_p\" || _sbx_end D\n"
                        "_sbx_end 'S x0'\n",
                    (unsigned long long)job->download_max);
        if (b.oom) {
            sw_buf_free(&b);
            return NULL;
        }
        return b.p;
    }
    sw_buf_adds(&b, "cd -- \"$_sbx_w\" || _sbx_end C\n");
    if (job->cwd) {
        sw_buf_adds(&b, "_sbx_link ");
        sw_buf_addq(&b, job->cwd);
        sw_buf_adds(&b, " && _sbx_end C\ncd -- ");
        sw_buf_addq(&b, job->cwd);
        sw_buf_adds(&b, " 2>/dev/null || _sbx_end C\n");
    }
    for (size_t i = 0; i < job->n_env; i++) {
        sw_buf_addf(&b, "export %s=", job->env[i].key);
        sw_buf_addq(&b, job->env[i].value);
        sw_buf_adds(&b, "\n");
    }
    sw_buf_adds(&b, job->stdin_file ? "exec 0<\"$_sbx_s.in\"\n" : "exec 0</dev/null\n");
    /* stdout to fd 3 (the outer base64), stderr through the inner one. */
    /* perl, when the image has it, tells a signal from an exit code. */
    sw_buf_adds(&b, "_sbx_r=");
    sw_buf_addq(&b, perl_runner);
    sw_buf_adds(&b, "\n_sbx_run() { if command -v perl >/dev/null 2>&1; then "
                    "perl -e \"$_sbx_r\" \"$_sbx_s\" \"$@\"; "
                    "else \"$@\"; echo \"x$?\" >\"$_sbx_s/rc\"; fi; }\n"
                    "_sbx_b64() { if command -v perl >/dev/null 2>&1; then perl -MMIME::Base64 -e "
                    "'$|=1;while(sysread(STDIN,$b,65536)){print encode_base64($b)}'; "
                    "else base64; fi; }\n"
                    "{ _sbx_run \"$@\" 2>&1 1>&3 3>&- | _sbx_b64 >&2; } 3>&1 | _sbx_b64\n"
                    "_sbx_st=$(cat \"$_sbx_s/rc\" 2>/dev/null)\n"
                    "[ -s \"$_sbx_s/x\" ] && _sbx_st=e$(cat \"$_sbx_s/x\")\n"
                    "_sbx_end \"S $_sbx_st\"\n");
    if (b.oom) {
        sw_buf_free(&b);
        return NULL;
    }
    return b.p;
}

char *sw_command_line(const char *script, const char *const *argv)
{
    sw_buf b = {0};
    sw_buf_adds(&b, "sh -c ");
    sw_buf_addq(&b, script);
    sw_buf_adds(&b, " sbx");
    for (size_t i = 0; argv && argv[i]; i++) {
        sw_buf_adds(&b, " ");
        sw_buf_addq(&b, argv[i]);
    }
    if (b.oom) {
        sw_buf_free(&b);
        return NULL;
    }
    return b.p;
}

/* ---- decoding ---- */

void sw_dec_init(sw_dec *d, const sbx_output_sink_v1 *sink)
{
    memset(d, 0, sizeof *d);
    d->sink = sink;
}

/* The sink holds the output caps (the core's, or sw_collect_write's). */
static int deliver(sw_dec *d, int stream, const unsigned char *p, size_t n)
{
    if (d->stopped)
        return 1;
    if (n && d->sink && d->sink->write(d->sink->ud, stream, p, n) != 0) {
        d->stopped = true;
        return 1;
    }
    return 0;
}

static int line_done(sw_dec *d, int stream, char *line, size_t n)
{
    while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' '))
        line[--n] = '\0';
    if (n == 0)
        return 0;
    if (stream == 1 && n > 5 && !memcmp(line, "SBX1 ", 5)) {
        if (d->status[0]) {
            d->bad = true;
            return 1;
        }
        snprintf(d->status, sizeof d->status, "%s", line + 5);
        return 0;
    }
    if (stream == 1 && d->status[0]) {
        d->bad = true;  /* output after the status line */
        return 1;
    }
    size_t len = 0;
    unsigned char *bytes = pc_b64_decode(line, &len);
    if (!bytes) {
        d->bad = true;
        return 1;
    }
    int r = deliver(d, stream, bytes, len);
    free(bytes);
    return r;
}

int sw_dec_feed(sw_dec *d, int stream, const char *text, size_t len)
{
    if (stream != 1 && stream != 2)
        return 0;
    sw_buf *l = &d->line[stream];
    for (size_t i = 0; i < len; i++) {
        if (d->stopped || d->bad)
            return 1;
        if (text[i] != '\n') {
            if (l->len >= SW_LINE_MAX) {
                d->bad = true;
                return 1;
            }
            sw_buf_add(l, text + i, 1);
            if (l->oom) {
                d->bad = true;
                return 1;
            }
            continue;
        }
        int r = l->len ? line_done(d, stream, l->p, l->len) : 0;
        l->len = 0;
        if (r)
            return 1;
    }
    return (d->stopped || d->bad) ? 1 : 0;
}

void sw_dec_finish(sw_dec *d)
{
    for (int s = 1; s <= 2; s++)
        if (d->line[s].len && !d->stopped && !d->bad) {
            line_done(d, s, d->line[s].p, d->line[s].len);
            d->line[s].len = 0;
        }
}

void sw_dec_free(sw_dec *d)
{
    sw_buf_free(&d->line[1]);
    sw_buf_free(&d->line[2]);
}

sw_kind sw_outcome(const sw_dec *d, long *code)
{
    const char *st = d->status, *num = st + 2;
    char *end;
    *code = 0;
    if (!st[0])
        return SW_NONE;
    if (st[1] == '\0')
        num = NULL;
    else if (st[1] != ' ')
        return SW_BAD;
    sw_kind k;
    switch (st[0]) {
    case 'S':
        if (!num)
            return SW_BAD;
        k = num[0] == 'w' ? SW_WAITED : num[0] == 'e' ? SW_EXEC_FAILED :
            num[0] == 'x' ? SW_EXITED : SW_BAD;
        if (k == SW_BAD)
            return k;
        num++;
        break;
    case 'P': k = SW_PATH; break;
    case 'W': k = SW_WRITE; break;
    case 'C': k = SW_CWD; break;
    case 'N': k = SW_MISSING; break;
    case 'D': k = SW_NOT_FILE; break;
    case 'B': k = SW_TOO_BIG; break;
    default: return SW_BAD;
    }
    if (num) {
        /* The sandbox writes this line: a number out of its kind's range
         * (an exit status above 255, a negative errno) is not a status. */
        long max = k == SW_EXITED ? 255 : k == SW_WAITED ? 0xffff : k == SW_EXEC_FAILED ? 4095
                                                                                       : LONG_MAX;
        errno = 0;
        long v = strtol(num, &end, 10);
        if (end == num || *end || errno || v < 0 || v > max || !(num[0] >= '0' && num[0] <= '9'))
            return SW_BAD;
        *code = v;
    }
    return k;
}

void sw_fill_exit(sw_kind kind, long code, sbx_exec_outcome_v1 *out)
{
    out->exit_code = -1;
    out->signal = 0;
    if (kind == SW_EXEC_FAILED) {
        out->exit_code = code == ENOENT ? 127 : 126;
        out->status = code == ENOENT ? SBX_RUN_NOT_FOUND : SBX_RUN_NOT_EXECUTABLE;
        return;
    }
    if (kind == SW_WAITED) {
        int ws = (int)code;
        if (WIFSIGNALED(ws)) {
            out->status = SBX_RUN_SIGNAL;
            out->signal = WTERMSIG(ws);
            return;
        }
        code = WEXITSTATUS(ws);
    } else if (code > 128 && code <= 128 + 64) {
        out->status = SBX_RUN_SIGNAL;
        out->signal = (int)(code - 128);
        return;
    }
    out->exit_code = (int)code;
    if (code == 0)
        out->status = SBX_RUN_OK;
    else if (kind == SW_EXITED && code == 126)
        out->status = SBX_RUN_NOT_EXECUTABLE;
    else if (kind == SW_EXITED && code == 127)
        out->status = SBX_RUN_NOT_FOUND;
    else
        out->status = SBX_RUN_NONZERO_EXIT;
}

int sw_collect_write(void *ud, int stream, const void *buf, size_t len)
{
    sw_collect *c = ud;
    if (stream != SBX_STREAM_STDOUT)
        return 0;
    if (c->len + len > c->cap)
        return 1;
    memcpy(c->buf + c->len, buf, len);
    c->len += len;
    return 0;
}

int sw_upload_result(const sbx_host_v1 *host, sbx_host_handle *h, const char *who,
                     const char *path, sw_kind kind, long code)
{
    if ((kind == SW_EXITED || kind == SW_WAITED) && code == 0)
        return SBX_OK;
    if (kind == SW_PATH)
        return host->set_error(h, SBX_E_PATH, "%s: upload '%s': the path goes through a "
                               "symbolic link", who, path);
    return host->set_error(h, SBX_E_IO, "%s: upload '%s' failed (a directory is there, or the "
                           "disk refused it)", who, path);
}

int sw_download_result(const sbx_host_v1 *host, sbx_host_handle *h, const char *who,
                       const char *path, size_t max, sw_kind kind)
{
    switch (kind) {
    case SW_EXITED:
        return SBX_OK;
    case SW_MISSING:
        return host->set_error(h, SBX_E_NOT_FOUND, "%s: download '%s': no such file", who,
                               path);
    case SW_PATH:
        return host->set_error(h, SBX_E_PATH, "%s: download '%s': the path goes through a "
                               "symbolic link", who, path);
    case SW_TOO_BIG:
        return host->set_error(h, SBX_E_LIMIT, "%s: download '%s': larger than %zu bytes", who,
                               path, max);
    default:
        return host->set_error(h, SBX_E_IO, "%s: download '%s': not a regular file", who, path);
    }
}
