/* core/config/config-templates.c - templates.d/NAME.ini: [template] and [env],
 * command lines split into argv, and whether the commands are on the host
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

#include "config-int.h"
#include "strv.h"
#include "units.h"
#include "labels.h"
#include "conf.h"
#include "config/config-load.h"

#define TEMPLATE_KEYS                                                                        \
    "extensions, source, compile, run, image, image.PROVIDER, zygote, requires, artifacts, " \
    "artifacts_max_file, artifacts_max_total, network"

static bool valid_env_name(const char *s)
{
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return false;
    for (s++; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
              (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

/*
 * Split a command line into argv: blanks separate words, '...' is
 * literal, "..." allows \" and \\, a backslash outside quotes escapes the
 * next character.  No variables, globs or other shell syntax.
 */
static int split_argv(const char *s, char ***out, const char **why)
{
    size_t len = strlen(s);
    char *word = malloc(len + 1);
    char **v = NULL;
    const char *p = s;

    *why = NULL;
    if (!word)
        return SBX_E_NOMEM;
    while (*p) {
        size_t n = 0;
        bool in_word = false;

        while (core_cfg_is_blank(*p))
            p++;
        while (*p && !core_cfg_is_blank(*p)) {
            in_word = true;
            if (*p == '\'') {
                const char *q = strchr(p + 1, '\'');
                if (!q) {
                    *why = "unterminated ' quote";
                    goto fail;
                }
                memcpy(word + n, p + 1, (size_t)(q - p - 1));
                n += (size_t)(q - p - 1);
                p = q + 1;
            } else if (*p == '"') {
                for (p++; *p && *p != '"'; p++) {
                    if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
                        p++;
                    word[n++] = *p;
                }
                if (*p != '"') {
                    *why = "unterminated \" quote";
                    goto fail;
                }
                p++;
            } else if (*p == '\\') {
                if (!p[1]) {
                    *why = "a backslash at the end";
                    goto fail;
                }
                word[n++] = p[1];
                p += 2;
            } else {
                word[n++] = *p++;
            }
        }
        if (in_word) {
            word[n] = '\0';
            if (core_strv_push(&v, word) != SBX_OK)
                goto fail;
        }
    }
    if (!v) {
        *why = "empty command";
        goto fail;
    }
    free(word);
    *out = v;
    return SBX_OK;
fail:
    free(word);
    core_strv_free(v);
    return *why ? SBX_E_CONFIG : SBX_E_NOMEM;
}

/* Append KEY=VALUE (copied) to @kv of @n entries. */
static int kv_append(loader *ld, sbx_kv_v1 **kv, size_t *n, const char *key,
                     const char *value)
{
    sbx_kv_v1 *nk = realloc(*kv, (*n + 1) * sizeof *nk);
    if (!nk)
        return core_cfg_nomem(ld);
    *kv = nk;
    nk[*n].key = strdup(key);
    nk[*n].value = strdup(value);
    (*n)++;
    if (!nk[*n - 1].key || !nk[*n - 1].value)
        return core_cfg_nomem(ld);
    return SBX_OK;
}

