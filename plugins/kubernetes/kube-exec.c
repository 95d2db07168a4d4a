/* plugins/kubernetes/kube-exec.c - one command in a sandbox pod
 *
 * pods/exec runs argv as is, with the container's environment, in its
 * working directory, and reports an exit code only: a process a signal
 * killed is exit code 128 + the signal, as containerd reports it, and a
 * program that is not there is an error of the runtime.  So every command
 * runs inside a POSIX sh wrapper (below) that exports the exec's
 * environment, enters the directory, finds the program as execvp would
 * (127 / 126 before anything runs), applies the per-exec limits with
 * ulimit (CPU seconds, file size, open files), starts a watchdog that at
 * the time limit kills every process carrying this exec's marker variable
 * (setsid and ignored signals do not help an escapee), runs the command
 * under perl when the image has it (perl's waitpid tells a signal from an
 * exit; without perl, 128 + N is taken as an exit code), and ends both
 * output streams with a trailer
 *
 *     \036sbx:<token>:<kind>:<number>\n
 *
 * (kind x exit, s signal, n not found, e not executable, t time limit, d no
 * such directory) that the provider strips.  The same record g:0 on stdout
 * is no trailer: it says the command runs, in a process group of its own
 * (see kube-signal.c), so that signals may go.  The token is random per exec,
 * so a program cannot forge its own fate.  Once both trailers are in, the
 * output is complete (each stream is in order) and the socket is closed
 * without waiting for processes the command left in the background.
 *
 * When the provider stops a command itself (the core's sink asked it to
 * stop, past an output cap or for the caller; the caller cancelled; its
 * own deadline; a dropped stream) a second exec sweeps the marked
 * processes.  An exec that never reached the pod (refused upgrade, no
 * connection) tells the core it did not start.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube-int.h"

#define MAX_STATUS (64u * 1024)
/* How long past its own time limit an exec may take before the provider
 * gives up on the wrapper's watchdog. */
#define EXEC_GRACE_NS (15ull * 1000000000ull)
#define SWEEP_TIMEOUT_NS (30ull * 1000000000ull)
/* outcome(): a file of the exec could not be put (r->num: index * 256 + code). */
#define KUBE_FILE_FAILED (KUBE_STOP + 1)

/* perl's part: fork, exec (execvp), waitpid; the status into the file $1.
 * The command leads a process group of its own (set on both sides of the
 * fork, so it exists before anyone reads it), whose id goes into $1.g
 * (whole, by rename) for the signal execs (kube-signal.c); then the
 * record g:0 on stdout says so ($2 is the record's start). */
static const char perl_run[] =
    "my $f = shift @ARGV; my $m = shift @ARGV; my $p = fork; defined $p or exit 125;"
    "if (!$p) { setpgrp(0, 0); exec { $ARGV[0] } @ARGV; print STDERR \"$ARGV[0]: $!\\n\";"
    " exit($!{ENOENT} ? 127 : 126); }"
    "setpgrp($p, $p);"
    "if (open(my $g, '>', \"$f.n\")) { print $g \"$p\\n\"; close $g; rename(\"$f.n\", \"$f.g\"); }"
    "syswrite(STDOUT, \"${m}g:0\\n\");"
    "waitpid($p, 0); my $s = $?;"
    "if (open(my $o, '>', $f)) {"
    " print $o (($s & 127) ? 's ' . ($s & 127) : 'x ' . ($s >> 8)), \"\\n\"; close $o; }"
    "exit(($s & 127) ? 128 + ($s & 127) : $s >> 8);";

/* The wrapper, run by the bootstrap (kube-program.c) with $1 token, $2
 * directory, $3 time limit (s), $4 CPU s, $5 file size (512-byte blocks),
 * $6 open files, $7 perl's part, $8 the work directory, then NAME=value...
 * "--" argv.  On the exec's stdin after it: the tars of the exec's files
 * (taken by `put` lines between the head and the tail), then $L bytes of
 * the command's stdin, or with L=s (streamed) all the rest, to v5's CLOSE. */
