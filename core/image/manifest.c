/* core/image/manifest.c - what pull and import share once they hold an
 * image's documents: reading an index or manifest, picking this machine's
 * entry of an index, walking a manifest's blobs, and making the root.
 *
 * An index (OCI) or manifest list (Docker) picks the entry for linux and
 * this machine's architecture; the manifest (OCI or Docker schema 2)
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

#include "core-int.h"
#include "image-int.h"

static const char *host_arch(void)
{
#if defined(__x86_64__)
    return "amd64";
#elif defined(__aarch64__)
    return "arm64";
#elif defined(__i386__)
    return "386";
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return "ppc64le";
#elif defined(__s390x__)
    return "s390x";
#elif defined(__riscv) && __riscv_xlen == 64
    return "riscv64";
#else
    return "unknown";
#endif
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

int img_index_pick(json_t *idx, const char *ref_text, char *digest)
{
    const char *arch = host_arch();
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(idx, "manifests"), i, m) {
        json_t *pl = json_object_get(m, "platform");
        const char *os = json_string_value(json_object_get(pl, "os"));
        const char *a = json_string_value(json_object_get(pl, "architecture"));
        const char *d = json_string_value(json_object_get(m, "digest"));
        if (os && a && d && strcmp(os, "linux") == 0 && strcmp(a, arch) == 0) {
            if (!img_digest_valid(d))
                return core_error_set(SBX_E_BACKEND, NULL, "image '%s': the index names "
                                      "'%.80s', not a sha256 digest", ref_text, d);
            memcpy(digest, d, IMG_DIGEST_LEN + 1);
            return SBX_OK;
        }
    }
    return core_error_set(SBX_E_NOT_FOUND, NULL, "image '%s' has no linux/%s image",
                          ref_text, arch);
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
