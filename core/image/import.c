/* core/image/import.c - sbx_image_import: a docker save or OCI layout
 * tarball -> blobs -> root
 *
 * The tarball (a file, or standard input for "-") is read once, streamed
 * with libarchive, so a pipe serves as well as a file: its documents
 * (manifest.json, index.json) are kept in memory (capped), every other
 * regular member is copied into a private temporary of the store while
 * its sha256 is computed.  No member's name is ever a path we write to,
 * and a name that is absolute or holds ".." refuses the import.  Then:
 *
 *   - index.json (OCI layout, and docker save since 25): each entry's
 *     manifest (an inner index picks this machine's linux entry), its
 *     config and layers are found by digest and size among the members;
 *   - else manifest.json (docker save before 25): an entry's config is named
 *     "HEX.json" and each layer's digest is its diff_id in the config;
 *     a Docker schema 2 manifest is made for them, so the image is
 *     stored as a pulled one is.
 *
 * Each entry of the document is an image (entries naming one manifest,
 * as docker save writes one per tag, are one image), named by its
 * annotation or RepoTags; all are imported, or with a NAME the only one
 * or the one named so.
 *
 * A member named blobs/sha256/HEX must hash to HEX, whatever uses it.
 * Only the members the chosen manifests name become blobs; the roots are
 * made by the code pull uses (manifest.c, unpack.c), every one before
 * any name is recorded.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "platform.h"
#include "context.h"
#include "image-int.h"

#define IMP_MEMBERS_MAX 4096
#define IMP_NAMES_MAX 256
#define IMP_IMAGES_MAX 64
#define IMP_DOCS_MAX (16u << 20)    /* the manifests of its images, held at once */

enum { DOC_MANIFEST, DOC_INDEX, DOC_N };
static const char *const doc_names[DOC_N] = { "manifest.json", "index.json" };

typedef struct member {
    char *name;                 /* cleaned */
    char *alias;                /* a link's cleaned target, or NULL */
    char *tmp;                  /* its copy in the store, until kept or dropped */
    char digest[IMG_DIGEST_LEN + 1];
    int64_t size;
    bool used;
} member;

typedef struct tarball {
    const img_store *s;
    const char *file;           /* for messages */
    const core_platform *want;  /* an index's entry to take */
    member *v;
    size_t n, cap;
    char *doc[DOC_N];
    size_t doc_len[DOC_N];
} tarball;

static void tarball_free(tarball *t)
{
    for (size_t i = 0; i < t->n; i++) {
        if (t->v[i].tmp)
            unlink(t->v[i].tmp);
        free(t->v[i].tmp);
        free(t->v[i].name);
        free(t->v[i].alias);
    }
    free(t->v);
    for (int d = 0; d < DOC_N; d++)
        free(t->doc[d]);
}

static const member *find(const tarball *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->v[i].name, name) == 0) {
            const char *to = t->v[i].alias;
            if (!to)
                return &t->v[i];
            for (size_t j = 0; j < t->n; j++)   /* one hop: a link to a link is not followed */
                if (strcmp(t->v[j].name, to) == 0 && !t->v[j].alias)
                    return &t->v[j];
            return NULL;
        }
    return NULL;
}

/* find() with a name from a document, cleaned as the members' are. */
static const member *find_named(const tarball *t, const char *raw)
{
    char name[PATH_MAX];
    if (!raw || strlen(raw) >= sizeof name)
        return NULL;
    snprintf(name, sizeof name, "%s", raw);
    return img_clean_name(name) ? find(t, name) : NULL;
}

static member *find_digest(tarball *t, const char *digest)
{
    for (size_t i = 0; i < t->n; i++)
        if (!t->v[i].alias && strcmp(t->v[i].digest, digest) == 0)
            return &t->v[i];
    return NULL;
}

/* The digest a member's name claims: blobs/sha256/HEX, or (@json) HEX.json
 * as docker save names a config; false when it claims none. */
static bool claimed(const char *name, bool json, char *out)
{
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    char d[IMG_DIGEST_LEN + 1];
    if (strncmp(name, "blobs/sha256/", 13) == 0 && strlen(name + 13) == 64)
        snprintf(d, sizeof d, "sha256:%s", name + 13);
    else if (json && strlen(base) == 64 + 5 && strcmp(base + 64, ".json") == 0)
        snprintf(d, sizeof d, "sha256:%.64s", base);
    else
        return false;
    if (!img_digest_valid(d))
        return false;
    memcpy(out, d, IMG_DIGEST_LEN + 1);
    return true;
}

