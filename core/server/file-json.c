/* core/server/file-json.c - one directory entry as JSON
 *
 * polysandboxd's listing route and `polysandbox files --json` give the
 * same objects: both compile this file.  Depends on jansson, b64.c
 * and json-text.c only.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "b64.h"
#include "file-json.h"
#include "json-text.h"

json_t *srv_file_json(const char *name, size_t len, sbx_file_type type, uint64_t size,
                      int64_t mtime)
{
    json_t *text = srv_json_text(name, len), *e;
    /* A name that is not UTF-8 is shown with U+FFFD; its bytes go along. */
    bool exact = text && json_string_length(text) == len &&
                 memcmp(json_string_value(text), name, len) == 0;

    e = json_pack("{s:o, s:s, s:I, s:I}", "name", text, "type", sbx_file_type_name(type),
                  "size", (json_int_t)size, "mtime", (json_int_t)mtime);
    if (!e || exact)
        return e;
    if (json_object_set_new(e, "name_base64", srv_b64_json(name, len)) != 0) {
        json_decref(e);
        e = NULL;
    }
    return e;
}
