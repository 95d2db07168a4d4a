/* core/path-check.c - the rule for a path inside a work directory
 *
 * One rule for every provider's upload and download (host->path_check)
 * and the test host: relative, bounded, no empty, "." or ".." part, no
 * control character.  The message names the path with its control
 * characters escaped, since it goes to a terminal as is.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

#include "path-check.h"

/* @path quoted for a message: at most 200 bytes, control bytes as \xNN. */
static void quote(const char *path, char *out, size_t size)
{
    size_t o = 0;

    for (size_t i = 0; i < 200 && path[i] && o + 5 < size; i++) {
        unsigned char c = (unsigned char)path[i];
        if (c < 0x20 || c == 0x7f)
            o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
        else
            out[o++] = (char)c;
    }
    out[o] = '\0';
}

int core_path_check(const char *path, char *msg, size_t size)
{
    size_t len = path ? strlen(path) : 0;
    char shown[1024];
    const char *why = NULL;
    unsigned depth = 0;

    if (len == 0) {
        snprintf(msg, size, "empty file path");
        return SBX_E_PATH;
    }
    if (len >= SBX_PATH_MAX) {
        snprintf(msg, size, "file path too long (%zu bytes, at most %d)", len,
                 SBX_PATH_MAX - 1);
        return SBX_E_PATH;
    }
    if (path[0] == '/')
        why = "is absolute; paths are relative to the work directory";
    for (const char *s = path; !why;) {
        size_t n = strcspn(s, "/");

        if (n == 2 && s[0] == '.' && s[1] == '.')
            why = "contains '..'";
        else if (n == 0 || (n == 1 && s[0] == '.'))
            why = "has an empty or '.' component";
        else if (++depth > SBX_PATH_DEPTH_MAX)
            why = "is too deep";
        for (size_t i = 0; !why && i < n; i++)
            if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
                why = "holds a control character";
        if (!s[n])
            break;
        s += n + 1;
    }
    if (!why)
        return SBX_OK;
    quote(path, shown, sizeof shown);
    snprintf(msg, size, "file path '%s' %s", shown, why);
    return SBX_E_PATH;
}

int sbx_path_check(const char *path, char *msg, size_t size)
{
    char local[1];
    /* the rule writes its message whatever happens: give it somewhere */
    return core_path_check(path, msg && size ? msg : local, msg && size ? size : sizeof local);
}