/* A symbolic link's target, relative to @name's directory, as a name of
 * the tarball; false when it leaves the tarball. */
static bool resolve(const char *name, const char *target, char *out, size_t len)
{
    if (target[0] == '/')
        return false;
    const char *slash = strrchr(name, '/');
    int n = snprintf(out, len, "%.*s%s%s", slash ? (int)(slash - name) : 0, name,
                     slash ? "/" : "", target);
    if (n < 0 || (size_t)n >= len)
        return false;
    /* Fold "x/.." pairs; one that climbs above the top is refused. */
    char *w = out;
    for (char *p = out; *p;) {
        char *e = strchr(p, '/');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k == 2 && p[0] == '.' && p[1] == '.') {
            if (w == out)
                return false;
            for (w--; w > out && w[-1] != '/'; w--)
                ;
        } else if (k > 0 && !(k == 1 && p[0] == '.')) {
            memmove(w, p, k);
            w += k;
            *w++ = '/';
        }
        p += k;
        if (*p == '/')
            p++;
    }
    if (w > out)
        w--;
    *w = '\0';
    return *out != '\0';
}

static int add(tarball *t, const char *name, member **out)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->v[i].name, name) == 0)
            return core_error_set(SBX_E_BACKEND, NULL, "import '%s': the member '%.200s' "
                                  "appears twice: refused", t->file, name);
    if (t->n == IMP_MEMBERS_MAX)
        return core_error_set(SBX_E_BACKEND, NULL, "import '%s': more than %d members: "
                              "refused", t->file, IMP_MEMBERS_MAX);
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 32;
        member *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        t->v = v;
        t->cap = cap;
    }
    member *m = &t->v[t->n];
    memset(m, 0, sizeof *m);
    if (!(m->name = strdup(name)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    t->n++;
    *out = m;
    return SBX_OK;
}

static int read_error(const tarball *t, struct archive *a, const char *name)
{
    return core_error_set(SBX_E_BACKEND, NULL, "import '%s': '%.200s': %s", t->file, name,
                          archive_error_string(a) ?: "unreadable");
}

/* A document, whole in memory (at most IMG_MANIFEST_MAX bytes). */
static int read_doc(tarball *t, struct archive *a, int d)
{
    if (t->doc[d])
        return core_error_set(SBX_E_BACKEND, NULL, "import '%s': '%s' appears twice: "
                              "refused", t->file, doc_names[d]);
    char *buf = NULL;
    size_t len = 0;
    const void *p;
    size_t size;
    la_int64_t off;
    int x;
    while ((x = archive_read_data_block(a, &p, &size, &off)) == ARCHIVE_OK) {
        if (off < 0 || (uint64_t)off + size > IMG_MANIFEST_MAX) {
            free(buf);
            return core_error_set(SBX_E_BACKEND, NULL, "import '%s': '%s' is over %u bytes: "
                                  "refused", t->file, doc_names[d], IMG_MANIFEST_MAX);
        }
        if ((size_t)off + size > len) {
            char *nb = realloc(buf, (size_t)off + size + 1);
            if (!nb) {
                free(buf);
                return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
            }
            memset(nb + len, 0, (size_t)off + size - len);   /* a sparse hole */
            buf = nb;
            len = (size_t)off + size;
        }
        if (size) /* an empty block leaves buf NULL: memcpy must not see it */
            memcpy(buf + off, p, size);
    }
    if (x != ARCHIVE_EOF) {
        free(buf);
        return read_error(t, a, doc_names[d]);
    }
    if (!buf && !(buf = calloc(1, 1)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    buf[len] = '\0';
    t->doc[d] = buf;
    t->doc_len[d] = len;
    return SBX_OK;
}

/* Any other file: copied into the store's temporary, hashed on the way. */
static int read_blob(tarball *t, struct archive *a, member *m)
{
    int fd = -1;
    int rc = img_store_tmp(t->s, &m->tmp, &fd);
    if (rc != SBX_OK)
        return rc;
    crypto_hash_sha256_state hs;
    crypto_hash_sha256_init(&hs);
    const void *p;
    size_t size;
    la_int64_t off;
    int x = ARCHIVE_EOF;
    /* Written in order (a sparse member's holes come as zeros from a
     * seek); its size is what was read, not what the header said. */
    while (rc == SBX_OK && (x = archive_read_data_block(a, &p, &size, &off)) == ARCHIVE_OK) {
        static const unsigned char zeros[4096];
        while (rc == SBX_OK && off > m->size) {
            size_t k = (uint64_t)(off - m->size) < sizeof zeros ? (size_t)(off - m->size)
                                                                : sizeof zeros;
            crypto_hash_sha256_update(&hs, zeros, k);
            if (write(fd, zeros, k) != (ssize_t)k)
                rc = core_error_set(SBX_E_IO, NULL, "image store: %s: %s", m->tmp,
                                    strerror(errno));
            m->size += (int64_t)k;
        }
        if (rc == SBX_OK && off != m->size)
            rc = read_error(t, a, m->name);
        for (size_t done = 0; rc == SBX_OK && done < size;) {
            ssize_t w = write(fd, (const char *)p + done, size - done);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                rc = core_error_set(SBX_E_IO, NULL, "image store: %s: %s", m->tmp,
                                    strerror(errno));
            else
                done += (size_t)w;
        }
        crypto_hash_sha256_update(&hs, p, size);
        m->size += (int64_t)size;
    }
    if (rc == SBX_OK && x != ARCHIVE_EOF)
        rc = read_error(t, a, m->name);
    if (close(fd) != 0 && rc == SBX_OK)
        rc = core_error_set(SBX_E_IO, NULL, "image store: %s: %s", m->tmp, strerror(errno));
    img_digest_final(&hs, m->digest);
    return rc;
}

static int entry(tarball *t, struct archive *a, struct archive_entry *e)
{
    const char *raw = archive_entry_pathname(e);
    char name[PATH_MAX], to[PATH_MAX];
    if (!raw || strlen(raw) >= sizeof name)
        return core_error_set(SBX_E_BACKEND, NULL, "import '%s': a member without a usable "
                              "name", t->file);
    snprintf(name, sizeof name, "%s", raw);
    if (!img_clean_name(name))
        return core_error_set(SBX_E_PATH, NULL, "import '%s': the member '%.200s' is absolute "
                              "or holds '..': refused", t->file, raw);
    mode_t type = archive_entry_filetype(e);
    const char *hl = archive_entry_hardlink(e), *sl = archive_entry_symlink(e);
    if (!*name || (!hl && type != AE_IFREG && type != AE_IFLNK))
        return SBX_OK;                  /* directories; nothing else is ever read */
    member *m;
    if (hl || type == AE_IFLNK) {
        /* cppcheck-suppress legacyUninitvar ; both branches write to before reading it */
        bool ok = hl ? strlen(hl) < sizeof to && snprintf(to, sizeof to, "%s", hl) > 0 &&
                       img_clean_name(to) && *to
                     : sl && resolve(name, sl, to, sizeof to);
        if (!ok)
            return core_error_set(SBX_E_PATH, NULL, "import '%s': the link '%.200s' points "
                                  "outside the tarball: refused", t->file, raw);
        int rc = add(t, name, &m);
        if (rc == SBX_OK && !(m->alias = strdup(to)))
            rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        return rc;
    }
    for (int d = 0; d < DOC_N; d++)
        if (strcmp(name, doc_names[d]) == 0)
            return read_doc(t, a, d);
    int rc = add(t, name, &m);
    return rc == SBX_OK ? read_blob(t, a, m) : rc;
}

/* @file, or standard input for "-": read as a stream either way (one
 * pass; the members are spooled into the store's temporaries). */
static int read_tarball(tarball *t, const char *file)
{
    bool in = strcmp(file, "-") == 0;
    if (in && isatty(STDIN_FILENO))
        return core_error_set(SBX_E_INVAL, NULL, "import '-': standard input is a terminal, "
                              "not a tarball (pipe one in: docker save NAME | polysandbox "
                              "image import -)");
    int fd = in ? STDIN_FILENO : open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return core_error_set(errno == ENOENT ? SBX_E_NOT_FOUND : SBX_E_IO, NULL,
                              "import '%s': %s", file, strerror(errno));
    struct archive *a = archive_read_new();
    if (!a) {
        if (!in)
            close(fd);
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    }
    /* docker save | gzip is common; any compression libarchive reads. */
    archive_read_support_filter_all(a);
    archive_read_support_format_tar(a);
    int rc = SBX_OK;
    if (archive_read_open_fd(a, fd, 1 << 16) != ARCHIVE_OK)
        rc = core_error_set(SBX_E_BACKEND, NULL, "import '%s': %s", t->file,
                            archive_error_string(a));
    struct archive_entry *e;
    while (rc == SBX_OK) {
        int x = archive_read_next_header(a, &e);
        if (x == ARCHIVE_EOF)
            break;
        if (x < ARCHIVE_WARN)
            rc = core_error_set(SBX_E_BACKEND, NULL, "import '%s' is not a readable tar: %s",
                                t->file, archive_error_string(a));
        else
            rc = entry(t, a, e);
    }
    archive_read_free(a);
    if (!in)
        close(fd);
    /* Whatever uses them: a blob must be what its name says. */
    for (size_t i = 0; rc == SBX_OK && i < t->n; i++) {
        char want[IMG_DIGEST_LEN + 1];
        const member *m = &t->v[i];
        if (!m->alias && claimed(m->name, true, want) && strcmp(want, m->digest) != 0)
            rc = core_error_set(SBX_E_BACKEND, NULL, "import '%s': '%.200s' does not match "
                                "its digest (it holds %s): refused", t->file, m->name, m->digest);
    }
    if (rc == SBX_OK && !t->doc[DOC_MANIFEST] && !t->doc[DOC_INDEX])
        rc = core_error_set(SBX_E_BACKEND, NULL, "import '%s' has neither manifest.json nor "
                            "index.json: not a docker save or OCI layout tarball", t->file);
    return rc;
}

/* ---- the manifest's blobs ------------------------------------------- */

static int have(void *arg, const char *digest, int64_t size)
{
    tarball *t = arg;
    member *m = find_digest(t, digest);
    if (!m)
        return core_error_set(SBX_E_BACKEND, NULL, "import '%s': the manifest names blob %s, "
                              "which the tarball does not hold", t->file, digest);
    if (m->size != size)
        return core_error_set(SBX_E_BACKEND, NULL, "import '%s': blob %s has %lld bytes, the "
                              "manifest says %lld: refused", t->file, digest,
                              (long long)m->size, (long long)size);
    m->used = true;
    return SBX_OK;
}

/* A member's content (a manifest, a config), whole. */
static int member_read(const tarball *t, const member *m, json_t **out, char **body,
                       size_t *len)
{
    *out = NULL;
    int rc = img_read_file(m->tmp, IMG_MANIFEST_MAX, body, len);
    if (rc == SBX_OK && (rc = img_manifest_parse(*body, *len, t->file, m->name, out)) != SBX_OK) {
        free(*body);
        *body = NULL;
    }
    return rc;
}

/* The document @dg of @size bytes among the members, parsed, its digest
 * into @digest.  Not marked as a blob of the image: a manifest is stored
 * by img_store_image, an inner index not at all. */
static int load(tarball *t, const char *dg, int64_t size, json_t **m, char **body, size_t *len,
                char *digest)
{
    memcpy(digest, dg, IMG_DIGEST_LEN + 1);
    int rc = have(t, digest, size);
    member *mm = rc == SBX_OK ? find_digest(t, digest) : NULL;
    if (mm) {
        mm->used = false;
        rc = member_read(t, mm, m, body, len);
    }
    return rc;
}

/* A single-platform image (no index to pick from): its config, when
 * among the members, names the wanted platform (img_config_platform);
 * a missing one is said where the image's blobs are taken. */
static int config_platform(tarball *t, json_t *m)
{
    const char *dg;
    int64_t size;
    if (img_descriptor(json_object_get(m, "config"), t->file, &dg, &size) != SBX_OK) {
        core_error_clear();
        return SBX_OK;
    }
    const member *cm = find_digest(t, dg);
    char *body = NULL;
    size_t len = 0;
    int rc = cm ? img_read_file(cm->tmp, IMG_MANIFEST_MAX, &body, &len) : SBX_OK;
    if (rc == SBX_OK && cm)
        rc = img_config_platform(body, len, t->want, t->file);
    free(body);
    return rc;
}

/* OCI: an entry @d of index.json -> (an inner index ->) the manifest. */
static int from_index(tarball *t, json_t **m, char **body, size_t *len, char *digest, json_t *d)
{
    const char *dg;
    int64_t size;
    int rc = img_descriptor(d, t->file, &dg, &size);
    if (rc == SBX_OK)
        rc = load(t, dg, size, m, body, len, digest);
    const char *type = json_string_value(json_object_get(d, "mediaType")) ?: "";
    if (rc == SBX_OK && !img_is_index(type, *m))
        return config_platform(t, *m);
    if (rc != SBX_OK)
        return rc;
    /* A multi-platform image: the entry of the platform asked for. */
    char pick[IMG_DIGEST_LEN + 1], ptype[128] = "";
    int64_t psize = -1;
    rc = img_index_pick(*m, t->want, t->file, pick);
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(*m, "manifests"), i, e) {
        if (rc != SBX_OK || strcmp(json_string_value(json_object_get(e, "digest")) ?: "",
                                   pick) != 0)
            continue;
        rc = img_descriptor(e, t->file, &dg, &psize);
        snprintf(ptype, sizeof ptype, "%s",
                 json_string_value(json_object_get(e, "mediaType")) ?: "");
        break;
    }
    json_decref(*m);
    free(*body);
    *m = NULL;
    *body = NULL;
    if (rc == SBX_OK)
        rc = load(t, pick, psize, m, body, len, digest);
    if (rc == SBX_OK && img_is_index(ptype, *m))
        rc = core_error_set(SBX_E_BACKEND, NULL, "import '%s': an index inside an index",
                            t->file);
    return rc;
}

/* docker save before 25: an entry @img of manifest.json, the config's
 * diff_ids. */
static int from_docker(tarball *t, json_t **m, char **body, size_t *len, char *digest,
                       json_t *img)
{
    const char *cname = json_string_value(json_object_get(img, "Config"));
    json_t *layers = json_object_get(img, "Layers");
    size_t i;
    json_t *v;
    if (!cname || !json_is_array(layers) || json_array_size(layers) > IMG_LAYERS_MAX)
        return core_error_set(SBX_E_BACKEND, NULL, "import '%s': manifest.json has no Config "
                              "and Layers (or over %d layers)", t->file, IMG_LAYERS_MAX);
    char want[IMG_DIGEST_LEN + 1];
    const member *cm = find_named(t, cname);
    if (!cm)
        return core_error_set(SBX_E_BACKEND, NULL, "import '%s': the config '%.200s' is not "
                              "in the tarball", t->file, cname);
    if (!claimed(cm->name, true, want) || strcmp(want, cm->digest) != 0)
        return core_error_set(SBX_E_BACKEND, NULL, "import '%s': the config '%.200s' does not "
                              "match the digest its name gives (it holds %s): refused",
                              t->file, cname, cm->digest);
    json_t *config;
    char *cbody;
    size_t clen;
    int rc = member_read(t, cm, &config, &cbody, &clen);
    if (rc != SBX_OK)
        return rc;
    rc = img_config_platform(cbody, clen, t->want, t->file);
    free(cbody);
    if (rc != SBX_OK) {
        json_decref(config);
        return rc;
    }
    json_t *diff_ids = json_object_get(json_object_get(config, "rootfs"), "diff_ids");
    json_t *out = json_pack("{s:i, s:s, s:{s:s, s:I, s:s}, s:[]}", "schemaVersion", 2,
                            "mediaType", "application/vnd.docker.distribution.manifest.v2+json",
                            "config", "mediaType", "application/vnd.docker.container.image.v1+json",
                            "size", (json_int_t)cm->size, "digest", cm->digest, "layers");
    if (!out)
        rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    else if (!json_is_array(diff_ids) || json_array_size(diff_ids) != json_array_size(layers))
        rc = core_error_set(SBX_E_BACKEND, NULL, "import '%s': the config's rootfs.diff_ids "
                            "do not match manifest.json's %zu layers", t->file,
                            json_array_size(layers));
    json_array_foreach(layers, i, v) {
        if (rc != SBX_OK)
            break;
        const char *ln = json_string_value(v);
        const member *lm = find_named(t, ln);
        const char *diff = json_string_value(json_array_get(diff_ids, i));
        if (!lm)
            rc = core_error_set(SBX_E_BACKEND, NULL, "import '%s': layer %zu ('%.200s') is "
                                "not in the tarball", t->file, i + 1, ln ?: "");
        /* Named blobs/sha256/HEX it was checked already (it may be
         * compressed); a layer.tar is what its diff_id says. */
        else if (!claimed(lm->name, false, want) && strcmp(diff ?: "", lm->digest) != 0)
            rc = core_error_set(SBX_E_BACKEND, NULL, "import '%s': layer %zu ('%.200s') does "
                                "not match its digest %.80s (it holds %s): refused", t->file,
                                i + 1, ln, diff ?: "(none)", lm->digest);
        else if (json_array_append_new(json_object_get(out, "layers"),
                     json_pack("{s:s, s:I, s:s}", "mediaType",
                               "application/vnd.docker.image.rootfs.diff.tar",
                               "size", (json_int_t)lm->size, "digest", lm->digest)) != 0)
            rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    }
    json_decref(config);
    if (rc == SBX_OK && !(*body = json_dumps(out, JSON_COMPACT)))
        rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    if (rc == SBX_OK) {
        *len = strlen(*body);
        img_digest_of(*body, *len, digest);
        *m = out;
    } else {
        json_decref(out);
    }
    return rc;
}

/* ---- the images of the tarball and their names ------------------------ */

/* One image: an entry of index.json or manifest.json (entries naming the
 * same manifest, as docker save writes one per tag, are one image). */
typedef struct image {
    json_t *m;                  /* its manifest */
    char *body;
    size_t len;
    char digest[IMG_DIGEST_LEN + 1];
    size_t entry;               /* its first entry, from 1, for messages */
    bool chosen;
} image;

/* A name the tarball gives an image (normalised), or the NAME given. */
typedef struct img_name {
    char text[IMG_REF_TEXT_MAX];
    size_t img;
} img_name;

typedef struct images {
    image v[IMP_IMAGES_MAX];
    size_t n;
    img_name *names;            /* IMP_NAMES_MAX of them */
    size_t n_names;
    size_t bytes;               /* of the manifests held */
} images;

static void images_free(images *im)
{
    if (!im)
        return;
    for (size_t i = 0; i < im->n; i++) {
        json_decref(im->v[i].m);
        free(im->v[i].body);
    }
    free(im->names);
    free(im);
}

/* Record @raw as a name of image @img.  A name that is not a reference
 * refuses the import when @strict (the tarball's names are to be
 * recorded), and is passed over otherwise (a NAME was given). */
static int name_add(const tarball *t, images *im, const char *raw, size_t img, bool strict)
{
    if (!raw || !*raw)
        return SBX_OK;
    img_ref r;
    char why[160] = "too long", text[IMG_REF_TEXT_MAX];
    if (!img_ref_parse(raw, &r, why, sizeof why) || !img_ref_format(&r, text, sizeof text))
        return !strict ? SBX_OK
                       : core_error_set(SBX_E_BACKEND, NULL, "import '%s': the tarball names "
                                        "its image '%.200s', not a usable reference (%s): "
                                        "give a NAME[:TAG]", t->file, raw, why);
    for (size_t i = 0; i < im->n_names; i++) {
        if (strcmp(im->names[i].text, text) != 0)
            continue;
        if (im->names[i].img == img)
            return SBX_OK;              /* said twice */
        return core_error_set(SBX_E_BACKEND, NULL, "import '%s': '%s' names two images "
                              "(entries %zu and %zu): refused", t->file, text,
                              im->v[im->names[i].img].entry, im->v[img].entry);
    }
    if (im->n_names == IMP_NAMES_MAX)
        return core_error_set(SBX_E_BACKEND, NULL, "import '%s': more than %d image names: "
                              "refused", t->file, IMP_NAMES_MAX);
    memcpy(im->names[im->n_names].text, text, sizeof text);
    im->names[im->n_names++].img = img;
    return SBX_OK;
}

static size_t names_of(const images *im, size_t img)
{
    size_t k = 0;
    for (size_t i = 0; i < im->n_names; i++)
        k += im->names[i].img == img;
    return k;
}

/* An index.json entry without a name annotation takes the RepoTags of
 * the entry of docker save's manifest.json (@tags) whose Config is its
 * manifest's config. */
static int tags_of(const tarball *t, images *im, size_t img, json_t *tags, bool strict)
{
    const char *cd = json_string_value(json_object_get(json_object_get(im->v[img].m, "config"),
                                                       "digest"));
    size_t i, j;
    json_t *e, *v;
    int rc = SBX_OK;
    json_array_foreach(tags, i, e) {
        const member *cm = find_named(t, json_string_value(json_object_get(e, "Config")));
        if (!cd || !cm || strcmp(cm->digest, cd) != 0)
            continue;
        json_array_foreach(json_object_get(e, "RepoTags"), j, v)
            if (rc == SBX_OK)
                rc = name_add(t, im, json_string_value(v), img, strict);
    }
    return rc;
}

/* Entry @e (number @entry) of index.json (@index) or manifest.json: its
 * manifest, and its names. */
static int add_image(tarball *t, images *im, json_t *e, size_t entry, bool index, json_t *tags,
                     bool strict)
{
    image *g = &im->v[im->n];
    memset(g, 0, sizeof *g);
    g->entry = entry;
    int rc = index ? from_index(t, &g->m, &g->body, &g->len, g->digest, e)
                   : from_docker(t, &g->m, &g->body, &g->len, g->digest, e);
    size_t k = im->n;
    for (size_t i = 0; rc == SBX_OK && i < im->n; i++)
        if (strcmp(im->v[i].digest, g->digest) == 0)
            k = i;                      /* another tag of an image already read */
    if (rc == SBX_OK && k == im->n && im->bytes + g->len > IMP_DOCS_MAX)
        rc = core_error_set(SBX_E_BACKEND, NULL, "import '%s': its manifests are over %u "
                            "bytes: refused", t->file, IMP_DOCS_MAX);
    if (rc != SBX_OK || k != im->n) {
        json_decref(g->m);
        free(g->body);
        memset(g, 0, sizeof *g);
    } else {
        im->bytes += g->len;
        im->n++;
    }
    if (rc != SBX_OK)
        return rc;
    size_t before = im->n_names;
    if (!index) {
        size_t i;
        json_t *v;
        json_array_foreach(json_object_get(e, "RepoTags"), i, v)
            if (rc == SBX_OK)
                rc = name_add(t, im, json_string_value(v), k, strict);
        return rc;
    }
    json_t *ann = json_object_get(e, "annotations");
    const char *full = json_string_value(json_object_get(ann, "io.containerd.image.name"));
    const char *ref = json_string_value(json_object_get(ann, "org.opencontainers.image.ref.name"));
    rc = name_add(t, im, full, k, strict);
    if (rc == SBX_OK && !full && ref && strpbrk(ref, "/:"))     /* a bare tag names no image */
        rc = name_add(t, im, ref, k, strict);
    if (rc == SBX_OK && im->n_names == before && tags)
        rc = tags_of(t, im, k, tags, strict);
    return rc;
}

/* "NAME, NAME, ..." of every image, "(entry N: no name)" for one without. */
static void list_names(const images *im, char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    for (size_t g = 0; g < im->n && at < len; g++) {
        bool any = false;
        for (size_t i = 0; i < im->n_names && at < len; i++)
            if (im->names[i].img == g) {
                at += (size_t)snprintf(out + at, len - at, "%s%s", at ? ", " : "",
                                       im->names[i].text);
                any = true;
            }
        if (!any && at < len)
            at += (size_t)snprintf(out + at, len - at, "%s(entry %zu: no name)", at ? ", " : "",
                                   im->v[g].entry);
    }
}

/* Which images to store, under which names: with @name (normalised),
 * the only image, or the one it names; else every image, each under the
 * names the tarball gives it. */
static int choose(const tarball *t, images *im, const char *name)
{
    char list[1024];
    if (name) {
        size_t k = im->n;
        if (im->n == 1)
            k = 0;
        for (size_t i = 0; k == im->n && i < im->n_names; i++)
            if (strcmp(im->names[i].text, name) == 0)
                k = im->names[i].img;
        if (k == im->n) {
            list_names(im, list, sizeof list);
            return core_error_set(SBX_E_INVAL, NULL, "import '%s' holds %zu images, none named "
                                  "'%s': give one of %s (or no NAME, to import them all)",
                                  t->file, im->n, name, list);
        }
        im->v[k].chosen = true;
        snprintf(im->names[0].text, sizeof im->names[0].text, "%s", name);
        im->names[0].img = k;
        im->n_names = 1;
        return SBX_OK;
    }
    for (size_t g = 0; g < im->n; g++) {
        if (names_of(im, g))
            continue;
        if (im->n == 1)
            return core_error_set(SBX_E_INVAL, NULL, "import '%s': the tarball names no image "
                                  "(no RepoTags, no image name annotation): give a NAME[:TAG]",
                                  t->file);
        list_names(im, list, sizeof list);
        return core_error_set(SBX_E_INVAL, NULL, "import '%s' holds %zu images and entry %zu "
                              "has no name (no RepoTags, no image name annotation): %s; give "
                              "a NAME to import one of them alone", t->file, im->n,
                              im->v[g].entry, list);
    }
    for (size_t g = 0; g < im->n; g++)
        im->v[g].chosen = true;
    return SBX_OK;
}

int img_import(const img_store *s, const char *file, const char *name,
               const core_platform *want, sbx_image_visit_fn fn, void *arg)
{
    tarball t = { .s = s, .file = strcmp(file, "-") == 0 ? "standard input" : file,
                  .want = want };
    json_t *doc = NULL, *tags = NULL;
    images *im = calloc(1, sizeof *im);
    int rc = im && (im->names = calloc(IMP_NAMES_MAX, sizeof *im->names))
                 ? read_tarball(&t, file)
                 : core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    /* index.json first: docker save since 25 writes both, and only the
     * index has the manifest's own digest. */
    int which = t.doc[DOC_INDEX] ? DOC_INDEX : DOC_MANIFEST;
    json_error_t je;
    if (rc == SBX_OK && !(doc = json_loadb(t.doc[which], t.doc_len[which], 0, &je)))
        rc = core_error_set(SBX_E_BACKEND, NULL, "import '%s': %s is not JSON (%s, line %d)",
                            t.file, doc_names[which], je.text, je.line);
    json_t *entries = which == DOC_INDEX ? json_object_get(doc, "manifests") : doc;
    size_t n = json_is_array(entries) ? json_array_size(entries) : 0;
    if (rc == SBX_OK && (n == 0 || n > IMP_IMAGES_MAX))
        rc = core_error_set(SBX_E_BACKEND, NULL, "import '%s': %s lists %zu images (1 to %d "
                            "can be imported)", t.file, doc_names[which], n, IMP_IMAGES_MAX);
    /* The names an index does not give may be in docker save's manifest.json. */
    if (rc == SBX_OK && which == DOC_INDEX && t.doc[DOC_MANIFEST])
        tags = json_loadb(t.doc[DOC_MANIFEST], t.doc_len[DOC_MANIFEST], 0, NULL);
    for (size_t i = 0; rc == SBX_OK && i < n; i++)
        rc = add_image(&t, im, json_array_get(entries, i), i + 1, which == DOC_INDEX,
                       json_is_array(tags) ? tags : NULL, !name);
    if (rc == SBX_OK)
        rc = choose(&t, im, name);
    for (size_t g = 0; rc == SBX_OK && g < im->n; g++)
        if (im->v[g].chosen)
            rc = img_manifest_blobs(im->v[g].m, t.file, im->v[g].digest, "", have, &t);
    for (size_t i = 0; rc == SBX_OK && i < t.n; i++)
        if (t.v[i].used) {
            rc = img_store_keep(s, SBX_OK, -1, t.v[i].tmp, t.v[i].digest);
            t.v[i].tmp = NULL;
        }
    for (size_t g = 0; rc == SBX_OK && g < im->n; g++)
        if (im->v[g].chosen)
            rc = img_store_image(s, im->v[g].m, im->v[g].body, im->v[g].len, t.file,
                                 im->v[g].digest);
    /* Every image stored before any name is recorded. */
    for (size_t i = 0; rc == SBX_OK && i < im->n_names; i++) {
        const image *g = &im->v[im->names[i].img];
        if (!g->chosen)
            continue;
        char *root = img_root_path(s, g->digest);
        if (!root)
            rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        else if ((rc = img_store_set_ref(s, im->names[i].text, g->digest)) == SBX_OK && fn)
            fn(im->names[i].text, g->digest, root, arg);
        free(root);
    }
    json_decref(tags);
    json_decref(doc);
    images_free(im);
    tarball_free(&t);
    return rc;
}

SBX_API int sbx_image_import(sbx_ctx *ctx, const char *file, const char *ref,
                             sbx_image_visit_fn fn, void *arg)
{
    core_error_clear();
    if (!ctx || !file)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_image_import: no context or file");
    img_ref r;
    char text[IMG_REF_TEXT_MAX];
    img_store s;
    int rc = ref ? img_begin(ctx, ref, "sbx_image_import", &r, text, &s)
                 : img_store_open(&s, ctx->cfg.state_dir, ctx->cfg.image_dir);
    if (rc != SBX_OK)
        return rc;
    if (ref && r.digest[0]) {
        img_store_close(&s);
        return core_error_set(SBX_E_INVAL, NULL, "image '%s': import records a NAME[:TAG], "
                              "not a digest (the image's digest is its own)", text);
    }
    core_platform want;
    img_platform_want(ctx, &want);
    if ((rc = img_store_lock(&s, false)) == SBX_OK)
        rc = img_import(&s, file, ref ? text : NULL, &want, fn, arg);
    img_store_close(&s);
    return rc;
}
