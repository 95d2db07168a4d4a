/* core/run/sandbox-files.c - listing a directory of a sandbox
 *
 * No op of the provider ABI lists files, and every provider runs
 * commands, so the listing is a command run in the sandbox: it sees what
 * the sandbox's code sees, under the sandbox's own confinement, on every
 * provider (out-of-tree ones too) without a new ABI slot.  Its output
 * comes from the sandbox and is parsed as hostile bytes: strict grammar,
 * capped entries and names (core_files_parse, fuzzed).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "run/files.h"

/* For each entry (sorted by the shell's glob): "MODEHEX SIZE MTIME\n"
 * from stat(1), lstat semantics, then the name and a NUL; names may hold
 * any byte but '/' and NUL, newlines included.  Entries after $2 stop
 * with the line "more\n".  Exit 3: no such directory. */
static const char list_script[] =
    "PATH=/usr/local/bin:/usr/bin:/bin:$PATH\n"
    "cd -- \"$1\" 2>/dev/null || exit 3\n"
    "n=0\n"
    "for f in * .[!.]* ..?*; do\n"
    "  [ -e \"$f\" ] || [ -h \"$f\" ] || continue\n"
    "  n=$((n+1))\n"
    "  if [ \"$n\" -gt \"$2\" ]; then echo more; exit 0; fi\n"
    "  stat -c '%f %s %Y' -- \"$f\" || exit 4\n"
    "  printf '%s\\0' \"$f\"\n"
    "done\n";

/* Time the listing may take: it forks stat once per entry. */
#define LIST_TIMEOUT_NS (60ull * 1000000000ull)
#define LIST_MAX 100000u
#define NAME_MAX_BYTES 255u

const char *sbx_file_type_name(sbx_file_type t)
{
    switch (t) {
    case SBX_FILE_REGULAR: return "file";
    case SBX_FILE_DIRECTORY: return "directory";
    case SBX_FILE_SYMLINK: return "symlink";
    case SBX_FILE_OTHER: return "other";
    }
    return "other";
}

/* Digits of [*p, end) up to @stop, into *v (at most 20 digits, base 16 or
 * 10); false when there are none, too many, or another byte. */
static bool number(const char **p, const char *end, char stop, int base, uint64_t *v)
{
    const char *s = *p;
    uint64_t x = 0;
    size_t n = 0;

    for (; s < end && *s != stop; s++, n++) {
        int d;
        if (*s >= '0' && *s <= '9')
            d = *s - '0';
        else if (base == 16 && *s >= 'a' && *s <= 'f')
            d = *s - 'a' + 10;
        else
            return false;
        if (n == (base == 16 ? 8u : 19u))
            return false;
        x = x * (uint64_t)base + (uint64_t)d;
    }
    if (n == 0 || s == end)
        return false;
    *v = x;
    *p = s + 1;
    return true;
}

static sbx_file_type type_of(uint64_t mode)
{
    switch (mode & 0170000u) {
    case 0100000u: return SBX_FILE_REGULAR;
    case 0040000u: return SBX_FILE_DIRECTORY;
    case 0120000u: return SBX_FILE_SYMLINK;
    default: return SBX_FILE_OTHER;
    }
}

int core_files_parse(const char *buf, size_t len, size_t max, sbx_file_cb cb, void *ud,
                     bool *more, bool *bad, size_t *bad_at)
{
    const char *p = buf, *end = buf + len;
    size_t n = 0;

    *more = *bad = false;
    *bad_at = 0;
    while (p < end) {
        const char *start = p, *name;
        uint64_t mode, size, mtime;
        size_t nl;
        int rc;

        if ((size_t)(end - p) == 5 && !memcmp(p, "more\n", 5)) {
            *more = true;
            return SBX_OK;
        }
        if (n == max || !number(&p, end, ' ', 16, &mode) || !number(&p, end, ' ', 10, &size) ||
            !number(&p, end, '\n', 10, &mtime) || mtime > INT64_MAX) {
            *bad = true;
            *bad_at = (size_t)(start - buf);
            return SBX_OK;
        }
        name = p;
        nl = strnlen(name, (size_t)(end - name));
        if (name + nl == end || nl == 0 || nl > NAME_MAX_BYTES || memchr(name, '/', nl) ||
            (nl == 1 && name[0] == '.') || (nl == 2 && name[0] == '.' && name[1] == '.')) {
            *bad = true;
            *bad_at = (size_t)(name - buf);
            return SBX_OK;
        }
        p = name + nl + 1;
        n++;
        if ((rc = cb(ud, name, nl, type_of(mode), size, (int64_t)mtime)) != 0)
            return rc;
    }
    return SBX_OK;
}