static const char wrapper_head[] =
    "t=$1 d=$2 w=$3 c=$4 f=$5 n=$6 P=$7 W=$8; shift 8\n"
    "while [ \"$#\" -gt 0 ] && [ \"$1\" != -- ]; do export \"$1\" || exit 125; shift; done\n"
    "[ \"$#\" -gt 0 ] && shift\n"
    "s=/tmp/.polysandbox-$t\n"
    "r() { printf '\\036sbx:%s:%s\\n' \"$t\" \"$1\"; printf '\\036sbx:%s:%s\\n' \"$t\" \"$1\" >&2; }\n";

static const char wrapper_tail[] =
    "cd -- \"$d\" 2>/dev/null || { printf 'polysandbox: %s: no such directory\\n' \"$d\" >&2;"
    " r d:1; exit 1; }\n"
    "x=$1\n"
    "case $x in\n"
    "*/*) if [ ! -e \"$x\" ]; then printf '%s: not found\\n' \"$x\" >&2; r n:127; exit 127; fi\n"
    "  if [ -d \"$x\" ] || [ ! -x \"$x\" ]; then printf '%s: Permission denied\\n' \"$x\" >&2;"
    " r e:126; exit 126; fi;;\n"
    "*) o=$IFS; IFS=:; k=; for p in $PATH; do"
    " if [ -f \"${p:-.}/$x\" ] && [ -x \"${p:-.}/$x\" ]; then k=1; break; fi; done; IFS=$o\n"
    "  if [ -z \"$k\" ]; then printf '%s: command not found\\n' \"$x\" >&2; r n:127; exit 127; fi;;\n"
    "esac\n"
    KUBE_SWEEP_FN
    "wd() { trap 'kill $k 2>/dev/null; exit 0' TERM\n"
    "  sleep \"$w\" 2>/dev/null & k=$!; wait $k || { sleep \"${w%%.*}\" & k=$!; wait $k; }\n"
    "  : >\"$s.t\"; sweep \"$t\" KILL; }\n"
    "(wd) </dev/null >/dev/null 2>&1 &\n"
    "g=$!\n"
    "export " KUBE_EXEC_MARKER "=$t\n"
    /* A limit the pod refuses (above its hard limit) is refused, never
     * dropped: nothing runs, and the trailer says which (1 cpu, 2 fsize,
     * 3 nofile). */
    "u() { ulimit \"$1\" \"$2\" 2>/dev/null || { kill $g 2>/dev/null; r l:$3; exit 1; }; }\n"
    "[ \"$c\" -gt 0 ] && u -t \"$c\" 1\n"
    "[ \"$f\" -gt 0 ] && u -f \"$f\" 2\n"
    "[ \"$n\" -gt 0 ] && u -n \"$n\" 3\n"
    /* Without perl there is no process group of the command's own: "m"
     * tells the signal execs to signal what carries the marker. */
    "if command -v perl >/dev/null 2>&1; then"
    " R() { perl -e \"$P\" \"$s\" \"$(printf '\\036sbx:%s:' \"$t\")\" \"$@\"; };"
    " else R() { echo m >\"$s.g\"; printf '\\036sbx:%s:g:0\\n' \"$t\"; \"$@\"; }; fi\n"
    /* L=s: streamed stdin, the rest of the exec's own, to its CLOSE. */
    "if [ \"$L\" = s ]; then R \"$@\"; q=$?; elif [ \"$L\" -gt 0 ]; then head -c \"$L\" | R \"$@\"; q=$?;"
    " else R \"$@\" </dev/null; q=$?; fi\n"
    /* A watchdog that fired is left to finish its sweep. */
    "if [ -e \"$s.t\" ]; then wait $g; else kill $g 2>/dev/null; fi\n"
    "k=x:$q\n"
    "if [ -e \"$s.t\" ]; then k=t:0; elif [ -r \"$s\" ] && read -r a b <\"$s\"; then k=$a:$b; fi\n"
    "rm -f \"$s\" \"$s.t\" \"$s.g\" \"$s.n\"\n"
    "r \"$k\"\n"
    "exit $q\n";

/* ---- one run ---- */

struct stream {
    size_t hold;            /* bytes of a possible trailer start held back */
    char held[64];
    bool in_trailer;
    char trailer[40];
    size_t tlen;
    bool ended;             /* its trailer came */
};

