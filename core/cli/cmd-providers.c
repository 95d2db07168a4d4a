/* core/cli/cmd-providers.c - polysandbox providers and templates */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

static const struct option info_opts[] = {
    { "help", no_argument, NULL, 'h' },
    { "json", no_argument, NULL, 'j' },
    { "check", no_argument, NULL, 'c' },
    { NULL, 0, NULL, 0 }
};

/* --json and --help (and --check when @check is not NULL); returns -1 to
 * go on, else the exit status. */
static int parse(const char *cmd, int argc, char **argv, void (*help)(void),
                 bool *json, bool *check)
{
    int c;

    optind = 0;
    while ((c = getopt_long(argc, argv, "+h", info_opts, NULL)) != -1) {
        switch (c) {
        case 'h': help(); return CLI_EXIT_OK;
        case 'j': *json = true; break;
        case 'c':
            if (check == NULL)
                return cli_usage_error(cmd, "unknown option '--check'");
            *check = true;
            break;
        default: return cli_bad_option(cmd);
        }
    }
    if (optind < argc)
        return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    return -1;
}

/* How to enable a disabled provider, as {files, credentials}: its own ini
 * when it has one, else providers.d/NAME.ini under each configuration
 * directory read (a later one replaces an earlier one's); the credential
 * keys its module declares, each with an env:NAME example, or null when
 * the module cannot be read.  NULL on ENOMEM. */
static json_t *enable_json(sbx_ctx *ctx, const sbx_provider *p)
{
    const char *name = sbx_provider_name(p), *own = sbx_provider_config_file(p);
    const char *const *dirs = sbx_ctx_config_dirs(ctx);
    const char *const *keys = sbx_provider_credential_keys(p);
    json_t *files = json_array(), *creds = keys ? json_array() : json_null();
    json_t *o = json_pack("{s:o, s:o}", "files", files, "credentials", creds);

    if (o == NULL)
        return NULL;
    if (own != NULL && json_array_append_new(files, json_string(own)) != 0)
        goto oom;
    for (size_t i = 0; own == NULL && dirs && dirs[i]; i++) {
        size_t n = strlen(dirs[i]);
        json_t *f = json_sprintf("%s%sproviders.d/%s.ini", dirs[i],
                                 n && dirs[i][n - 1] == '/' ? "" : "/", name);
        if (json_array_append_new(files, f) != 0)
            goto oom;
    }
    for (size_t i = 0; keys && keys[i]; i++) {
        /* The conventional variable: NAME_KEY, upper case (E2B_API_KEY). */
        char *env = NULL;
        if (asprintf(&env, "%s_%s", name, keys[i]) < 0)
            goto oom;
        for (char *c = env; *c; c++)
            *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c);
        json_t *k = json_pack("{s:s, s:s}", "key", keys[i], "env", env);
        free(env);
        if (json_array_append_new(creds, k) != 0)
            goto oom;
    }
    return o;
oom:
    json_decref(o);
    return NULL;
}

static void print_enable(const json_t *e)
{
    const json_t *files = json_object_get(e, "files"), *creds = json_object_get(e, "credentials");
    size_t i, n = json_array_size(files);
    json_t *v;

    if (n == 0)
        printf("    enable: no configuration directory was read\n");
    json_array_foreach(files, i, v)
        printf(i == 0 ? "    enable: set 'enabled = true' under [provider] in %s\n"
                      : "            or in %s (read later, it wins)\n", json_string_value(v));
    if (!json_is_array(creds)) {
        printf("    credentials: unknown (its module cannot be read: enabled, the\n"
               "    reason shows)\n");
        return;
    }
    if (json_array_size(creds) == 0) {
        printf("    credentials: none\n");
        return;
    }
    json_array_foreach(creds, i, v) {
        const char *key = json_string_value(json_object_get(v, "key"));
        printf("    credential: %s under [settings] there, e.g. %s = env:%s\n", key, key,
               json_string_value(json_object_get(v, "env")));
    }
    printf("    (env:NAME, file:PATH or a value sealed by 'polysandbox secret seal';\n"
           "    'polysandbox secret check' checks it)\n");
}

