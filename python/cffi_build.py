"""python/cffi_build.py - the C source of polysandbox._polysandbox_cffi,
the package's cffi backend (API mode), compiled against the library's
headers <polysandbox/sandbox.h> and <polysandbox/eval.h> and linked with
libpolysandbox: by make (python/local.mk), which has this write the
source,

    python3 cffi_build.py OUT.c [--replace OLD NEW]

or by `pip install ./python` (setup.py: cffi_modules runs ffibuilder(),
which finds the library with pkg-config polysandbox).

CDEF declares the calls the cffi backend makes (python/polysandbox/
_cffi.py), each written as the header writes it.  cffi's own wrappers
convert arguments silently (a uint64_t declared as uint32_t would
compile), so the source also asserts, for every prototype, that its
function type is the header's one: a prototype that differs from the
header fails the build.  --replace edits CDEF first (the test
tests/python/cffi-check.sh uses it to show that such a mismatch fails).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from typing import Any

MODULE = "polysandbox._polysandbox_cffi"
HEADER = "polysandbox/sandbox.h"
HEADERS = ("#include <stdlib.h>\n#include <polysandbox/sandbox.h>\n"
           "#include <polysandbox/eval.h>\n")

# The handles and enums as the header names them (the enums' sizes are
# the compiler's: "int...").
TYPES = """
typedef struct sbx_ctx sbx_ctx;
typedef struct sbx_error sbx_error;
typedef struct sbx_sandbox sbx_sandbox;
typedef struct sbx_create_opts sbx_create_opts;
typedef struct sbx_exec_opts sbx_exec_opts;
typedef struct sbx_result sbx_result;
typedef struct sbx_cancel sbx_cancel;
typedef struct sbx_provider sbx_provider;
typedef struct sbx_template sbx_template;
typedef struct sbx_eval_dataset sbx_eval_dataset;
typedef struct sbx_eval_samples sbx_eval_samples;
typedef struct sbx_eval_opts sbx_eval_opts;
typedef struct sbx_eval_record sbx_eval_record;
typedef struct sbx_eval_summary sbx_eval_summary;
typedef struct sbx_eval_report sbx_eval_report;
typedef int... sbx_limit;
typedef int... sbx_provider_state;
typedef int... sbx_breaker_state;
typedef int... sbx_pool_stat;
typedef int... sbx_eval_format;
typedef int... sbx_network;
typedef int... sbx_file_type;
typedef int (*sbx_output_cb)(void *ud, int stream, const void *buf, size_t len);
typedef int (*sbx_file_cb)(void *ud, const char *name, size_t name_len, sbx_file_type type,
                           uint64_t size, int64_t mtime_unix);
typedef int (*sbx_list_cb)(void *ud, const char *id, const char *const *labels,
                           size_t n_labels, uint64_t created_unix_ns);
typedef int (*sbx_eval_record_cb)(void *ud, const sbx_eval_record *rec, size_t done,
                                  size_t total, size_t passed);
