/* core/loader/validate.c - the loader's checks of a provider's descriptor
 *
 * Pure: each check reads the descriptor (and the provider's configured
 * settings) it is given and says what is wrong in a verdict, touching no
 * module, no context and no global state, so tests/unit/test-validate.c
 * runs every check on descriptors made in memory.  The loader
 * (core/loader/open.c) runs them in the order of provider.h and records
 * the first verdict that is not SBX_OK.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

#include "loader/validate.h"
#include "settings-read.h"

/* The ABI 1.0 minimum sizes.  Later minors append after these, so these
 * stay the 1.0 figures forever (do not replace them with sizeof). */
#define DESC_MIN_SIZE offsetof(sbx_provider_v1, reserved)
#define OPS_MIN_SIZE (offsetof(sbx_provider_ops_v1, doctor) + \
                      sizeof(((sbx_provider_ops_v1 *)0)->doctor))
#define DESC_HEADER_SIZE offsetof(sbx_provider_v1, name)

static void verdict_clear(core_verdict *v)
{
    v->code = SBX_OK;
    v->message = NULL;
    v->located = false;
}

/* Fail the check with @code and a message; SBX_E_NOMEM when the message
 * could not be allocated (the code is set all the same). */
static int verdict(core_verdict *v, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int verdict(core_verdict *v, int code, const char *fmt, ...)
{
    va_list ap;
    int n;

    v->code = code;
    v->located = false;
    va_start(ap, fmt);
    n = vasprintf(&v->message, fmt, ap);
    va_end(ap);
    if (n < 0) {
        v->message = NULL;
        return SBX_E_NOMEM;
    }
    return SBX_OK;
}

bool core_provider_name_valid(const char *s, size_t len)
{
    if (len == 0 || len > CORE_PROVIDER_NAME_MAX)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    }
    return true;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Is @key in the NULL-terminated @keys (may be NULL)? */
static bool key_listed(const char *const *keys, const char *key)
{
    for (size_t i = 0; keys && keys[i]; i++)
        if (!strcmp(keys[i], key))
            return true;
    return false;
}

/* A sealed value for a key that is not a credential. */
static int reject_sealed(const sbx_provider_v1 *d, const char *name, const core_setting *s,
                         core_verdict *v)
{
    char *creds = NULL;
    size_t clen = 0;
    FILE *f = open_memstream(&creds, &clen);
    int rc;

    if (!f)
        return SBX_E_NOMEM;
    for (size_t k = 0; d->secret_keys && d->secret_keys[k]; k++)
        fprintf(f, "%s%s", k ? ", " : "", d->secret_keys[k]);
    if (!d->secret_keys || !d->secret_keys[0])
        fputs("none", f);
    if (fclose(f) != 0) {
        free(creds);
        return SBX_E_NOMEM;
    }
    v->code = SBX_E_CONFIG;
    v->located = true;
    rc = asprintf(&v->message, "%s:%d: '%s' of provider '%s' holds a sealed value but is "
                  "not a credential, and only credentials are opened (credentials: %s)",
                  s->file, s->line, s->key, name, creds);
    free(creds);
    if (rc < 0) {
        v->message = NULL;
        return SBX_E_NOMEM;
    }
    return SBX_OK;
}

int core_validate_settings(const sbx_provider_v1 *d, const char *name,
                           const core_setting *settings, size_t n_settings, core_verdict *v)
{
    const char *const *keys = d->config_keys;

    verdict_clear(v);
    for (size_t i = 0; settings && i < n_settings; i++) {
        const core_setting *s = &settings[i];
        char *accepted = NULL;
        size_t alen = 0;
        FILE *f;
        bool any = false;
        int rc;

        /* the core's own (config-providers.c), whoever declares it */
        if (key_listed(d->secret_keys, s->key) || !strcmp(s->key, "unenforced_limits"))
            continue;
        if (key_listed(keys, s->key)) {
            /* Only credentials are opened: a sealed value anywhere else
             * would reach the provider as the sealed text. */
            if (strncmp(s->value, "sealed:", 7) == 0)
                return reject_sealed(d, name, s, v);
            continue;
        }
        f = open_memstream(&accepted, &alen);
        if (!f)
            return SBX_E_NOMEM;
        for (size_t k = 0; keys && keys[k]; k++, any = true)
            fprintf(f, "%s%s", any ? ", " : "", keys[k]);
        for (size_t k = 0; d->secret_keys && d->secret_keys[k]; k++) {
            if (key_listed(keys, d->secret_keys[k]))
                continue;
            fprintf(f, "%s%s", any ? ", " : "", d->secret_keys[k]);
            any = true;
        }
        if (!any)
            fputs("none", f);
        if (fclose(f) != 0) {
            free(accepted);
            return SBX_E_NOMEM;
        }
        /* The message starts with FILE:LINE of the setting, not the .so. */
        v->code = SBX_E_CONFIG;
        v->located = true;
        if (s->line > 0)
            rc = asprintf(&v->message,
                          "%s:%d: unknown key '%s' for provider '%s' (accepted: %s)",
                          s->file, s->line, s->key, name, accepted);
        else
            rc = asprintf(&v->message,
                          "%s: unknown key '%s' for provider '%s' (accepted: %s)",
                          s->file, s->key, name, accepted);
        free(accepted);
        if (rc < 0) {
            v->message = NULL;
            return SBX_E_NOMEM;
        }
        return SBX_OK;
    }
    return SBX_OK;
}

int core_validate_ops(const sbx_provider_v1 *d, const sbx_provider_ops_v1 *o,
                      core_verdict *v)
{
    static const struct {
        size_t off;
        const char *name;
    } mandatory[] = {
        {offsetof(sbx_provider_ops_v1, init), "init"},
        {offsetof(sbx_provider_ops_v1, fini), "fini"},
        {offsetof(sbx_provider_ops_v1, create), "create"},
        {offsetof(sbx_provider_ops_v1, exec), "exec"},
        {offsetof(sbx_provider_ops_v1, destroy), "destroy"},
    };
    uint64_t caps = d->capabilities;
    const struct {
        uint64_t bit;
        const char *cap;
        bool first, second;
        const char *op1, *op2;
    } pairs[] = {
        {SBX_CAP_FILES, "files", o->upload != NULL, o->download != NULL,
         "upload", "download"},
        {SBX_CAP_PERSISTENT, "persistent", o->attach != NULL, o->release != NULL,
         "attach", "release"},
        {SBX_CAP_LIST, "list", o->list != NULL, true, "list", NULL},
        /* 1.12 moved the zygote into the exec spec: no op to pair. */
        {SBX_CAP_ZYGOTE, "zygote",
         d->abi_minor >= 12 ? (caps & SBX_CAP_ZYGOTE) != 0 : o->exec_zygote != NULL, true,
         "exec_zygote", NULL},
    };

    verdict_clear(v);
    for (size_t i = 0; i < sizeof mandatory / sizeof mandatory[0]; i++) {
        void (*fn)(void);
        memcpy(&fn, (const char *)o + mandatory[i].off, sizeof fn);
        if (!fn)
            return verdict(v, SBX_E_LOAD_MISSING_OP,
                          "mandatory op '%s' is NULL", mandatory[i].name);
    }
    /* The cancel capability has no op: the exec spec's cancel_fd, which a
     * provider built before ABI 1.3 does not know. */
    if ((caps & SBX_CAP_CANCEL) && d->abi_minor < 3)
        return verdict(v, SBX_E_LOAD_CAPS,
                      "capabilities claim 'cancel' but the provider was built against ABI "
                      "1.%u, whose exec spec has no cancel_fd (1.3 has)",
                      (unsigned)d->abi_minor);
    if ((caps & SBX_CAP_STDIN_STREAM) && d->abi_minor < 4)
        return verdict(v, SBX_E_LOAD_CAPS,
                      "capabilities claim 'stdin_stream' but the provider was built against "
                      "ABI 1.%u, whose exec spec has no stdin_fd (1.4 has)",
                      (unsigned)d->abi_minor);
    if ((caps & SBX_CAP_SIGNAL) && d->abi_minor < 8)
        return verdict(v, SBX_E_LOAD_CAPS,
                      "capabilities claim 'signal' but the provider was built against "
                      "ABI 1.%u, whose exec spec has no signal_fd (1.8 has)",
                      (unsigned)d->abi_minor);
    if ((caps & SBX_CAP_EGRESS) && d->abi_minor < 11)
        return verdict(v, SBX_E_LOAD_CAPS,
                      "capabilities claim 'egress' but the provider was built against "
                      "ABI 1.%u, whose create spec has no egress (1.11 has)",
                      (unsigned)d->abi_minor);
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        bool claimed = (caps & pairs[i].bit) != 0;
        if (claimed && !pairs[i].first)
            return verdict(v, SBX_E_LOAD_CAPS,
                          "capabilities claim '%s' but op '%s' is NULL",
                          pairs[i].cap, pairs[i].op1);
        if (claimed && !pairs[i].second)
            return verdict(v, SBX_E_LOAD_CAPS,
                          "capabilities claim '%s' but op '%s' is NULL",
                          pairs[i].cap, pairs[i].op2);
        if (!claimed && pairs[i].first)
            return verdict(v, SBX_E_LOAD_CAPS,
                          "op '%s' is set but capabilities lack '%s'",
                          pairs[i].op1, pairs[i].cap);
        if (!claimed && pairs[i].op2 && pairs[i].second)
            return verdict(v, SBX_E_LOAD_CAPS,
                          "op '%s' is set but capabilities lack '%s'",
                          pairs[i].op2, pairs[i].cap);
    }
    return SBX_OK;
}