static void providers_help(void)
{
    fputs(
"Usage: polysandbox providers [--check] [--json]\n"
"List the providers found: name, state (ready, unavailable, disabled),\n"
"priority, version, capabilities and path; why an unavailable one failed;\n"
"for a disabled one, the ini file that enables it and the credential keys\n"
"its module declares.\n"
"\n"
"      --check            probe each enabled provider once: health, latency\n"
"                         and why it failed; exit 1 if one that is not\n"
"                         optional is unhealthy\n"
"      --json             print a JSON array (a disabled provider's enable:\n"
"                         files and credentials)\n"
"  -h, --help             show this help\n",
        stdout);
}

/* One provider's probe for --check. */
struct health {
    const char *status;     /* healthy, unhealthy, unavailable */
    uint64_t latency_ns;
    int code;
    char reason[1024];
};

static void check_one(sbx_ctx *ctx, const sbx_provider *p, struct health *h)
{
    memset(h, 0, sizeof *h);
    if (sbx_provider_get_state(p) != SBX_PROVIDER_READY) {
        const char *why = sbx_provider_reason(p);
        h->status = "unavailable";
        h->code = sbx_provider_reason_code(p);
        snprintf(h->reason, sizeof h->reason, "%s", why ? why : "no reason given");
        return;
    }
    h->code = sbx_provider_health(ctx, sbx_provider_name(p), &h->latency_ns);
    h->status = h->code == SBX_OK ? "healthy" : "unhealthy";
    if (h->code != SBX_OK)
        snprintf(h->reason, sizeof h->reason, "%s",
                 sbx_error_message(sbx_ctx_last_error(ctx)));
}