static int apply_template(loader *ld, const char *section, const char *key,
                          const char *value)
{
    core_template_conf *t = &ld->cur->tmpl;
    const where *w = &ld->at;
    const char *why = NULL;
    char **list = NULL;

    if (strcmp(section, "env") == 0) {
        if (!valid_env_name(key))
            return core_cfg_err(ld, SBX_E_CONFIG, w, "bad environment variable name "
                                "'%s' in [env]", key);
        return kv_append(ld, &t->env, &t->n_env, key, value);
    }
    if (strcmp(section, "template") != 0)
        return core_cfg_err(ld, SBX_E_CONFIG, w, "unknown section [%s] (known: "
                            "[template], [env])", section);

    if (strcmp(key, "extensions") == 0) {
        if (core_cfg_split_list(value, ", \t", &list) != SBX_OK)
            return core_cfg_nomem(ld);
        if (!list)
            return core_cfg_err(ld, SBX_E_CONFIG, w, "extensions is empty");
        for (size_t i = 0; list[i]; i++) {
            if (list[i][0] != '.' || !list[i][1] || strchr(list[i], '/')) {
                core_cfg_err(ld, SBX_E_CONFIG, w, "bad extension '%s' (each starts "
                             "with a dot, like .py)", list[i]);
                core_strv_free(list);
                return ld->rc;
            }
        }
        core_strv_free(t->extensions);
        t->extensions = list;
        return SBX_OK;
    }
    if (strcmp(key, "source") == 0) {
        if (!*value || strchr(value, '/') || strcmp(value, ".") == 0 ||
            strcmp(value, "..") == 0)
            return core_cfg_err(ld, SBX_E_CONFIG, w, "bad source '%s' (a plain file "
                                "name, like main.py)", value);
        return core_cfg_replace_str(ld, &t->source, value);
    }
    if (strcmp(key, "compile") == 0 || strcmp(key, "run") == 0) {
        int rc = split_argv(value, &list, &why);
        if (rc == SBX_E_NOMEM)
            return core_cfg_nomem(ld);
        if (rc != SBX_OK)
            return core_cfg_err(ld, SBX_E_CONFIG, w, "bad %s command '%s': %s", key,
                                value, why);
        char ***slot = key[0] == 'c' ? &t->compile : &t->run;
        core_strv_free(*slot);
        *slot = list;
        return SBX_OK;
    }
    if (strcmp(key, "zygote") == 0) {
        /* The interpreter a provider may keep warm and fork per run, then
         * the modules it preloads: "python3 typing re math". */
        int rc = split_argv(value, &list, &why);
        if (rc == SBX_E_NOMEM)
            return core_cfg_nomem(ld);
        if (rc != SBX_OK)
            return core_cfg_err(ld, SBX_E_CONFIG, w, "bad zygote '%s': %s", value, why);
        core_strv_free(t->zygote);
        t->zygote = list;
        return SBX_OK;
    }
    if (strcmp(key, "requires") == 0) {
        /* Host files the runtime needs besides its command (a library's
         * directory): absolute paths, looked for as the file is loaded. */
        int rc = split_argv(value, &list, &why);
        if (rc == SBX_E_NOMEM)
            return core_cfg_nomem(ld);
        for (char **s = list; rc == SBX_OK && *s; s++)
            if (**s != '/')
                why = "each path must be absolute", rc = SBX_E_CONFIG;
        if (rc != SBX_OK) {
            core_strv_free(list);
            return core_cfg_err(ld, SBX_E_CONFIG, w, "bad requires '%s': %s", value, why);
        }
        core_strv_free(t->requires);
        t->requires = list;
        return SBX_OK;
    }
    if (strcmp(key, "image") == 0) {
        if (!*value)
            return core_cfg_err(ld, SBX_E_CONFIG, w, "image is empty");
        return core_cfg_replace_str(ld, &t->image, value);
    }
    if (strncmp(key, "image.", 6) == 0) {
        /* image.local = NAME (a pulled image, polysandbox image pull),
         * image.docker = NAME: one image per provider. */
        const char *prov = key + 6;
        if (!*prov || prov[strspn(prov, "abcdefghijklmnopqrstuvwxyz0123456789_-")])
            return core_cfg_err(ld, SBX_E_CONFIG, w, "bad key '%s' (image.PROVIDER, a "
                                "provider's name: a-z, 0-9, _ and -)", key);
        if (!*value)
            return core_cfg_err(ld, SBX_E_CONFIG, w, "%s is empty", key);
        for (size_t i = 0; i < t->n_images; i++)
            if (strcmp(t->images[i].key, prov) == 0)
                return core_cfg_replace_str(ld, (char **)&t->images[i].value, value);
        return kv_append(ld, &t->images, &t->n_images, prov, value);
    }
    if (strcmp(key, "artifacts") == 0) {
        /* Relative to the work directory, where every provider's list and
         * download ops look: no absolute path, no "..", "." or empty part. */
        bool bad = !*value || *value == '/';
        for (const char *s = value; !bad && *s;) {
            size_t n = strcspn(s, "/");
            bad = n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.');
            s += n;
            if (*s && !*++s)
                bad = true;
        }
        if (bad)
            return core_cfg_err(ld, SBX_E_CONFIG, w, "bad artifacts '%s' (a directory "
                                "relative to the work directory, like outputs, without "
                                "'..', '.' or empty parts)", value);
        return core_cfg_replace_str(ld, &t->artifacts, value);
    }
    if (strcmp(key, "artifacts_max_file") == 0 || strcmp(key, "artifacts_max_total") == 0) {
        uint64_t v;
        if (core_parse_size(value, false, &v, &why) != SBX_OK)
            return core_cfg_err(ld, SBX_E_CONFIG, w, "bad %s '%s': %s", key, value, why);
        *(key[14] == 'f' ? &t->artifacts_max_file : &t->artifacts_max_total) = v;
        return SBX_OK;
    }
    if (strcmp(key, "network") == 0) {
        /* What its sandboxes may reach: nothing (the default), or out
         * through the provider's user-mode network.  Never the host's. */
        if (strcmp(value, "none") != 0 && strcmp(value, "egress") != 0)
            return core_cfg_err(ld, SBX_E_CONFIG, w, "bad network '%s' (none or egress)",
                                value);
        t->egress = value[0] == 'e';
        return SBX_OK;
    }
    return core_cfg_err(ld, SBX_E_CONFIG, w, "unknown key '%s' in [template] (known: "
                        TEMPLATE_KEYS ")", key);
}