/* @dir: "" or ".", else relative with no "..", "." or empty part. */
static bool dir_ok(const char *dir)
{
    if (*dir == '/')
        return false;
    if (!*dir || !strcmp(dir, "."))
        return true;
    for (const char *s = dir; *s;) {
        size_t n = strcspn(s, "/");
        if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
            return false;
        s += n;
        if (*s)
            s++;
    }
    return true;
}

int sbx_sandbox_list_files(sbx_sandbox *sb, const char *dir, size_t max, sbx_file_cb cb,
                           void *ud, bool *truncated)
{
    char maxs[24];
    const char *argv[] = { "/bin/sh", "-c", list_script, "sh", NULL, maxs, NULL };
    sbx_exec_opts *x;
    sbx_result *res = NULL;
    const char *out;
    size_t len, bad_at;
    bool more = false, bad = false;
    int rc;

    core_error_clear();
    if (truncated)
        *truncated = false;
    if (!sb || !dir || !cb || max == 0 || max > LIST_MAX)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_sandbox_list_files: NULL argument or "
                              "max not in 1..%u", LIST_MAX);
    if (!dir_ok(dir))
        return core_error_set(SBX_E_PATH, NULL, "directory '%s': it must be relative to the "
                              "sandbox's work directory, without '..', '.' or empty parts", dir);
    argv[4] = *dir ? dir : ".";
    snprintf(maxs, sizeof maxs, "%zu", max);
    if (!(x = sbx_exec_opts_new()))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    if ((rc = sbx_exec_opts_set_argv(x, argv)) != SBX_OK ||
        (rc = sbx_exec_opts_set_timeout(x, LIST_TIMEOUT_NS)) != SBX_OK ||
        (rc = sbx_sandbox_exec(sb, x, &res)) != SBX_OK)
        goto out;
    if (sbx_result_status(res) == SBX_RUN_SANDBOX_ERROR) {
        rc = core_error_set(sbx_result_error_code(res) ? sbx_result_error_code(res)
                                                       : SBX_E_BACKEND,
                            sbx_sandbox_provider(sb), "listing '%s' in sandbox %s: %s", argv[4],
                            sbx_sandbox_id(sb),
                            sbx_result_error(res) ? sbx_result_error(res) : "sandbox error");
        goto out;
    }
    if (sbx_result_status(res) == SBX_RUN_NONZERO_EXIT && sbx_result_exit_code(res) == 3) {
        rc = core_error_set(SBX_E_NOT_FOUND, sbx_sandbox_provider(sb),
                            "no directory '%s' in sandbox %s", argv[4], sbx_sandbox_id(sb));
        goto out;
    }
    if (sbx_result_status(res) != SBX_RUN_OK) {
        rc = core_error_set(SBX_E_BACKEND, sbx_sandbox_provider(sb),
                            "listing '%s' in sandbox %s failed (%s, exit %d): the sandbox "
                            "needs /bin/sh and stat(1)", argv[4], sbx_sandbox_id(sb),
                            sbx_run_status_name(sbx_result_status(res)),
                            sbx_result_exit_code(res));
        goto out;
    }
    out = sbx_result_stdout(res, &len);
    rc = core_files_parse(out ? out : "", out ? len : 0, max, cb, ud, &more, &bad, &bad_at);
    if (rc == SBX_OK && bad && sbx_result_stdout_truncated(res) && bad_at > 0) {
        /* The output cap cut the last entry: what came before is sound. */
        rc = SBX_OK;
        more = true;
    } else if (rc == SBX_OK && bad) {
        rc = core_error_set(SBX_E_BACKEND, sbx_sandbox_provider(sb),
                            "the listing of '%s' in sandbox %s is malformed at byte %zu",
                            argv[4], sbx_sandbox_id(sb), bad_at);
    }
    if (truncated)
        *truncated = more;
out:
    sbx_result_free(res);
    sbx_exec_opts_free(x);
    return rc;
}