struct run {
    struct kube_prov *p;
    const sbx_output_sink_v1 *sink;
    char marker[48];        /* "\036sbx:<token>:" */
    size_t mlen;
    struct stream st[3];
    struct kube_signals *sig;   /* told when the command runs (record g) */
    char kind;              /* from the trailer, 0 none */
    long num;
    bool stop_sink;
    unsigned char *status;
    size_t status_len;
    /* helper mode: collect stdout instead of a sink */
    bool collect;
    unsigned char *out;
    size_t out_len, out_max;
    bool out_over;
    char errtext[512];
    size_t errlen;
};

static int deliver(struct run *r, int ch, const char *b, size_t n)
{
    if (!n || r->stop_sink)
        return 0;
    if (r->collect) {
        if (ch == SBX_STREAM_STDERR) {
            size_t k = n < sizeof r->errtext - 1 - r->errlen ? n : sizeof r->errtext - 1 - r->errlen;
            memcpy(r->errtext + r->errlen, b, k);
            r->errlen += k;
            r->errtext[r->errlen] = '\0';
            return 0;
        }
        if (r->out_len + n > r->out_max) {
            r->out_over = true;
            return 1;
        }
        unsigned char *nb = realloc(r->out, r->out_len + n + 1);
        if (!nb)
            return 1;
        r->out = nb;
        memcpy(r->out + r->out_len, b, n);
        r->out_len += n;
        return 0;
    }
    /* The core's sink holds the output caps: past one it says stop. */
    if (r->sink && r->sink->write(r->sink->ud, ch, b, n)) {
        r->stop_sink = true;
        return 1;
    }
    return 0;
}

static void take_trailer(struct run *r, struct stream *s)
{
    s->trailer[s->tlen] = '\0';
    char kind = 0;
    long num = 0;
    int got = sscanf(s->trailer, "%c:%ld", &kind, &num);
    if (got == 2 && kind == 'g') {
        /* Not a trailer: the command runs, its signals may go. */
        if (r->sig)
            kube_signals_go(r->sig);
        return;
    }
    s->ended = true;
    if (got == 2 && !r->kind) {
        r->kind = kind;
        r->num = num;
    }
}

/* Output of one stream, the trailers taken out. */
static int feed(struct run *r, int ch, const char *b, size_t n)
{
    struct stream *s = &r->st[ch];
    if (!r->mlen)
        return deliver(r, ch, b, n);   /* a helper's output: no trailers */
    while (n > 0) {
        if (s->in_trailer) {
            char c = *b++;
            n--;
            if (c == '\n') {
                s->in_trailer = false;
                take_trailer(r, s);
            } else if (s->tlen < sizeof s->trailer - 1) {
                s->trailer[s->tlen++] = c;
            }
            continue;
        }
        if (s->hold) {
            if (*b == r->marker[s->hold]) {
                s->held[s->hold++] = *b++;
                n--;
                if (s->hold == r->mlen) {
                    s->hold = 0;
                    s->in_trailer = true;
                    s->tlen = 0;
                }
                continue;
            }
            /* Not ours: what was held is output after all. */
            size_t h = s->hold;
            s->hold = 0;
            if (deliver(r, ch, s->held, h))
                return 1;
            continue;
        }
        const char *m = memchr(b, '\036', n);
        size_t plain = m ? (size_t)(m - b) : n;
        if (plain && deliver(r, ch, b, plain))
            return 1;
        b += plain;
        n -= plain;
        if (m) {
            s->held[0] = *b++;
            n--;
            s->hold = 1;
        }
    }
    return 0;
}

static int on_data(void *ud, int channel, const unsigned char *buf, size_t len)
{
    struct run *r = ud;
    if (channel == 1 || channel == 2) {
        if (r->st[channel].ended)
            return 0;      /* what background processes write after the trailer */
        if (feed(r, channel, (const char *)buf, len))
            return 1;
        /* Both streams complete: the command's fate is known. */
        return r->mlen && r->st[1].ended && r->st[2].ended;
    }
    if (channel == 3 && r->status_len + len <= MAX_STATUS) {
        unsigned char *nb = realloc(r->status, r->status_len + len + 1);
        if (!nb)
            return 1;
        r->status = nb;
        memcpy(r->status + r->status_len, buf, len);
        r->status_len += len;
        r->status[r->status_len] = '\0';
    }
    return 0;
}

/* The exit code of a Status on channel 3: 0 Success, N NonZeroExitCode,
 * -1 another failure (its message in msg). */
