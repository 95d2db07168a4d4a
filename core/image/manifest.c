/* core/image/manifest.c - what pull and import share once they hold an
 * image's documents: reading an index or manifest, picking this machine's
 * entry of an index, walking a manifest's blobs, and making the root.
 *
 * An index (OCI) or manifest list (Docker) picks the entry of the
 * platform asked for ([core] image_platform, image pull --platform), by
 * default linux and this machine's architecture; the manifest (OCI or Docker schema 2)
 * names the config and the layers.  The root is unpacked into a
 * temporary beside its final place and renamed there whole; a root
 * already there (another tag of the same image) is reused.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "platform.h"
#include "context.h"
#include "image-int.h"

void img_platform_want(const struct sbx_ctx *ctx, core_platform *p)
{
    if (ctx->cfg.image_platform_set)
        *p = ctx->cfg.image_platform;
    else
        core_platform_host(p);
}

bool img_is_index(const char *type, json_t *j)
{
    return strcmp(type, "application/vnd.oci.image.index.v1+json") == 0 ||
           strcmp(type, "application/vnd.docker.distribution.manifest.list.v2+json") == 0 ||
           (!json_object_get(j, "layers") && json_is_array(json_object_get(j, "manifests")));
}

int img_manifest_parse(const char *body, size_t len, const char *ref_text, const char *what,
                       json_t **out)
{
    json_error_t je;
    *out = json_loadb(body, len, 0, &je);
    if (json_is_object(*out))
        return SBX_OK;
    json_decref(*out);
    *out = NULL;
    return core_error_set(SBX_E_BACKEND, NULL, "image '%s': manifest %s is not a JSON object "
                          "(%s)", ref_text, what, je.text);
}

int img_index_pick(json_t *idx, const core_platform *want, const char *ref_text, char *digest)
{
    char have[512] = "", one[96];
    size_t at = 0, i;
    json_t *m;
    json_array_foreach(json_object_get(idx, "manifests"), i, m) {
        json_t *pl = json_object_get(m, "platform");
        const char *os = json_string_value(json_object_get(pl, "os"));
        const char *a = json_string_value(json_object_get(pl, "architecture"));
        const char *v = json_string_value(json_object_get(pl, "variant"));
        const char *d = json_string_value(json_object_get(m, "digest"));
        if (d && core_platform_match(want, os, a, v)) {
            if (!img_digest_valid(d))
                return core_error_set(SBX_E_BACKEND, NULL, "image '%s': the index names "
                                      "'%.80s', not a sha256 digest", ref_text, d);
            memcpy(digest, d, IMG_DIGEST_LEN + 1);
            return SBX_OK;
        }
        /* What it has, for the error; build attestations (unknown/unknown)
         * are no platform a user could ask for. */
        if (!os || !a || strcmp(os, "unknown") == 0 || at >= sizeof have)
            continue;
        snprintf(one, sizeof one, "%.30s/%.30s%s%.15s", os, a, v && *v ? "/" : "", v ?: "");
        if (!strstr(have, one))
            at += (size_t)snprintf(have + at, sizeof have - at, "%s%s", at ? ", " : "", one);
    }
    char w[96];
    core_platform_format(want, w, sizeof w);
    return core_error_set(SBX_E_NOT_FOUND, NULL, "image '%s' has no %s image (it has: %s); "
                          "choose one with --platform OS/ARCH[/VARIANT] or [core] "
                          "image_platform", ref_text, w, at ? have : "none named");
}

/* With no index to pick from, the image is the one platform its config
 * names: on another its programs fail to start (exec format error) or
 * run under an emulator nobody asked for.  A config that names none is
 * taken as it is; one that is no JSON is left to the store to refuse. */
int img_config_platform(const char *cfg, size_t len, const core_platform *want,
                        const char *ref_text)
{
    json_t *j = json_loadb(cfg, len, 0, NULL);
    const char *os = json_string_value(json_object_get(j, "os"));
    const char *a = json_string_value(json_object_get(j, "architecture"));
    const char *v = json_string_value(json_object_get(j, "variant"));
    int rc = SBX_OK;
    if (os && a && !core_platform_match(want, os, a, v)) {
        char w[96];
        core_platform_format(want, w, sizeof w);
        rc = core_error_set(SBX_E_NOT_FOUND, NULL, "image '%s' is a %.30s/%.30s%s%.15s image "
                            "only, not %s; ask for it with --platform %.30s/%.30s%s%.15s (or "
                            "[core] image_platform) where that runs", ref_text, os, a,
                            v && *v ? "/" : "", v ? v : "", w, os, a, v && *v ? "/" : "",
                            v ? v : "");
    }
    json_decref(j);
    return rc;
}

