/* tests/fuzz/fuzz.h - what the fuzz targets share
 *
 * A target is one file, tests/fuzz/fuzz-NAME.c, that feeds bytes to one
 * parser of ours through its real entry point and registers itself with
 *
 *     FZ_TARGET(name, init, one)
 *
 * where init (may be NULL) runs once before the first input and one runs
 * each input: it returns 0, and calls fz_fail() when the code broke a
 * promise it makes (a crash or a sanitizer report needs no call).  The
 * same files are linked into two programs: polysandbox-fuzz (libFuzzer,
 * configure --enable-fuzzing) and replay (plain, `make check`), which runs
 * every file of tests/fuzz/corpus/NAME/ through target NAME.
 *
 * Inputs are hostile by definition; a target must not write outside
 * fz_dir(), reach any address but 127.0.0.1, nor keep state between
 * inputs that changes what the next one does.
 */
#ifndef POLYSANDBOX_TESTS_FUZZ_H
#define POLYSANDBOX_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

typedef struct fz_target {
    const char *name;
    void (*init)(void);
    int (*one)(const uint8_t *data, size_t size);
} fz_target;

/* Called by FZ_TARGET's constructor. */
void fz_register(const fz_target *t);
/* The registered targets, in name order; *n gets their count. */
const fz_target *const *fz_targets(size_t *n);
const fz_target *fz_find(const char *name);

#define FZ_TARGET(name_, init_, one_)                                       \
    static const fz_target fz_target_##name_ = { #name_, init_, one_ };     \
    __attribute__((constructor)) static void fz_register_##name_(void)      \
    {                                                                       \
        fz_register(&fz_target_##name_);                                   \
    }

/* A private directory for the run (made on first use, removed at exit). */
const char *fz_dir(void);
/* fz_dir()/@rel, malloc'd (aborts when out of memory). */
char *fz_path(const char *rel);
/* Writes @len bytes to fz_dir()/@rel (parents made), replacing it; aborts
 * on failure, which is the harness's, not the target's. */
void fz_write(const char *rel, const void *data, size_t len);
/* A cage for code that writes files: fz_dir()/@rel holds "outside/secret"
 * ("secret\n"), which whatever the input says must stay as it is.
 * fz_cage_check fails unless the cage holds only "outside" and the names
 * of @allowed (NULL-terminated; "NAME*" for a prefix) and the secret is
 * untouched (content, type, link count). */
void fz_cage_make(const char *rel);
void fz_cage_check(const char *cage, const char *const *allowed);
/* @data as a NUL-terminated string, malloc'd (embedded NULs kept). */
char *fz_strndup(const uint8_t *data, size_t len);
/* The code under test broke a promise: report it and abort, so that the
 * fuzzer keeps the input. */
void fz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Aborts with a message when out of memory or a system call of the
 * harness failed. */
void *fz_xmalloc(size_t n);

/* A context on a configuration of the harness (templates python and sh,
 * no provider), made on first use. */
struct sbx_ctx *fz_ctx(void);

/* Splits @data at each "\n@@@@\n": *n parts, each (pointer, length) into
 * @data.  At most @max parts; the last one takes the rest. */
typedef struct fz_part {
    const uint8_t *p;
    size_t len;
} fz_part;
size_t fz_split(const uint8_t *data, size_t size, fz_part *parts, size_t max);
#define FZ_SEPARATOR "\n@@@@\n"

#endif