static int status_code(struct run *r, char *msg, size_t cap)
{
    msg[0] = '\0';
    json_t *j = r->status_len ? json_loadb((const char *)r->status, r->status_len, 0, NULL) : NULL;
    const char *st = json_string_value(json_object_get(j, "status"));
    int code = -2;
    if (st && !strcmp(st, "Success")) {
        code = 0;
    } else if (st) {
        const char *m = json_string_value(json_object_get(j, "message"));
        snprintf(msg, cap, "%s", m ? m : "failure");
        code = -1;
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(json_object_get(j, "details"), "causes"), i, c) {
            const char *reason = json_string_value(json_object_get(c, "reason"));
            const char *num = json_string_value(json_object_get(c, "message"));
            if (reason && num && !strcmp(reason, "ExitCode"))
                code = atoi(num);
        }
    }
    json_decref(j);
    return code;
}

/* A streamed stdin on a protocol that cannot end it: refused, nothing
 * run (the command would never see the end of its input). */
static int no_stream(struct kube_prov *p, struct kube_sb *sb, const char *why)
{
    return p->host->set_error(p->h, SBX_E_NOTSUP, "sandbox %s: exec: streaming stdin needs the "
                              "v5.channel.k8s.io exec protocol (Kubernetes 1.30 or later), the "
                              "only one that can end a command's stdin, and %s; nothing was "
                              "run", sb->id, why);
}

/* An exec that never opened: say why (the pod's state when it has one). */
static int refused(struct kube_prov *p, struct kube_sb *sb, const struct kube_ws_res *res,
                   int rc, const char *what)
{
    kube_not_started(sb);
    pc_hints_retry_after(&sb->hints, res->retry_after_ms);
    if (res->no_stdin_close)
        return no_stream(p, sb, res->version == 4 ? "the API server chose v4.channel.k8s.io"
                                                  : "the API server chose channel.k8s.io");
    if (!res->http_status)
        return rc;
    if (res->http_status == 400 || res->http_status == 404) {
        int code;
        char *why = kube_pod_trouble(p, sb->pod, &code);
        if (why) {
            rc = p->host->set_error(p->h, code == SBX_E_NOT_FOUND ? SBX_E_NOT_FOUND : SBX_E_BACKEND,
                                    "sandbox %s: %s: %s", sb->id, what, why);
            free(why);
            return rc;
        }
    }
    char ctx[300];
    snprintf(ctx, sizeof ctx, "sandbox %s: %s", sb->id, what);
    return kube_status_error(p, ctx, res->http_status, NULL, 0, res->retry_after_ms);
}

/* One exec of @body with @args, @pieces after it on stdin, L = @l, then
 * what @stdin_fd (-1: none) gives to its end. */
