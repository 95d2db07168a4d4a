/* plugins/common/setting-checks.c - checks of [settings] values that
 * several providers share (see setting-checks.h) */
#include "config.h"

#include <string.h>

#include "setting-checks.h"

bool pc_plain_name(const char *s, const char *extra)
{
    if (!s || !*s)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              strchr(extra, *s)))
            return false;
    return true;
}

const char *pc_check_http_url(const char *v)
{
    return strncmp(v, "http://", 7) && strncmp(v, "https://", 8) ? "is not an http(s) URL"
                                                                 : NULL;
}

const char *pc_check_workdir(const char *v)
{
    size_t n = strlen(v);

    while (n > 1 && v[n - 1] == '/')
        n--;
    return v[0] != '/' || n < 2 || strstr(v, "/..") || strstr(v, "/./") || strpbrk(v, "\n\r")
               ? "use an absolute directory other than /" : NULL;
}