static json_t *health_json(const sbx_provider *p, const struct health *h)
{
    json_t *o = json_object();

    if (o == NULL ||
        json_object_set_new(o, "name", json_string(sbx_provider_name(p))) ||
        json_object_set_new(o, "status", json_string(h->status)) ||
        json_object_set_new(o, "healthy", json_boolean(h->code == SBX_OK)) ||
        json_object_set_new(o, "optional", json_boolean(sbx_provider_is_optional(p))) ||
        json_object_set_new(o, "latency_ms", json_real((double)h->latency_ns / 1e6)) ||
        json_object_set_new(o, "code", h->code ? json_string(sbx_strerror(h->code))
                                               : json_null()) ||
        json_object_set_new(o, "reason", h->code ? json_string(h->reason) : json_null()) ||
        json_object_set_new(o, "breaker",
                            json_string(sbx_breaker_state_name(sbx_provider_breaker(p))))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* providers --check: every enabled provider probed once. */
static int check_all(sbx_ctx *ctx, bool json)
{
    size_t n = sbx_ctx_provider_count(ctx), checked = 0;
    json_t *arr = json ? json_array() : NULL;
    bool bad = false;
    struct health h;
    int rc;

    if (!json)
        printf("%-12s %-12s %10s %-10s %s\n", "NAME", "HEALTH", "LATENCY", "BREAKER",
               "REASON");
    for (size_t i = 0; i < n; i++) {
        const sbx_provider *p = sbx_ctx_provider(ctx, i);
        if (sbx_provider_get_state(p) == SBX_PROVIDER_DISABLED)
            continue;
        check_one(ctx, p, &h);
        checked++;
        if (h.code != SBX_OK && !sbx_provider_is_optional(p))
            bad = true;
        if (json) {
            json_t *o = health_json(p, &h);
            if (arr != NULL && (o == NULL || json_array_append_new(arr, o) != 0)) {
                json_decref(arr);
                arr = NULL;
            }
        } else {
            char lat[32];
            snprintf(lat, sizeof lat, "%.1fms", (double)h.latency_ns / 1e6);
            printf("%-12s %-12s %10s %-10s %s\n", sbx_provider_name(p), h.status,
                   h.code == SBX_OK || h.latency_ns ? lat : "-",
                   sbx_breaker_state_name(sbx_provider_breaker(p)),
                   h.code == SBX_OK ? "-" : h.reason);
        }
    }
    if (json) {
        rc = cli_print_json(arr);
    } else {
        if (checked == 0)
            printf("(no enabled providers)\n");
        rc = fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_ERROR;
    }
    if (rc == CLI_EXIT_OK && bad)
        rc = CLI_EXIT_FAIL;
    return rc;
}

int cli_cmd_providers(cli_global *g, int argc, char **argv)
{
    bool json = false, check = false;
    sbx_ctx *ctx;
    size_t n;
    int rc = parse("providers", argc, argv, providers_help, &json, &check);

    if (rc >= 0)
        return rc;
    if ((ctx = cli_ctx_new(g)) == NULL)
        return CLI_EXIT_ERROR;
    n = sbx_ctx_provider_count(ctx);
    if (check) {
        rc = check_all(ctx, json);
    } else if (json) {
        json_t *arr = json_array();
        for (size_t i = 0; arr != NULL && i < n; i++) {
            const sbx_provider *p = sbx_ctx_provider(ctx, i);
            json_t *o = cli_provider_json(p);
            if (o != NULL &&
                json_object_set_new(o, "enable",
                                    sbx_provider_get_state(p) == SBX_PROVIDER_DISABLED
                                        ? enable_json(ctx, p) : json_null()) != 0) {
                json_decref(o);
                o = NULL;
            }
            if (o == NULL || json_array_append_new(arr, o) != 0) {
                json_decref(arr);
                arr = NULL;
            }
        }
        rc = cli_print_json(arr);
    } else {
        const char *def = sbx_ctx_default_provider(ctx);
        printf("%-12s %-12s %8s %-10s %s\n", "NAME", "STATE", "PRIORITY",
               "VERSION", "PATH");
        for (size_t i = 0; i < n; i++) {
            const sbx_provider *p = sbx_ctx_provider(ctx, i);
            const char *v = sbx_provider_version(p),
                       *path = sbx_provider_path(p),
                       *why = sbx_provider_reason(p);
            char capbuf[512];
            cli_caps(sbx_provider_capabilities(p), capbuf, sizeof capbuf, NULL);
            printf("%-12s %-12s %8d %-10s %s\n", sbx_provider_name(p),
                   cli_state_name(sbx_provider_get_state(p)),
                   sbx_provider_priority(p), v && *v ? v : "-",
                   path ? path : "-");
            printf("    capabilities: %s\n", capbuf);
            if (sbx_provider_get_state(p) == SBX_PROVIDER_UNAVAILABLE)
                printf("    reason: %s\n", why ? why : "no reason given");
            if (sbx_provider_get_state(p) == SBX_PROVIDER_DISABLED) {
                json_t *e = enable_json(ctx, p);
                if (e == NULL) {
                    cli_err("out of memory");
                    sbx_ctx_free(ctx);
                    return CLI_EXIT_ERROR;
                }
                print_enable(e);
                json_decref(e);
            }
        }
        if (n == 0)
            printf("(no providers found)\n");
        if (def != NULL)
            printf("default: %s\n", def);
        rc = fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_ERROR;
    }
    sbx_ctx_free(ctx);
    return rc;
}

static void templates_help(void)
{
    fputs(
"Usage: polysandbox templates [--json]\n"
"List the language templates: the file extensions each one runs, whether\n"
"it has a compile step, its network (none, or egress: it may connect out),\n"
"and for each enabled provider whether it is usable\n"
"there and why not (the provider is unavailable, the compiler or\n"
"interpreter is missing on the host for a provider that runs on it, or\n"
"the template's image for it, image.local, is not pulled).  A template\n"
"whose build cache was built by another toolchain than the host's (the\n"
"go template's, made by go-cache-warm.sh) gets a WARN line with the\n"
"command that rebuilds it.\n"
"\n"
"      --json             print a JSON array: name, extensions, compiled,\n"
"                         artifacts (its directory, or null), network\n"
"                         (\"none\" or \"egress\"),\n"
"                         providers {NAME: {usable, reason}} and\n"
"                         cache_stale (why, or null)\n"
"  -h, --help             show this help\n",
        stdout);
}

/* The enabled providers' names, NULL-terminated (transfer container), or
 * NULL on ENOMEM. */
static const char **enabled_providers(sbx_ctx *ctx)
{
    size_t n = sbx_ctx_provider_count(ctx), k = 0;
    const char **v = calloc(n + 1, sizeof *v);

    for (size_t i = 0; v != NULL && i < n; i++) {
        const sbx_provider *p = sbx_ctx_provider(ctx, i);
        if (sbx_provider_get_state(p) != SBX_PROVIDER_DISABLED)
            v[k++] = sbx_provider_name(p);
    }
    return v;
}

/* {NAME: {usable, reason}} of @t on @names. */
static json_t *usable_json(sbx_ctx *ctx, const sbx_template *t, const char **names)
{
    json_t *o = json_object();
    char why[1024];

    for (size_t i = 0; o != NULL && names[i] != NULL; i++) {
        bool ok = sbx_template_usable(ctx, t, names[i], why, sizeof why);
        if (json_object_set_new(o, names[i], json_pack("{s:b, s:s}", "usable", ok,
                                                       "reason", why)) != 0) {
            json_decref(o);
            o = NULL;
        }
    }
    return o;
}

static int templates_json(sbx_ctx *ctx, const char **names)
{
    json_t *arr = json_array();
    char why[1024];

    for (size_t i = 0; arr != NULL && i < sbx_ctx_template_count(ctx); i++) {
        const sbx_template *t = sbx_ctx_template(ctx, i);
        json_t *o = cli_template_json(t);
        if (o == NULL ||
            json_object_set_new(o, "providers", usable_json(ctx, t, names)) ||
            json_object_set_new(o, "cache_stale", sbx_template_cache_stale(t, why, sizeof why)
                                ? json_string(why) : json_null())) {
            json_decref(o);
            o = NULL;
        }
        if (o == NULL || json_array_append_new(arr, o) != 0) {   /* (takes o) */
            json_decref(arr);
            arr = NULL;
        }
    }
    return cli_print_json(arr);
}

/* A table, a column per enabled provider, then why each "no" is one. */
static int templates_table(sbx_ctx *ctx, const char **names)
{
    size_t n = sbx_ctx_template_count(ctx), nos = 0;
    char why[1024];

    printf("%-12s %-16s %-8s %-7s", "NAME", "EXTENSIONS", "COMPILE", "NETWORK");
    for (size_t j = 0; names[j] != NULL; j++)
        printf(" %-10s", names[j]);
    printf("\n");
    for (size_t i = 0; i < n; i++) {
        const sbx_template *t = sbx_ctx_template(ctx, i);
        const char *ext = sbx_template_extensions(t);
        printf("%-12s %-16s %-8s %-7s", sbx_template_name(t), ext && *ext ? ext : "-",
               sbx_template_compiled(t) ? "yes" : "no", sbx_template_egress(t) ? "egress" : "none");
        for (size_t j = 0; names[j] != NULL; j++) {
            bool ok = sbx_template_usable(ctx, t, names[j], NULL, 0);
            printf(" %-10s", ok ? "usable" : "no");
            nos += !ok;
        }
        printf("\n");
    }
    if (n == 0)
        printf("(no templates configured)\n");
    if (names[0] == NULL)
        printf("(no provider enabled)\n");
    if (nos > 0)
        printf("\n");
    for (size_t i = 0; nos > 0 && i < n; i++) {
        const sbx_template *t = sbx_ctx_template(ctx, i);
        for (size_t j = 0; names[j] != NULL; j++)
            if (!sbx_template_usable(ctx, t, names[j], why, sizeof why))
                printf("%s on %s: %s\n", sbx_template_name(t), names[j], why);
    }
    /* usable, yet slow for a reason no run says: a stale build cache */
    for (size_t i = 0; i < n; i++)
        if (sbx_template_cache_stale(sbx_ctx_template(ctx, i), why, sizeof why))
            printf("\nWARN %s: %s\n", sbx_template_name(sbx_ctx_template(ctx, i)), why);
    return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_ERROR;
}

int cli_cmd_templates(cli_global *g, int argc, char **argv)
{
    bool json = false;
    const char **names;
    sbx_ctx *ctx;
    int rc = parse("templates", argc, argv, templates_help, &json, NULL);

    if (rc >= 0)
        return rc;
    if ((ctx = cli_ctx_new(g)) == NULL)
        return CLI_EXIT_ERROR;
    if ((names = enabled_providers(ctx)) == NULL) {
        cli_err("out of memory");
        sbx_ctx_free(ctx);
        return CLI_EXIT_ERROR;
    }
    rc = json ? templates_json(ctx, names) : templates_table(ctx, names);
    free(names);
    sbx_ctx_free(ctx);
    return rc;
}