static int run_program(struct kube_prov *p, struct kube_sb *sb, const char *body,
                       const char *const *args, size_t l, const struct kube_piece *pieces,
                       size_t n, uint64_t deadline_ns, int cancel_fd, int stdin_fd,
                       struct run *r, struct kube_ws_res *res)
{
    unsigned char *in = NULL;
    size_t in_len = 0;
    char *path = kube_exec_path(p, sb->pod);
    if (!path || kube_program(body, args, l, pieces, n, &in, &in_len)) {
        free(path);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    struct kube_ws_req rq = {.path = path, .stdin_data = in, .stdin_len = in_len,
                             .close_stdin = true, .version = p->exec_protocol,
                             .deadline_ns = deadline_ns, .cancel_fd = cancel_fd,
                             .stdin_fd = stdin_fd, .on_data = on_data, .ud = r};
    int rc = kube_ws_run(p, &rq, res);
    free(path);
    free(in);
    return rc;
}

int kube_run_helper(struct kube_prov *p, struct kube_sb *sb, const char *what, const char *body,
                    const char *const *args, const void *in, size_t in_len, size_t max,
                    unsigned char **out, size_t *out_len, int *code, char *errtext,
                    size_t errcap)
{
    struct run r = {.p = p, .collect = true, .out_max = max};
    struct kube_ws_res res;
    if (out)
        *out = NULL;
    *code = -1;
    uint64_t deadline = kube_now_ns() + (uint64_t)p->request_ms * 1000000u +
                        (uint64_t)in_len * 1000u;   /* and 1 s a MB */
    struct kube_piece piece = {in, in_len};
    int rc = run_program(p, sb, body, args, in_len, &piece, in ? 1 : 0, deadline, -1, -1, &r,
                         &res);
    if (rc) {
        rc = refused(p, sb, &res, rc, what);
        free(r.out);
        free(r.status);
        return rc;
    }
    char msg[300];
    int st = status_code(&r, msg, sizeof msg);
    if (r.out_over)
        rc = p->host->set_error(p->h, SBX_E_LIMIT, "sandbox %s: %s: more than %zu bytes of "
                                "output", sb->id, what, max);
    else if (res.timed_out)
        rc = p->host->set_error(p->h, SBX_E_TIMEOUT, "sandbox %s: %s took longer than %ld ms",
                                sb->id, what, p->request_ms);
    else if (st == -1)
        rc = p->host->set_error(p->h, SBX_E_BACKEND, "sandbox %s: %s: %s", sb->id, what, msg);
    else if (st == -2) {
        int tc;
        char *why = kube_pod_trouble(p, sb->pod, &tc);
        rc = p->host->set_error(p->h, why ? (tc == SBX_E_NOT_FOUND ? tc : SBX_E_BACKEND)
                                          : SBX_E_NETWORK,
                                "sandbox %s: %s: the exec stream ended without a status%s%s",
                                sb->id, what, why ? ": " : " (connection cut?)", why ? why : "");
        free(why);
    } else {
        *code = st;
    }
    if (errtext)
        snprintf(errtext, errcap, "%s", r.errtext);
    if (out && !rc) {
        *out = r.out;
        *out_len = r.out_len;
        r.out = NULL;
    }
    free(r.out);
    free(r.status);
    return rc;
}

int kube_run_quiet(struct kube_prov *p, struct kube_sb *sb, const char *body,
                   const char *const *args, uint64_t deadline_ns, int cancel_fd)
{
    struct run r = {.p = p, .collect = true, .out_max = 4096};
    struct kube_ws_res res;
    int rc = run_program(p, sb, body, args, 0, NULL, 0, deadline_ns, cancel_fd, -1, &r, &res);
    char msg[200];
    if (!rc && (res.cancelled || status_code(&r, msg, sizeof msg) != 0))
        rc = -1;
    free(r.out);
    free(r.status);
    return rc ? -1 : 0;
}

void kube_sweep(struct kube_prov *p, struct kube_sb *sb, const char *token)
{
    /* The sweep runs with no marker itself (a fresh shell of the container). */
    static const char body[] = KUBE_SWEEP_FN "sweep \"$1\" KILL; exit 0\n";
    const char *args[] = {token, NULL};
    if (kube_run_quiet(p, sb, body, args, kube_now_ns() + SWEEP_TIMEOUT_NS, -1))
        p->host->log(p->h, SBX_LOG_WARNING, "sandbox %s: could not sweep what a stopped exec "
                     "left running", sb->id);
}

/* ---- exec ---- */

static bool shell_name(const char *k)
{
    if (!k || !((*k >= 'A' && *k <= 'Z') || (*k >= 'a' && *k <= 'z') || *k == '_'))
        return false;
    for (const char *c = k + 1; *c; c++)
        if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
              *c == '_'))
            return false;
    return true;
}

/* The exec's files, put inline: their tars as pieces of stdin and a `put`
 * line each, between the wrapper's head and tail. */
struct inline_files {
    struct kube_piece *pieces;      /* the tars, then the command's stdin */
    size_t n;
    char *script;                   /* head + put lines + tail */
    char **paths;                   /* for messages */
};

static void inline_free(struct inline_files *f, size_t n_files)
{
    for (size_t i = 0; f->pieces && i < n_files; i++)
        free((void *)f->pieces[i].data);
    free(f->pieces);
    free(f->script);
    free(f->paths);
    memset(f, 0, sizeof *f);
}

static int append(char **s, size_t *len, const char *more)
{
    size_t n = strlen(more);
    char *ns = realloc(*s, *len + n + 1);
    if (!ns)
        return -1;
    memcpy(ns + *len, more, n + 1);
    *s = ns;
    *len += n;
    return 0;
}

