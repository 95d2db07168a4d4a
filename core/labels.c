/* core/labels.c - the labels the core puts on every sandbox, and lookups
 *
 * Every sandbox the core creates carries polysandbox.owner (UID@HOST of
 * the creating process) and polysandbox.created (Unix seconds); with a
 * time-to-live polysandbox.expires (Unix seconds), with a template
 * polysandbox.template, and when it outlives its creator
 * polysandbox.persistent = 1.  sbx_gc and sbx_sandbox_get_or_create find
 * sandboxes by them.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <polysandbox/provider.h>

#include "labels.h"

void core_owner(char *buf, size_t size)
{
    char host[256] = "localhost";

    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    snprintf(buf, size, "%lu@%s", (unsigned long)getuid(), host);
}

const char *core_label_value(const char *const *labels, size_t n, const char *key)
{
    size_t kl = strlen(key);

    for (size_t i = 0; i < n; i++)
        if (labels[i] && !strncmp(labels[i], key, kl) && labels[i][kl] == '=')
            return labels[i] + kl + 1;
    return NULL;
}

const char *core_kv_value(const sbx_kv_v1 *kv, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (kv[i].key && !strcmp(kv[i].key, key))
            return kv[i].value ? kv[i].value : "";
    return NULL;
}

bool core_kv_includes(const sbx_kv_v1 *kv, size_t n, const sbx_kv_v1 *want, size_t n_want)
{
    for (size_t i = 0; i < n_want; i++) {
        const char *v = core_kv_value(kv, n, want[i].key);
        if (!v || strcmp(v, want[i].value ? want[i].value : ""))
            return false;
    }
    return true;
}

bool core_label_expired(const char *expires, long long now)
{
    char *end;
    long long e;

    if (!expires)
        return false;
    e = strtoll(expires, &end, 10);
    return end != expires && !*end && e <= now;
}