static bool is_exec_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* A command with a slash and no leading one (./main) is made by the
 * compile step inside the sandbox, so it is not looked up on the host. */
static bool command_found(const char *cmd)
{
    char path[PATH_MAX];

    if (strchr(cmd, '/'))
        return cmd[0] != '/' || is_exec_file(cmd);

    for (const char *p = CORE_TEMPLATE_PATH; *p;) {
        size_t n = strcspn(p, ":");
        int len = snprintf(path, sizeof path, "%.*s/%s", (int)n, p, cmd);
        if (len > 0 && (size_t)len < sizeof path && is_exec_file(path))
            return true;
        p += n;
        if (*p)
            p++;
    }
    return false;
}

/* Checks that need the whole file, and the defaults that depend on it. */
static int finish_template(loader *ld)
{
    core_template_conf *t = &ld->cur->tmpl;
    const where w = { ld->at.name, 0 };

    if (!t->run)
        return core_cfg_err(ld, SBX_E_CONFIG, &w, "[template] has no run command");
    if (!t->extensions)
        return core_cfg_err(ld, SBX_E_CONFIG, &w, "[template] has no extensions");
    if (!t->source && asprintf(&t->source, "main%s", t->extensions[0]) < 0) {
        t->source = NULL;
        return core_cfg_nomem(ld);
    }
    if (!t->artifacts_max_file)
        t->artifacts_max_file = CORE_ARTIFACTS_MAX_FILE;
    if (!t->artifacts_max_total)
        t->artifacts_max_total = CORE_ARTIFACTS_MAX_TOTAL;
    t->missing = !command_found(t->run[0]) ? t->run[0]
               : t->compile && !command_found(t->compile[0]) ? t->compile[0] : NULL;
    for (char **s = t->requires; !t->missing && s && *s; s++)
        if (access(*s, F_OK) != 0) {
            t->missing = *s;
            t->missing_required = true;
        }
    return SBX_OK;
}

const char *core_template_image(const core_template_conf *t, const char *provider,
                                bool host_root, bool *named)
{
    const char *v = t && provider ? core_kv_value(t->images, t->n_images, provider) : NULL;

    if (named)
        *named = v != NULL;
    if (!t)
        return NULL;
    return v ? v : host_root ? NULL : t->image;
}

static void kv_free(sbx_kv_v1 *kv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free((char *)kv[i].key);
        free((char *)kv[i].value);
    }
    free(kv);
}

static void template_drop(void *e)
{
    core_template_conf *t = e;

    free(t->name);
    free(t->file);
    core_strv_free(t->extensions);
    free(t->source);
    core_strv_free(t->compile);
    core_strv_free(t->run);
    core_strv_free(t->zygote);
    core_strv_free(t->requires);
    free(t->image);
    free(t->artifacts);
    kv_free(t->images, t->n_images);
    kv_free(t->env, t->n_env);
    memset(t, 0, sizeof *t);
}

const cfg_kind core_cfg_templates = {
    .sub = "templates.d", .what = "template", .name_extra = "+-",
    .name_chars = "a-z, 0-9, _, + and -", .size = sizeof(core_template_conf),
    .items_off = offsetof(core_config, templates), .n_off = offsetof(core_config, n_templates),
    .apply = apply_template, .finish = finish_template, .drop = template_drop,
};