/* @s single-quoted for sh. */
static char *sh_quote(const char *s)
{
    size_t n = 2;
    for (const char *c = s; *c; c++)
        n += *c == '\'' ? 4 : 1;
    char *q = malloc(n + 1), *o = q;
    if (!q)
        return NULL;
    *o++ = '\'';
    for (const char *c = s; *c; c++) {
        if (*c == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = *c;
        }
    }
    *o++ = '\'';
    *o = '\0';
    return q;
}

static int inline_files(struct kube_prov *p, const sbx_exec_spec_v1 *spec, struct inline_files *f)
{
    size_t len = 0;
    memset(f, 0, sizeof *f);
    f->pieces = calloc(spec->n_files + 1, sizeof *f->pieces);
    f->paths = calloc(spec->n_files + 1, sizeof *f->paths);
    if (!f->pieces || !f->paths || append(&f->script, &len, wrapper_head) ||
        (spec->n_files && append(&f->script, &len, kube_put_fn)))
        goto nomem;
    for (size_t i = 0; i < spec->n_files; i++) {
        const sbx_file_v1 *fl = &spec->files[i];
        char *dir, *base, m[16], line[2200];
        unsigned char *tar;
        size_t tar_len;
        int rc = kube_file_payload(p, fl->path, fl->data, fl->len, fl->mode, &dir, &base, m,
                                   &tar, &tar_len);
        if (rc) {
            inline_free(f, i);
            return rc;
        }
        f->pieces[i] = (struct kube_piece){tar, tar_len};
        f->paths[i] = (char *)fl->path;
        char *qd = sh_quote(dir), *qb = sh_quote(base);
        free(dir);
        free(base);
        int bad = !qd || !qb ||
                  snprintf(line, sizeof line, "put \"$W\" %s %s %s %zu || { e=$?; r f:$((%zu * 256 "
                           "+ e)); exit 1; }\n", qd, qb, m, tar_len, i) >= (int)sizeof line ||
                  append(&f->script, &len, line);
        free(qd);
        free(qb);
        if (bad) {
            inline_free(f, i + 1);
            return p->host->set_error(p->h, SBX_E_PATH, "file path '%s' is too long", fl->path);
        }
    }
    if (append(&f->script, &len, wrapper_tail))
        goto nomem;
    f->pieces[spec->n_files] = (struct kube_piece){spec->stdin_data,
                                                   spec->stdin_data ? spec->stdin_len : 0};
    f->n = spec->n_files + 1;
    return SBX_OK;
nomem:
    inline_free(f, spec->n_files);
    return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
}

/* The command's directory: the work directory, or cwd in it (or absolute). */
static int workdir_of(struct kube_prov *p, struct kube_sb *sb, const char *cwd, char **out)
{
    *out = NULL;
    if (!cwd || !*cwd || !strcmp(cwd, "."))
        *out = strdup(sb->workdir);
    else if (cwd[0] == '/')
        *out = strdup(cwd);
    else if (kube_path_check(p, cwd))
        return SBX_E_PATH;
    else if (asprintf(out, "%s/%s", sb->workdir, cwd) < 0)
        *out = NULL;
    return *out ? SBX_OK : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
}

