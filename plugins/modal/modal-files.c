/* plugins/modal/modal-files.c - files in and out of a sandbox, through exec
 *
 * Modal has no plain file API a sandbox's files can go through (its
 * filesystem RPCs are for mounts and snapshots), so, as its SDKs' own
 * file helpers do, files go through commands: stdin and stdout of an
 * exec carry bytes unchanged.  A small POSIX sh script, run in the work
 * directory, walks the relative path one component at a time and refuses
 * any symbolic link on the way (the sandbox's code may have planted one),
 * then writes through a temporary file renamed into place, or reads a
 * regular file no larger than asked.  Paths reach the script as arguments,
 * never inside its text.
 *
 * An exec costs several round trips (start, stdin, two output streams,
 * wait) and a process in the sandbox, so the files of a command, when
 * they are small and hold no NUL byte, ride in the command's own exec as
 * arguments (bounded well under Linux's 128 KiB per argument and 2 MiB in
 * all); others go one exec each on stdin, before it.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modal-int.h"
#include "shwrap.h"

#define FILE_TIMEOUT_MS 120000L

/* Sets c to ./$1 walking it; exits 3 on a link.  With $mk, makes missing
 * directories on the way. */
#define WALK                                                                      \
    "c=.; r=$1\n"                                                                 \
    "while :; do\n"                                                               \
    "  case $r in */*) h=${r%%/*}; r=${r#*/};; *) h=$r; r=;; esac\n"              \
    "  c=$c/$h\n"                                                                 \
    "  [ -L \"$c\" ] && exit 3\n"                                                 \
    "  [ -z \"$r\" ] && break\n"                                                  \
    "  if [ -n \"$mk\" ] && [ ! -e \"$c\" ]; then mkdir -- \"$c\" 2>/dev/null || " \
    "{ [ -L \"$c\" ] && exit 3; }; fi\n"                                          \
    "  [ -L \"$c\" ] && exit 3\n"                                                 \
    "  [ -d \"$c\" ] || exit 5\n"                                                 \
    "done\n"

static const char upload_script[] =
    "mk=1\n" WALK
    "[ -d \"$c\" ] && exit 6\n"
    "t=\"${c%/*}/.sbx-up.$$\"\n"
    "cat >\"$t\" || { rm -f -- \"$t\"; exit 4; }\n"
    "chmod \"$2\" \"$t\" && mv -f -- \"$t\" \"$c\" || { rm -f -- \"$t\"; exit 4; }\n"
    "exit 0\n";

static const char download_script[] =
    "mk=\n" WALK
    "[ -e \"$c\" ] || exit 5\n"
    "[ -f \"$c\" ] || exit 6\n"
    "n=$(wc -c <\"$c\") || exit 4\n"
    "[ \"$n\" -gt \"$2\" ] && { echo \"$n\" >&2; exit 7; }\n"
    "exec cat -- \"$c\"\n";

/* The files, then the command, in one exec: `sh -c PRELUDE sbx NONCE DIR
 * N (PATH MODE BYTES)... ARGV...`, started in the work directory.  The
 * files are written there as upload_script does, then the shell becomes
 * the command in DIR (relative to the work directory: the files may make
 * it).  A failure writes "NONCE CODE INDEX" first on stderr, which the
 * caller takes out of the stream, and the command never runs.  What the
 * container runtime says of a command it cannot execute is said here in
 * its words (exit 127 or 126), as the shell's own would differ. */
static const char prelude_script[] =
    "z=$1; d=$2; k=$3; shift 3\n"
    "i=0\n"
    "while [ \"$i\" -lt \"$k\" ]; do\n"
    "  ( mk=1\n" WALK
    "  [ -d \"$c\" ] && exit 6\n"
    "  t=\"${c%/*}/.sbx-up.$$.$i\"\n"
    "  printf %s \"$3\" >\"$t\" || { rm -f -- \"$t\"; exit 4; }\n"
    "  chmod \"$2\" \"$t\" && mv -f -- \"$t\" \"$c\" || { rm -f -- \"$t\"; exit 4; }\n"
    "  exit 0 ) 2>/dev/null; e=$?\n"
    "  [ \"$e\" = 0 ] || { echo \"$z $e $i\" >&2; exit 1; }\n"
    "  i=$((i+1)); shift 3\n"
    "done\n"
    "cd -- \"$d\" 2>/dev/null || { echo \"$z 8 0\" >&2; exit 1; }\n"
    "case $1 in */*) f=$1;; *) f=$(command -v -- \"$1\") || f=;; esac\n"
    "case $f in\n"
    "'') printf 'exec: \"%s\": executable file not found in $PATH\\n' \"$1\" >&2; exit 127;;\n"
    "*/*) if [ ! -e \"$f\" ]; then\n"
    "  printf 'exec: \"%s\": executable file not found in $PATH\\n' \"$1\" >&2; exit 127\n"
    "elif [ -d \"$f\" ] || [ ! -x \"$f\" ]; then\n"
    "  printf 'exec: \"%s\": permission denied\\n' \"$1\" >&2; exit 126; fi;;\n"
    "esac\n"
    "exec \"$@\"\n";

/* What may ride as arguments: each file, all of them, how many. */
#define ARG_FILE_MAX (64u * 1024)
#define ARG_BATCH_MAX (512u * 1024)
#define ARG_BATCH_FILES 64

