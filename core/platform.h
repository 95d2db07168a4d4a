/* core/platform.h - image platforms (core/platform.c)
 */
#ifndef POLYSANDBOX_PLATFORM_H
#define POLYSANDBOX_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>

/* An image platform as an OCI index names one, in Go's names, normalised
 * ("aarch64" is arm64, arm64's "v8" is no variant, "arm" is arm/v7). */
typedef struct core_platform {
    char os[32];
    char arch[32];
    char variant[16]; /* "" for none */
} core_platform;

/* Parse "OS/ARCH[/VARIANT]" into @p; false with a reason in @why. */
bool core_platform_parse(const char *s, core_platform *p, const char **why);
/* This machine's: linux and uname(2)'s machine in Go's names. */
void core_platform_host(core_platform *p);
/* Is an index entry's platform (@os, @arch, @variant: each may be NULL)
 * @want, once normalised? */
bool core_platform_match(const core_platform *want, const char *os, const char *arch,
                         const char *variant);
/* "OS/ARCH" or "OS/ARCH/VARIANT" into @out. */
void core_platform_format(const core_platform *p, char *out, size_t len);

#endif /* POLYSANDBOX_PLATFORM_H */