/* The command's fate from what the run saw. */
static int outcome(struct kube_prov *p, struct kube_sb *sb, const sbx_exec_spec_v1 *spec,
                   struct run *r, const struct kube_ws_res *res, const char *token,
                   sbx_exec_outcome_v1 *out)
{
    char msg[300];
    int st = status_code(r, msg, sizeof msg);
    if (res->cancelled) {
        kube_sweep(p, sb, token);
        return p->host->set_error(p->h, SBX_E_CANCELLED, "sandbox %s: the exec was cancelled",
                                  sb->id);
    }
    if (r->stop_sink) {
        kube_sweep(p, sb, token);
        out->status = SBX_RUN_OUTPUT_LIMIT;
        out->exit_code = -1;
        out->signal = SIGKILL;
        return SBX_OK;
    }
    /* The fate counts once both streams are complete (each trailer comes
     * after all the command wrote to its stream); one trailer alone, and
     * the stream broke: what came of the other stream is lost. */
    char kind = r->st[SBX_STREAM_STDOUT].ended && r->st[SBX_STREAM_STDERR].ended ? r->kind : 0;
    switch (kind) {
    case 't':
        out->status = SBX_RUN_TIMEOUT;
        out->exit_code = -1;
        out->signal = SIGKILL;
        return SBX_OK;
    case 'x':
        out->exit_code = (int)r->num;
        out->status = r->num ? SBX_RUN_NONZERO_EXIT : SBX_RUN_OK;
        return SBX_OK;
    case 's':
        out->exit_code = -1;
        out->signal = (int)r->num;
        out->status = r->num == SIGXCPU ? SBX_RUN_CPU_LIMIT : SBX_RUN_SIGNAL;
        return SBX_OK;
    case 'n':
        out->exit_code = 127;
        out->status = SBX_RUN_NOT_FOUND;
        return SBX_OK;
    case 'e':
        out->exit_code = 126;
        out->status = SBX_RUN_NOT_EXECUTABLE;
        return SBX_OK;
    case 'd':
        return p->host->set_error(p->h, SBX_E_NOT_FOUND, "sandbox %s: exec: the directory "
                                  "'%s' does not exist", sb->id, spec->cwd ? spec->cwd : ".");
    case 'l': {
        static const char *const lim[] = {"cpu", "fsize", "nofile"};
        static const char *const opt[] = {"-t", "-f", "-n"};
        int i = r->num >= 1 && r->num <= 3 ? (int)r->num - 1 : 2;
        return p->host->set_error(p->h, SBX_E_PERM, "sandbox %s: exec: the pod cannot apply "
                                  "the %s limit (ulimit %s fails: above the container's "
                                  "hard limit?); nothing was run", sb->id, lim[i], opt[i]);
    }
    case 'f':
        return KUBE_FILE_FAILED;
    default:
        break;
    }
    if (res->timed_out) {
        kube_sweep(p, sb, token);
        p->host->log(p->h, SBX_LOG_WARNING, "sandbox %s: the exec's watchdog did not end it; "
                     "swept", sb->id);
        out->status = SBX_RUN_TIMEOUT;
        out->exit_code = -1;
        out->signal = SIGKILL;
        return SBX_OK;
    }
    /* No trailer: the wrapper never finished (the pod went, the stream
     * broke) or never ran (no /bin/sh in the image). */
    int tc, rc;
    char *why = kube_pod_trouble(p, sb->pod, &tc);
    if (why) {
        rc = p->host->set_error(p->h, tc == SBX_E_NOT_FOUND ? tc : SBX_E_BACKEND,
                                "sandbox %s: exec: %s", sb->id, why);
        free(why);
        return rc;
    }
    if (st == -1)
        return p->host->set_error(p->h, SBX_E_BACKEND, "sandbox %s: exec failed in the pod "
                                  "(does the image have /bin/sh?): %s", sb->id, msg);
    kube_sweep(p, sb, token);
    return p->host->set_error(p->h, SBX_E_NETWORK, "sandbox %s: exec: the stream ended before "
                              "the command's end%s", sb->id,
                              res->dropped ? " (the connection was cut)" : "");
}

/* The spec's signal_fd, -1 from a core before ABI 1.8 (a shorter spec). */
static int signal_fd_of(const sbx_exec_spec_v1 *spec)
{
    return spec->struct_size >= offsetof(sbx_exec_spec_v1, signal_fd) + sizeof spec->signal_fd
               ? spec->signal_fd
               : -1;
}