int core_validate_strings(const sbx_provider_v1 *d, const char *path, const char *name,
                          const char *conf_file, core_verdict *v)
{
    const struct {
        const char *field, *value;
    } strs[] = {
        {"name", d->name},
        {"version", d->version},
        {"description", d->description},
        {"license", d->license},
    };
    const char *base = base_name(path);
    size_t blen = strlen(base), nlen;

    verdict_clear(v);
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        if (!strs[i].value)
            return verdict(v, SBX_E_LOAD_STRING, "%s is NULL", strs[i].field);
        if (!strs[i].value[0])
            return verdict(v, SBX_E_LOAD_STRING, "%s is empty", strs[i].field);
    }
    nlen = strnlen(d->name, CORE_PROVIDER_NAME_MAX + 1);
    if (nlen > CORE_PROVIDER_NAME_MAX)
        return verdict(v, SBX_E_LOAD_BAD_NAME,
                      "name is longer than %d characters", CORE_PROVIDER_NAME_MAX);
    if (!core_provider_name_valid(d->name, nlen))
        return verdict(v, SBX_E_LOAD_BAD_NAME,
                      "name '%s' has characters outside [a-z0-9_]", d->name);
    if (blen > 3 && !strcmp(base + blen - 3, ".so"))
        blen -= 3;
    if (nlen != blen || memcmp(d->name, base, blen) != 0)
        return verdict(v, SBX_E_LOAD_NAME_MISMATCH,
                      "name is '%s' but the file is '%s' (they must match)",
                      d->name, base);
    if (strcmp(d->name, name) != 0)
        return verdict(v, SBX_E_LOAD_NAME_MISMATCH,
                      "name is '%s' but it is configured as '%s' (%s)",
                      d->name, name, conf_file ? conf_file : "?");
    return SBX_OK;
}

