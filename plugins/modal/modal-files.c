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
