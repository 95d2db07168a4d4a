/* core/platform.c - image platforms (OS/ARCH[/VARIANT]) as OCI indexes
 * name them: the user's, this machine's, and whether an index entry is
 * one of them.
 *
 * Names are Go's (GOOS/GOARCH), as the OCI image spec says, normalised
 * as containerd does so that "aarch64", "arm64/v8" and "arm64" are one
 * platform, and "arm" alone is "arm/v7".  This machine's comes from
 * uname(2), at run time: the kernel, not the compiler, says what a root
 * can run.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "platform.h"

/* Fill @p from raw names, normalised; false when a part is too long. */
static bool set(core_platform *p, const char *os, size_t os_len, const char *arch,
                size_t arch_len, const char *variant, size_t variant_len)
{
    static const struct {
        const char *from, *arch, *variant;
    } alias[] = {
        { "x86_64", "amd64", NULL }, { "x86-64", "amd64", NULL },
        { "i386", "386", NULL }, { "i486", "386", NULL }, { "i586", "386", NULL },
        { "i686", "386", NULL }, { "aarch64", "arm64", NULL },
        { "armhf", "arm", "v7" }, { "armel", "arm", "v6" },
    };
    if (os_len >= sizeof p->os || arch_len >= sizeof p->arch ||
        variant_len >= sizeof p->variant)
        return false;
    memset(p, 0, sizeof *p);
    memcpy(p->os, os, os_len);
    memcpy(p->arch, arch, arch_len);
    memcpy(p->variant, variant, variant_len);
    for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
        if (strcmp(p->arch, alias[i].from) == 0) {
            memset(p->arch, 0, sizeof p->arch);
            snprintf(p->arch, sizeof p->arch, "%s", alias[i].arch);
            if (alias[i].variant && !p->variant[0])
                snprintf(p->variant, sizeof p->variant, "%s", alias[i].variant);
        }
    /* "8" and "v8" alike. */
    if (p->variant[0] >= '0' && p->variant[0] <= '9' && strlen(p->variant) + 1 < sizeof p->variant) {
        memmove(p->variant + 1, p->variant, strlen(p->variant) + 1);
        p->variant[0] = 'v';
    }
    if ((strcmp(p->arch, "arm64") == 0 && strcmp(p->variant, "v8") == 0) ||
        (strcmp(p->arch, "amd64") == 0 && strcmp(p->variant, "v1") == 0))
        memset(p->variant, 0, sizeof p->variant);   /* whole: platforms compare bytewise */
    if (strcmp(p->arch, "arm") == 0 && !p->variant[0])
        snprintf(p->variant, sizeof p->variant, "v7");
    return true;
}

static bool name_ok(const char *s, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
              s[i] == '-'))
            return false;
    return true;
}

bool core_platform_parse(const char *s, core_platform *p, const char **why)
{
    const char *a = strchr(s, '/');
    const char *v = a ? strchr(a + 1, '/') : NULL;
    size_t os_len = a ? (size_t)(a - s) : strlen(s);
    size_t arch_len = a ? (v ? (size_t)(v - a - 1) : strlen(a + 1)) : 0;
    size_t variant_len = v ? strlen(v + 1) : 0;

    if (!a || !name_ok(s, os_len) || !name_ok(a + 1, arch_len) ||
        (v && !name_ok(v + 1, variant_len))) {
        *why = "not OS/ARCH[/VARIANT] in lower-case letters, digits, '_' and '-' "
               "(e.g. linux/amd64, linux/arm64, linux/arm/v7)";
        return false;
    }
    if (!set(p, s, os_len, a + 1, arch_len, v ? v + 1 : "", variant_len)) {
        *why = "a part is too long";
        return false;
    }
    return true;
}

void core_platform_host(core_platform *p)
{
    struct utsname u;
    const char *m = uname(&u) == 0 ? u.machine : "unknown";
    const char *arch = m, *variant = "";

    /* uname's names that are not Go's; the rest (ppc64le, s390x,
     * riscv64, mips64) are the same in both. */
    if (strncmp(m, "armv", 4) == 0) {
        arch = "arm";
        /* armv8l is a 32-bit userland on a 64-bit CPU: it runs arm/v7. */
        variant = m[4] == '5' ? "v5" : m[4] == '6' ? "v6" : "v7";
    } else if (strcmp(m, "arm64") == 0) {
        arch = "arm64";
    } else if (strcmp(m, "loongarch64") == 0) {
        arch = "loong64";
    }
    if (!set(p, "linux", 5, arch, strlen(arch), variant, strlen(variant)))
        set(p, "linux", 5, "unknown", 7, "", 0);
}

bool core_platform_match(const core_platform *want, const char *os, const char *arch,
                         const char *variant)
{
    core_platform e;
    if (!os || !arch ||
        !set(&e, os, strlen(os), arch, strlen(arch), variant ?: "", strlen(variant ?: "")))
        return false;
    return strcmp(e.os, want->os) == 0 && strcmp(e.arch, want->arch) == 0 &&
           strcmp(e.variant, want->variant) == 0;
}

void core_platform_format(const core_platform *p, char *out, size_t len)
{
    snprintf(out, len, "%s/%s%s%s", p->os, p->arch, p->variant[0] ? "/" : "", p->variant);
}