"""

# One prototype a line (checked against the header, see above).
CDEF = """
const char *sbx_strerror(int code);
int sbx_ctx_new(sbx_ctx **out, const char *config_dir);
const sbx_error *sbx_ctx_last_error(const sbx_ctx *ctx);
int sbx_error_code(const sbx_error *e);
const char *sbx_error_message(const sbx_error *e);
const char *sbx_error_provider(const sbx_error *e);
sbx_cancel *sbx_cancel_new(void);
void sbx_cancel_fire(sbx_cancel *c);
bool sbx_cancel_fired(const sbx_cancel *c);
void sbx_cancel_free(sbx_cancel *c);
int sbx_list_labeled(sbx_ctx *ctx, const char *provider, const char *const *filter, size_t n_filter, sbx_list_cb cb, void *ud);
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
int sbx_ctx_new_with(sbx_ctx **out, const char *config_dir, const char *const *overrides);
void sbx_ctx_free(sbx_ctx *ctx);
const char *sbx_ctx_default_provider(const sbx_ctx *ctx);
size_t sbx_ctx_provider_count(const sbx_ctx *ctx);
const sbx_provider *sbx_ctx_provider(const sbx_ctx *ctx, size_t i);
const char *sbx_provider_name(const sbx_provider *p);
const char *sbx_provider_version(const sbx_provider *p);
const char *sbx_provider_description(const sbx_provider *p);
const char *sbx_provider_path(const sbx_provider *p);
sbx_provider_state sbx_provider_get_state(const sbx_provider *p);
const char *sbx_provider_reason(const sbx_provider *p);
uint64_t sbx_provider_capabilities(const sbx_provider *p);
int sbx_provider_priority(const sbx_provider *p);
bool sbx_provider_is_optional(const sbx_provider *p);
sbx_breaker_state sbx_provider_breaker(const sbx_provider *p);
unsigned sbx_provider_breaker_failures(const sbx_provider *p);
const char *sbx_breaker_state_name(sbx_breaker_state s);
const char *sbx_capability_name(uint64_t bit);
size_t sbx_ctx_template_count(const sbx_ctx *ctx);
const sbx_template *sbx_ctx_template(const sbx_ctx *ctx, size_t i);
const char *sbx_template_name(const sbx_template *t);
const char *sbx_template_extensions(const sbx_template *t);
size_t sbx_ctx_pool_count(const sbx_ctx *ctx);
const char *sbx_ctx_pool_name(const sbx_ctx *ctx, size_t i);
const char *sbx_pool_provider(const sbx_ctx *ctx, const char *pool);
const char *sbx_pool_template(const sbx_ctx *ctx, const char *pool);
const char *sbx_pool_stat_name(sbx_pool_stat s);
int sbx_pool_stats(sbx_ctx *ctx, const char *pool, uint64_t *out, size_t n);
int sbx_pool_last_error(sbx_ctx *ctx, const char *pool, char *buf, size_t size);
int sbx_pool_wait(sbx_ctx *ctx, const char *pool, uint64_t timeout_ns);
int sbx_eval_dataset_load(sbx_ctx *ctx, const char *path, sbx_eval_format fmt, sbx_eval_dataset **out);
void sbx_eval_dataset_free(sbx_eval_dataset *ds);
int sbx_eval_samples_load(sbx_ctx *ctx, const sbx_eval_dataset *ds, const char *path, sbx_eval_samples **out);
int sbx_eval_samples_canonical(sbx_ctx *ctx, const sbx_eval_dataset *ds, sbx_eval_samples **out);
void sbx_eval_samples_free(sbx_eval_samples *s);
sbx_eval_opts *sbx_eval_opts_new(void);
void sbx_eval_opts_free(sbx_eval_opts *o);
int sbx_eval_opts_set_providers(sbx_eval_opts *o, const char *const *names);
int sbx_eval_opts_set_jobs(sbx_eval_opts *o, unsigned jobs);
int sbx_eval_opts_set_timeout(sbx_eval_opts *o, uint64_t ns);
int sbx_eval_opts_set_limit(sbx_eval_opts *o, sbx_limit which, uint64_t value);
int sbx_eval_opts_set_retries(sbx_eval_opts *o, unsigned retries);
int sbx_eval_opts_set_journal(sbx_eval_opts *o, const char *path, bool resume);
int sbx_eval_opts_set_callback(sbx_eval_opts *o, sbx_eval_record_cb cb, void *ud);
int sbx_eval_opts_set_cancel(sbx_eval_opts *o, sbx_cancel *c);
int sbx_eval_opts_set_allow_partial(sbx_eval_opts *o, bool on);
int sbx_eval_run(sbx_ctx *ctx, const sbx_eval_dataset *ds, const sbx_eval_samples *s, const sbx_eval_opts *o, sbx_eval_summary **out);
void sbx_eval_summary_free(sbx_eval_summary *sum);
int sbx_eval_summary_load(sbx_ctx *ctx, const sbx_eval_dataset *ds, const sbx_eval_samples *s, const char *path, sbx_eval_summary **out);
size_t sbx_eval_summary_total(const sbx_eval_summary *sum);
const sbx_eval_record *sbx_eval_summary_record(const sbx_eval_summary *sum, size_t sample);
const char *sbx_eval_record_provider(const sbx_eval_record *r);
char *sbx_eval_summary_to_json(const sbx_eval_summary *sum, const unsigned *ks, size_t n_ks);
char *sbx_eval_meta_to_json(const char *dataset, const char *samples_file, const sbx_eval_opts *o, const char *const *providers);
int sbx_eval_report_new(const sbx_eval_samples *s, const char *dataset, const char *samples_file, sbx_eval_report **out);
void sbx_eval_report_free(sbx_eval_report *r);
int sbx_eval_report_add(sbx_eval_report *r, const char *label, const char *provider, const char *results, const char *const *settings, const sbx_eval_summary *sum);
int sbx_eval_report_set_opts(sbx_eval_report *r, const sbx_eval_opts *o);
int sbx_eval_report_set_files(sbx_eval_report *r, const char *prefix);
char *sbx_eval_report_to_json(const sbx_eval_report *r, const unsigned *ks, size_t n_ks);
char *sbx_eval_report_to_markdown(const sbx_eval_report *r, const unsigned *ks, size_t n_ks);
char *sbx_eval_report_to_html(const sbx_eval_report *r, const unsigned *ks, size_t n_ks);
void free(void *p);
"""

# The library's callbacks into Python (def_extern in _cffi.py).
CALLBACKS = """
extern "Python" int _psb_output_cb(void *ud, int stream, const void *buf, size_t len);
extern "Python" int _psb_file_cb(void *ud, const char *name, size_t name_len,
                                 sbx_file_type type, uint64_t size, int64_t mtime_unix);
