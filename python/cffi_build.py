"""python/cffi_build.py - writes the C source of polysandbox._polysandbox_cffi,
the package's cffi backend (API mode), compiled against the library's
header <polysandbox/sandbox.h> and linked with libpolysandbox by make
(python/local.mk).

    python3 cffi_build.py OUT.c [--replace OLD NEW]

CDEF declares the calls the cffi backend makes (python/polysandbox/
_cffi.py), each written as the header writes it.  cffi's own wrappers
convert arguments silently (a uint64_t declared as uint32_t would
compile), so the source also asserts, for every prototype, that its
function type is the header's one: a prototype that differs from the
header fails the build.  --replace edits CDEF first (the test
tests/python/cffi-check.sh uses it to show that such a mismatch fails).
"""

import re
import sys

import cffi

# The handles and enums as the header names them (the enums' sizes are
# the compiler's: "int...").
TYPES = """
typedef struct sbx_ctx sbx_ctx;
typedef struct sbx_sandbox sbx_sandbox;
typedef struct sbx_create_opts sbx_create_opts;
typedef struct sbx_exec_opts sbx_exec_opts;
typedef struct sbx_result sbx_result;
typedef struct sbx_cancel sbx_cancel;
typedef int... sbx_limit;
typedef int... sbx_network;
typedef int... sbx_file_type;
typedef int (*sbx_output_cb)(void *ud, int stream, const void *buf, size_t len);
typedef int (*sbx_file_cb)(void *ud, const char *name, size_t name_len, sbx_file_type type,
                           uint64_t size, int64_t mtime_unix);
"""

# One prototype a line (checked against the header, see above).
CDEF = """
sbx_create_opts *sbx_create_opts_new(void);
void sbx_create_opts_free(sbx_create_opts *o);
int sbx_create_opts_set_provider(sbx_create_opts *o, const char *name);
int sbx_create_opts_set_fallback(sbx_create_opts *o, const char *const *names);
int sbx_create_opts_set_template(sbx_create_opts *o, const char *name);
int sbx_create_opts_set_image(sbx_create_opts *o, const char *image);
int sbx_create_opts_set_limit(sbx_create_opts *o, sbx_limit which, uint64_t value);
int sbx_create_opts_set_network(sbx_create_opts *o, sbx_network net);
int sbx_create_opts_set_persistent(sbx_create_opts *o, bool on);
int sbx_create_opts_add_env(sbx_create_opts *o, const char *key, const char *value);
int sbx_create_opts_add_label(sbx_create_opts *o, const char *key, const char *value);
int sbx_create_opts_set_ttl(sbx_create_opts *o, uint64_t ttl_ns);
sbx_exec_opts *sbx_exec_opts_new(void);
void sbx_exec_opts_free(sbx_exec_opts *o);
int sbx_exec_opts_set_argv(sbx_exec_opts *o, const char *const *argv);
int sbx_exec_opts_set_shell(sbx_exec_opts *o, const char *line);
int sbx_exec_opts_set_code(sbx_exec_opts *o, const char *lang, const char *code, size_t len);
int sbx_exec_opts_set_args(sbx_exec_opts *o, const char *const *args);
int sbx_exec_opts_set_stdin(sbx_exec_opts *o, const void *data, size_t len);
int sbx_exec_opts_add_env(sbx_exec_opts *o, const char *key, const char *value);
int sbx_exec_opts_set_cwd(sbx_exec_opts *o, const char *cwd);
int sbx_exec_opts_set_timeout(sbx_exec_opts *o, uint64_t ns);
int sbx_exec_opts_add_file(sbx_exec_opts *o, const char *path, const void *data, size_t len, uint32_t mode);
int sbx_exec_opts_set_cancel(sbx_exec_opts *o, sbx_cancel *c);
int sbx_exec_opts_set_output_cb(sbx_exec_opts *o, sbx_output_cb cb, void *ud);
int sbx_sandbox_create(sbx_ctx *ctx, const sbx_create_opts *opts, sbx_sandbox **out);
int sbx_sandbox_get_or_create(sbx_ctx *ctx, const sbx_create_opts *opts, sbx_sandbox **out, bool *created);
int sbx_sandbox_open(sbx_ctx *ctx, const char *provider, const char *id, sbx_sandbox **out);
int sbx_sandbox_exec(sbx_sandbox *sb, const sbx_exec_opts *opts, sbx_result **out);
int sbx_sandbox_upload(sbx_sandbox *sb, const char *path, const void *data, size_t len, uint32_t mode);
int sbx_sandbox_download(sbx_sandbox *sb, const char *path, size_t max, void **data, size_t *len);
int sbx_sandbox_list_files(sbx_sandbox *sb, const char *dir, size_t max, sbx_file_cb cb, void *ud, bool *truncated);
const char *sbx_file_type_name(sbx_file_type t);
int sbx_sandbox_destroy(sbx_sandbox *sb);
void sbx_sandbox_close(sbx_sandbox *sb);
const char *sbx_sandbox_id(const sbx_sandbox *sb);
const char *sbx_sandbox_provider(const sbx_sandbox *sb);
int sbx_run(sbx_ctx *ctx, const sbx_create_opts *copts, const sbx_exec_opts *xopts, sbx_result **out);
void sbx_result_free(sbx_result *r);
char *sbx_result_to_json(const sbx_result *r);
void free(void *p);
"""

# The library's callbacks into Python (def_extern in _cffi.py).
CALLBACKS = """
extern "Python" int _psb_output_cb(void *ud, int stream, const void *buf, size_t len);
extern "Python" int _psb_file_cb(void *ud, const char *name, size_t name_len,
                                 sbx_file_type type, uint64_t size, int64_t mtime_unix);
"""

_NAME = re.compile(r"(\w+)\(")


def checks(cdef: str) -> str:
    """C asserting that each prototype of cdef has the header's type."""
    out = []
    for proto in filter(None, (line.strip() for line in cdef.splitlines())):
        name = _NAME.search(proto).group(1)
        typedef = proto.replace(name + "(", f"(psb_chk_{name})(", 1)
        out.append(f"typedef {typedef}\n"
                   f"_Static_assert(__builtin_types_compatible_p(__typeof__({name}), "
                   f"psb_chk_{name}), \"{name}: the prototype of python/cffi_build.py "
                   f"differs from <polysandbox/sandbox.h>\");")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 5) or (len(argv) == 5 and argv[2] != "--replace"):
        print("usage: cffi_build.py OUT.c [--replace OLD NEW]", file=sys.stderr)
        return 2
    cdef = CDEF
    if len(argv) == 5:
        if argv[3] not in cdef:
            print(f"cffi_build.py: {argv[3]!r} is not in CDEF", file=sys.stderr)
            return 2
        cdef = cdef.replace(argv[3], argv[4])
    ffi = cffi.FFI()
    ffi.cdef(TYPES + cdef + CALLBACKS)
    ffi.set_source("polysandbox._polysandbox_cffi",
                   "#include <stdlib.h>\n#include <polysandbox/sandbox.h>\n" + checks(cdef))
    ffi.emit_c_code(argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