int core_validate_header(const void *sym, sbx_provider_v1 *desc, sbx_provider_ops_v1 *ops,
                         core_verdict *v)
{
    sbx_provider_v1 hdr;
    size_t n;

    verdict_clear(v);
    memset(&hdr, 0, sizeof hdr);
    memcpy(&hdr, sym, DESC_HEADER_SIZE);
    if (hdr.magic != SBX_PROVIDER_MAGIC)
        return verdict(v, SBX_E_LOAD_BAD_MAGIC,
                      "magic is 0x%08x, expected 0x%08x (not a PolySandbox provider)",
                      (unsigned)hdr.magic, (unsigned)SBX_PROVIDER_MAGIC);
    if (hdr.abi_major != SBX_ABI_MAJOR)
        return verdict(v, SBX_E_LOAD_ABI_MAJOR,
                      "abi_major is %u, this core speaks ABI %d (rebuild the "
                      "provider against this core's SDK)",
                      (unsigned)hdr.abi_major, SBX_ABI_MAJOR);
    if (hdr.abi_minor > SBX_ABI_MINOR)
        return verdict(v, SBX_E_LOAD_ABI_MINOR,
                      "abi_minor is %u, newer than this core's ABI %d.%d "
                      "(upgrade polysandbox)",
                      (unsigned)hdr.abi_minor, SBX_ABI_MAJOR, SBX_ABI_MINOR);
    if (hdr.struct_size < DESC_MIN_SIZE)
        return verdict(v, SBX_E_LOAD_SIZE,
                      "struct_size is %u, ABI %d.0 needs at least %zu",
                      (unsigned)hdr.struct_size, SBX_ABI_MAJOR, DESC_MIN_SIZE);
    if (hdr.ops_size < OPS_MIN_SIZE)
        return verdict(v, SBX_E_LOAD_SIZE,
                      "ops_size is %u, ABI %d.0 needs at least %zu",
                      (unsigned)hdr.ops_size, SBX_ABI_MAJOR, OPS_MIN_SIZE);

    /* Missing tail slots of an older minor stay zero (= NULL). */
    memset(desc, 0, sizeof *desc);
    memset(ops, 0, sizeof *ops);
    n = hdr.struct_size < sizeof *desc ? hdr.struct_size : sizeof *desc;
    memcpy(desc, sym, n);
    if (!desc->ops)
        return verdict(v, SBX_E_LOAD_MISSING_OP, "ops is NULL");
    n = hdr.ops_size < sizeof *ops ? hdr.ops_size : sizeof *ops;
    memcpy(ops, desc->ops, n);
    for (size_t i = 0; i < sizeof desc->reserved / sizeof desc->reserved[0]; i++)
        if (desc->reserved[i] != 0)
            return verdict(v, SBX_E_LOAD_RESERVED,
                          "reserved[%zu] is 0x%llx, must be 0", i,
                          (unsigned long long)desc->reserved[i]);
    return SBX_OK;
}