int kube_exec(struct kube_prov *p, struct kube_sb *sb, const sbx_exec_spec_v1 *spec,
              const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    if (!spec->argv || !spec->argv[0] || !spec->argv[0][0])
        return p->host->set_error(p->h, SBX_E_INVAL, "exec: empty command");
    for (size_t i = 0; i < spec->n_env; i++)
        if (!shell_name(spec->env[i].key))
            return p->host->set_error(p->h, SBX_E_INVAL, "exec: the environment name '%s' "
                                      "cannot be set by a POSIX shell (letters, digits and _, "
                                      "not starting with a digit)",
                                      spec->env[i].key ? spec->env[i].key : "");
    if (kube_ws_cancelled(spec->cancel_fd))
        return p->host->set_error(p->h, SBX_E_CANCELLED, "sandbox %s: the exec was cancelled "
                                  "before it began", sb->id);
    /* A streamed stdin ends with v5's CLOSE; v4 has no way to end it. */
    bool stream = spec->stdin_fd >= 0;
    if (stream && p->exec_protocol == 4)
        return no_stream(p, sb, "exec_protocol = v4 is set");
    uint64_t t0 = kube_now_ns();
    char *dir = NULL;
    struct inline_files files;
    int rc = workdir_of(p, sb, spec->cwd, &dir);
    if (rc)
        return rc;
    if ((rc = inline_files(p, spec, &files))) {
        free(dir);
        return rc;
    }
    char token[33];
    if (pc_random_hex(token, 16)) {
        inline_free(&files, spec->n_files);
        free(dir);
        return p->host->set_error(p->h, SBX_E_IO, "exec: no random bytes for the exec's token");
    }
    uint64_t tmo = spec->timeout_ns ? spec->timeout_ns : 1;
    char w[32], cpu[24], fsz[24], nof[24];
    snprintf(w, sizeof w, "%llu.%03llu", (unsigned long long)(tmo / 1000000000u),
             (unsigned long long)(tmo % 1000000000u / 1000000u));
    if (!strcmp(w, "0.000"))
        snprintf(w, sizeof w, "0.001");
    snprintf(cpu, sizeof cpu, "%llu", (unsigned long long)sb->cpu_s);
    snprintf(fsz, sizeof fsz, "%llu", (unsigned long long)((sb->fsize_bytes + 511) / 512));
    snprintf(nof, sizeof nof, "%llu", (unsigned long long)sb->nofile);
    size_t na = 0;
    while (spec->argv[na])
        na++;
    const char **args = calloc(9 + spec->n_env + 1 + na + 1, sizeof *args);
    char **envs = calloc(spec->n_env + 1, sizeof *envs);
    size_t k = 0;
    if (args && envs) {
        args[k++] = token;
        args[k++] = dir;
        args[k++] = w;
        args[k++] = cpu;
        args[k++] = fsz;
        args[k++] = nof;
        args[k++] = perl_run;
        args[k++] = sb->workdir;
        for (size_t i = 0; i < spec->n_env && !rc; i++) {
            if (asprintf(&envs[i], "%s=%s", spec->env[i].key,
                         spec->env[i].value ? spec->env[i].value : "") < 0) {
                envs[i] = NULL;
                rc = SBX_E_NOMEM;
            } else {
                args[k++] = envs[i];
            }
        }
        args[k++] = "--";
        for (size_t i = 0; i < na; i++)
            args[k++] = spec->argv[i];
        args[k] = NULL;
    } else {
        rc = SBX_E_NOMEM;
    }
    struct kube_signals sig = {.running = false};
    struct run r = {.p = p, .sink = sink, .sig = &sig};
    r.mlen = (size_t)snprintf(r.marker, sizeof r.marker, "\036sbx:%s:", token);
    struct kube_ws_res res;
    memset(&res, 0, sizeof res);
    uint64_t opened_at = kube_now_ns();
    uint64_t deadline = opened_at + tmo + EXEC_GRACE_NS;
    if (rc)
        rc = p->host->set_error(p->h, rc, "out of memory");
    else if ((rc = kube_signals_start(&sig, p, sb, token, signal_fd_of(spec), deadline)))
        ;
    else if ((rc = run_program(p, sb, files.script, args,
                               stream ? KUBE_L_STREAM : files.pieces[spec->n_files].len,
                               files.pieces, files.n, deadline, spec->cancel_fd,
                               stream ? spec->stdin_fd : -1, &r, &res)))
        rc = refused(p, sb, &res, rc, "exec");
    kube_signals_stop(&sig);
    uint64_t now = kube_now_ns();
    for (size_t i = 0; envs && i < spec->n_env; i++)
        free(envs[i]);
    free(envs);
    free(args);
    free(dir);
    if (!rc) {
        out->start_ns = opened_at - t0;
        out->exec_ns = now > opened_at ? now - opened_at : 1;
        rc = outcome(p, sb, spec, &r, &res, token, out);
    }
    if (rc == KUBE_FILE_FAILED) {
        /* A file could not be put: the command never ran. */
        size_t i = (size_t)r.num / 256;
        kube_not_started(sb);
        rc = kube_file_error(p, sb, "upload", i < spec->n_files ? spec->files[i].path : "?",
                             (int)(r.num % 256), r.errtext);
    }
    inline_free(&files, spec->n_files);
    free(r.status);
    return rc;
}
