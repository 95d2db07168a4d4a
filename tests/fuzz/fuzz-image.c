/* tests/fuzz/fuzz-image.c - the hand-written parsers of the image store:
 * image references (core/image/ref.c) and a registry's WWW-Authenticate
 * header (core/image/challenge.c)
 *
 * The first byte picks the parser (even: reference, odd: header), the
 * rest is its input.  Beyond not crashing: an accepted reference always
 * has a registry, a path and a tag or digest, formats within bounds, and
 * reads back to itself; a refused one says why; an accepted challenge is
 * Basic, or Bearer with a realm.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "image/image-int.h"

static void reference(const uint8_t *data, size_t size)
{
    char *s = fz_strndup(data, size);
    img_ref r, again;
    char why[160] = "", text[600], why2[160];
    if (!img_ref_parse(s, &r, why, sizeof why)) {
        if (!why[0])
            fz_fail("reference '%s' refused without a reason", s);
        free(s);
        return;
    }
    if (!r.domain[0] || !r.path[0] || (!r.tag[0] && !r.digest[0]))
        fz_fail("reference '%s' accepted without a registry, path, or tag or digest", s);
    if (r.digest[0] && !img_digest_valid(r.digest))
        fz_fail("reference '%s': digest '%s' accepted", s, r.digest);
    if (!img_ref_format(&r, text, sizeof text))
        fz_fail("reference '%s' accepted but does not format", s);
    else if (!img_ref_parse(text, &again, why2, sizeof why2))
        fz_fail("reference '%s' formats as '%s', which is refused: %s", s, text, why2);
    else if (memcmp(&r, &again, sizeof r) != 0 &&
             (strcmp(r.domain, again.domain) || strcmp(r.path, again.path) ||
              strcmp(r.tag, again.tag) || strcmp(r.digest, again.digest)))
        fz_fail("reference '%s' formats as '%s', which reads otherwise", s, text);
    free(s);
}

static void challenge(const uint8_t *data, size_t size)
{
    img_challenge c;
    /* Not NUL-terminated: the parser must keep to @size. */
    char *copy = malloc(size ? size : 1);
    if (!copy)
        abort();
    memcpy(copy, data, size);
    if (img_challenge_parse(copy, size, &c)) {
        if (c.scheme != IMG_AUTH_BASIC && c.scheme != IMG_AUTH_BEARER)
            fz_fail("a challenge accepted with scheme %d", c.scheme);
        if (c.scheme == IMG_AUTH_BEARER && !c.realm[0])
            fz_fail("a Bearer challenge accepted without a realm");
        if (strlen(c.realm) >= sizeof c.realm || strlen(c.service) >= sizeof c.service ||
            strlen(c.scope) >= sizeof c.scope)
            fz_fail("a challenge's field overran");
    }
    free(copy);
}

static int one(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    if (data[0] % 2 == 0)
        reference(data + 1, size - 1);
    else
        challenge(data + 1, size - 1);
    return 0;
}

FZ_TARGET(image, NULL, one)