extern "Python" int _psb_list_cb(void *ud, const char *id, const char *const *labels,
                                 size_t n_labels, uint64_t created_unix_ns);
extern "Python" int _psb_eval_cb(void *ud, const sbx_eval_record *rec, size_t done,
                                 size_t total, size_t passed);
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


def make_ffi(cdef: str = CDEF, **ext: Any) -> Any:
    """The FFI of the module with the prototypes cdef; ext: the Extension's
    arguments (include_dirs, libraries, ...) when setuptools compiles it."""
    import cffi  # here: setup.py reads pkg_config() without it

    ffi = cffi.FFI()
    ffi.cdef(TYPES + cdef + CALLBACKS)
    ffi.set_source(MODULE, HEADERS + checks(cdef), **ext)
    return ffi


def pkg_config(pkg: str = "polysandbox") -> dict[str, list[str]]:
    """The Extension arguments of `pkg-config pkg` (include_dirs,
    library_dirs, runtime_library_dirs, libraries); RuntimeError saying
    why when pkg-config or pkg is missing, or the header is not where it
    says."""
    def ask(*what: str) -> list[str]:
        try:
            p = subprocess.run(["pkg-config", *what, pkg], capture_output=True, text=True)
        except OSError as e:
            raise RuntimeError(f"no pkg-config ({e.strerror})") from None
        if p.returncode != 0:
            why = (p.stderr.strip() or "no output").splitlines()[0]
            raise RuntimeError(f"pkg-config {pkg} failed ({why}): install the library, or "
                               f"set PKG_CONFIG_PATH to the directory of its {pkg}.pc")
        return shlex.split(p.stdout)

    def strip(flag: str, words: list[str]) -> list[str]:
        return [w[len(flag):] for w in words if w.startswith(flag)]

    # pkg-config leaves the compiler's own directories out of --cflags:
    # the header may be in its includedir alone.
    inc = strip("-I", ask("--cflags-only-I"))
    seen = inc + ask("--variable=includedir")
    if not any(os.path.isfile(os.path.join(d, HEADER)) for d in seen):
        raise RuntimeError(f"<{HEADER}> is not in {' '.join(seen) or 'the include path'} "
                           f"(pkg-config {pkg}: install the library's development files)")
    libdirs = strip("-L", ask("--libs-only-L"))
    # The library's directory is searched at run time too (a prefix the
    # dynamic loader does not know of, such as a build tree's).
    return {"include_dirs": inc, "library_dirs": libdirs, "runtime_library_dirs": libdirs,
            "libraries": strip("-l", ask("--libs-only-l"))}


def ffibuilder() -> Any:
    """The FFI setup.py's cffi_modules compiles (pip install): the
    header and library pkg-config names."""
    return make_ffi(CDEF, **pkg_config())


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
    make_ffi(cdef).emit_c_code(argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