int img_descriptor(json_t *d, const char *ref_text, const char **digest, int64_t *size)
{
    *digest = json_string_value(json_object_get(d, "digest"));
    json_t *sz = json_object_get(d, "size");
    if (!*digest || !img_digest_valid(*digest) || !json_is_integer(sz) ||
        json_integer_value(sz) < 0)
        return core_error_set(SBX_E_BACKEND, NULL, "image '%s': the manifest has a blob "
                              "without a sha256 digest and a size", ref_text);
    *size = json_integer_value(sz);
    return SBX_OK;
}

int img_manifest_blobs(json_t *m, const char *ref_text, const char *digest, const char *type,
                       img_blob_fn fn, void *arg)
{
    json_t *layers = json_object_get(m, "layers");
    if (!json_is_array(layers) || json_array_size(layers) > IMG_LAYERS_MAX ||
        !json_is_object(json_object_get(m, "config")))
        return core_error_set(SBX_E_BACKEND, NULL, "image '%s': manifest %s (%s) is neither "
                              "an OCI image manifest nor a Docker schema 2 one, or has more "
                              "than %d layers", ref_text, digest, type[0] ? type : "no type",
                              IMG_LAYERS_MAX);
    const char *d;
    int64_t size;
    int rc = img_descriptor(json_object_get(m, "config"), ref_text, &d, &size);
    if (rc == SBX_OK)
        rc = fn(arg, d, size);
    size_t i;
    json_t *l;
    json_array_foreach(layers, i, l) {
        if (rc != SBX_OK)
            break;
        if ((rc = img_descriptor(l, ref_text, &d, &size)) == SBX_OK)
            rc = fn(arg, d, size);
    }
    return rc;
}

/* Unpack the layers of @m into the root of @digest, unless it is there. */
static int make_root(const img_store *s, json_t *m, const char *ref_text, const char *digest)
{
    char *root = img_root_path(s, digest);
    if (!root)
        return SBX_E_NOMEM;
    struct stat st;
    if (stat(root, &st) == 0) {
        free(root);
        return SBX_OK;
    }
    size_t len = strlen(root) + 32;
    char *tmp = malloc(len);
    if (!tmp) {
        free(root);
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    }
    int rc = SBX_OK;
    /* Unique per pull, so that two threads pulling one image do not meet. */
    snprintf(tmp, len, "%s.tmp-XXXXXX", root);
    if (!mkdtemp(tmp) || chmod(tmp, 0755) != 0) {
        rc = core_error_set(SBX_E_IO, NULL, "image store: cannot create %s: %s", tmp,
                            strerror(errno));
        tmp[0] = '\0';
    }
    size_t i;
    json_t *l;
    json_array_foreach(json_object_get(m, "layers"), i, l) {
        if (rc != SBX_OK)
            break;
        const char *d = json_string_value(json_object_get(l, "digest"));
        char *file = img_blob_path(s, d);
        char what[800];
        snprintf(what, sizeof what, "image '%s': layer %zu (%s)", ref_text, i + 1, d);
        rc = file ? img_unpack_layer(file, tmp, what) : SBX_E_NOMEM;
        free(file);
    }
    if (rc == SBX_OK && rename(tmp, root) != 0 && errno != ENOTEMPTY && errno != EEXIST)
        rc = core_error_set(SBX_E_IO, NULL, "image store: cannot rename %s: %s", tmp,
                            strerror(errno));
    if (tmp[0])
        img_rmtree(tmp);                /* failed, or another pull won the rename */
    free(tmp);
    free(root);
    return rc;
}

int img_store_image(const img_store *s, json_t *m, const char *body, size_t len,
                    const char *ref_text, const char *digest)
{
    /* The manifest too, so that rm and prune know which blobs it holds. */
    int rc = img_store_put(s, digest, body, len);
    return rc == SBX_OK ? make_root(s, m, ref_text, digest) : rc;
}