static int file_error(struct modal_prov *p, struct modal_sb *sb, const char *op,
                      const char *path, int code, const char *why)
{
    switch (code) {
    case 3:
        return p->host->set_error(p->h, SBX_E_PATH, "%s %s: '%s' goes through a symbolic link "
                                  "in the sandbox: refused", op, sb->id, path);
    case 5:
        return p->host->set_error(p->h, SBX_E_NOT_FOUND, "%s %s: no file '%s' in the sandbox",
                                  op, sb->id, path);
    case 6:
        return p->host->set_error(p->h, SBX_E_INVAL, "%s %s: '%s' is not a regular file", op,
                                  sb->id, path);
    default:
        return p->host->set_error(p->h, SBX_E_IO, "%s %s: '%s': the sandbox's shell failed "
                                  "(exit %d)%s%.200s", op, sb->id, path, code, *why ? ": " : "",
                                  why);
    }
}

static void trim(char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
            s[i] = ' ';
    while (n > 0 && s[n - 1] == ' ')
        s[--n] = '\0';
}

int modal_upload(struct modal_prov *p, struct modal_sb *sb, const char *path, const void *data,
                 size_t len, uint32_t mode)
{
    if (!sw_path_ok(path))
        return p->host->set_error(p->h, SBX_E_PATH, "upload %s: '%s' is not a relative path "
                                  "without '..'", sb->id, path ? path : "(null)");
    char m[16], why[256];
    snprintf(m, sizeof m, "%o", (unsigned)(mode & 07777));
    const char *argv[] = {"/bin/sh", "-c", upload_script, "sbx", path, m, NULL};
    int code;
    int rc = modal_run(p, sb, argv, data, len, 0, FILE_TIMEOUT_MS, NULL, NULL, why, sizeof why,
                       &code);
    if (rc)
        return rc;
    trim(why);
    return code ? file_error(p, sb, "upload", path, code, why) : SBX_OK;
}

int modal_download(struct modal_prov *p, struct modal_sb *sb, const char *path, size_t max,
                   void **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    if (!sw_path_ok(path))
        return p->host->set_error(p->h, SBX_E_PATH, "download %s: '%s' is not a relative path "
                                  "without '..'", sb->id, path ? path : "(null)");
    char m[32], why[256];
    snprintf(m, sizeof m, "%zu", max);
    const char *argv[] = {"/bin/sh", "-c", download_script, "sbx", path, m, NULL};
    char *buf = NULL;
    size_t n = 0;
    int code;
    int rc = modal_run(p, sb, argv, NULL, 0, max, FILE_TIMEOUT_MS, &buf, &n, why, sizeof why,
                       &code);
    if (rc)
        return rc;
    trim(why);
    if (code == 7 || (code == 0 && n > max)) {
        free(buf);
        return p->host->set_error(p->h, SBX_E_LIMIT, "download %s: '%s' is larger than %zu "
                                  "bytes%s%s", sb->id, path, max, *why ? ": " : "", why);
    }
    if (code) {
        free(buf);
        return file_error(p, sb, "download", path, code, why);
    }
    void *out = p->host->alloc(n ? n : 1);
    if (!out) {
        free(buf);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    memcpy(out, buf, n);
    free(buf);
    *data = out;
    *len = n;
    return SBX_OK;
}

static bool arg_fit(const sbx_file_v1 *f)
{
    return f->len <= ARG_FILE_MAX && (!f->len || !memchr(f->data, 0, f->len));
}

bool modal_files_fit(const sbx_file_v1 *files, size_t n, const char *cwd)
{
    size_t total = 0;
    if (n > ARG_BATCH_FILES || (cwd && (cwd[0] == '/' || cwd[0] == '-')))
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!sw_path_ok(files[i].path) || !arg_fit(&files[i]))
            return false;
        total += files[i].len + strlen(files[i].path);
    }
    return total <= ARG_BATCH_MAX;
}

char **modal_prelude_argv(const sbx_file_v1 *files, size_t n, const char *const *argv,
                          const char *nonce, const char *cwd)
{
    size_t argc = 0, bytes = 0;
    while (argv[argc])
        argc++;
    for (size_t i = 0; i < n; i++)
        bytes += files[i].len + 1 + 16;
    bytes += 24;             /* n */
    size_t slots = 7 + 3 * n + argc + 1;
    char **v = malloc(slots * sizeof *v + bytes);
    if (!v)
        return NULL;
    char *at = (char *)(v + slots);
    size_t k = 0;
    v[k++] = (char *)"/bin/sh";
    v[k++] = (char *)"-c";
    v[k++] = (char *)prelude_script;
    v[k++] = (char *)"sbx";
    v[k++] = (char *)nonce;
    v[k++] = (char *)(cwd && *cwd ? cwd : ".");
    v[k] = at;
    at += snprintf(at, 24, "%zu", n) + 1;
    k++;
    for (size_t i = 0; i < n; i++) {
        v[k++] = (char *)files[i].path;
        v[k++] = at;
        at += snprintf(at, 16, "%o", (unsigned)(files[i].mode & 07777)) + 1;
        v[k++] = at;
        if (files[i].len)
            memcpy(at, files[i].data, files[i].len);
        at[files[i].len] = '\0';
        at += files[i].len + 1;
    }
    for (size_t i = 0; i < argc; i++)
        v[k++] = (char *)argv[i];
    v[k] = NULL;
    return v;
}

int modal_prelude_failed(struct modal_prov *p, struct modal_sb *sb, const sbx_file_v1 *files,
                         size_t n, const char *report)
{
    char *end;
    long code = strtol(report, &end, 10);
    unsigned long at = end != report ? strtoul(end, &end, 10) : n;
    char why[256];
    snprintf(why, sizeof why, "%s", end);
    trim(why);
    if (code == 8)
        return p->host->set_error(p->h, SBX_E_INVAL, "exec %s: the command's directory does "
                                  "not exist in the sandbox", sb->id);
    return file_error(p, sb, "upload", at < n ? files[at].path : "(one of the files)",
                      code > 0 && code < 256 ? (int)code : 4, why);
}
