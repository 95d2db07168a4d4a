"""polysandbox._native - libpolysandbox through ctypes (no compiled module).

Only the calls the local runner and its sandboxes make are declared here, each with its
prototype from <polysandbox/sandbox.h>.  The library is the one named by
$POLYSANDBOX_LIBRARY (a path: a build tree's core/.libs/libpolysandbox.so),
else the one `make install` put beside this package (its libdir, named
by the generated _paths.py), else the soname through the dynamic loader's
search (a `pip install`); it is loaded on first use, so a program that
only talks to polysandboxd does not need it.  ctypes releases the GIL
around every call.
"""

from __future__ import annotations

import ctypes
import os
import threading
from ctypes import (POINTER, c_bool, c_char_p, c_int, c_int64, c_size_t, c_uint, c_uint32,
                    c_uint64, c_void_p)

__all__ = ["lib", "SONAME", "LIST_CB", "OUTPUT_CB", "FILE_CB", "EVAL_CB"]

SONAME = "libpolysandbox.so.0"

# sbx_list_cb: (ud, id, labels, n_labels, created_unix_ns) -> stop
LIST_CB = ctypes.CFUNCTYPE(c_int, c_void_p, c_char_p, POINTER(c_char_p), c_size_t, c_uint64)
# sbx_output_cb: (ud, stream, buf, len) -> stop
OUTPUT_CB = ctypes.CFUNCTYPE(c_int, c_void_p, c_int, c_void_p, c_size_t)
# sbx_file_cb: (ud, name, name_len, type, size, mtime_unix) -> stop
FILE_CB = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_size_t, c_int, c_uint64, c_int64)
# sbx_eval_record_cb: (ud, record, done, total, passed) -> stop
EVAL_CB = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_size_t, c_size_t, c_size_t)

# (name, restype, argtypes); opaque handles are c_void_p.
_PROTOS = (
    ("sbx_version", c_char_p, ()),
    ("sbx_ctx_new", c_int, (POINTER(c_void_p), c_char_p)),
    ("sbx_ctx_new_with", c_int, (POINTER(c_void_p), c_char_p, POINTER(c_char_p))),
    ("sbx_ctx_free", None, (c_void_p,)),
    ("sbx_ctx_last_error", c_void_p, (c_void_p,)),
    ("sbx_error_code", c_int, (c_void_p,)),
    ("sbx_error_message", c_char_p, (c_void_p,)),
    ("sbx_error_provider", c_char_p, (c_void_p,)),
    ("sbx_strerror", c_char_p, (c_int,)),
    ("sbx_create_opts_new", c_void_p, ()),
    ("sbx_create_opts_free", None, (c_void_p,)),
    ("sbx_create_opts_set_provider", c_int, (c_void_p, c_char_p)),
    ("sbx_create_opts_set_fallback", c_int, (c_void_p, POINTER(c_char_p))),
    ("sbx_create_opts_set_template", c_int, (c_void_p, c_char_p)),
    ("sbx_create_opts_set_image", c_int, (c_void_p, c_char_p)),
    ("sbx_create_opts_set_limit", c_int, (c_void_p, c_int, c_uint64)),
    ("sbx_create_opts_set_network", c_int, (c_void_p, c_int)),
    ("sbx_exec_opts_new", c_void_p, ()),
    ("sbx_exec_opts_free", None, (c_void_p,)),
    ("sbx_exec_opts_set_argv", c_int, (c_void_p, POINTER(c_char_p))),
    ("sbx_exec_opts_set_shell", c_int, (c_void_p, c_char_p)),
    ("sbx_exec_opts_set_code", c_int, (c_void_p, c_char_p, c_char_p, c_size_t)),
    ("sbx_exec_opts_set_args", c_int, (c_void_p, POINTER(c_char_p))),
    ("sbx_exec_opts_set_stdin", c_int, (c_void_p, c_char_p, c_size_t)),
    ("sbx_exec_opts_add_env", c_int, (c_void_p, c_char_p, c_char_p)),
    ("sbx_exec_opts_set_cwd", c_int, (c_void_p, c_char_p)),
    ("sbx_exec_opts_set_timeout", c_int, (c_void_p, c_uint64)),
    ("sbx_exec_opts_add_file", c_int, (c_void_p, c_char_p, c_char_p, c_size_t, c_uint32)),
    ("sbx_exec_opts_set_cancel", c_int, (c_void_p, c_void_p)),
    ("sbx_exec_opts_set_output_cb", c_int, (c_void_p, OUTPUT_CB, c_void_p)),
    ("sbx_cancel_new", c_void_p, ()),
    ("sbx_cancel_fire", None, (c_void_p,)),
    ("sbx_cancel_fired", c_bool, (c_void_p,)),
    ("sbx_cancel_free", None, (c_void_p,)),
    ("sbx_ctx_provider_count", c_size_t, (c_void_p,)),
    ("sbx_ctx_provider", c_void_p, (c_void_p, c_size_t)),
    ("sbx_provider_name", c_char_p, (c_void_p,)),
    ("sbx_provider_version", c_char_p, (c_void_p,)),
    ("sbx_provider_description", c_char_p, (c_void_p,)),
    ("sbx_provider_path", c_char_p, (c_void_p,)),
    ("sbx_provider_get_state", c_int, (c_void_p,)),
    ("sbx_provider_reason", c_char_p, (c_void_p,)),
    ("sbx_provider_capabilities", c_uint64, (c_void_p,)),
    ("sbx_provider_priority", c_int, (c_void_p,)),
    ("sbx_provider_is_optional", c_bool, (c_void_p,)),
    ("sbx_provider_breaker", c_int, (c_void_p,)),
    ("sbx_provider_breaker_failures", c_uint, (c_void_p,)),
    ("sbx_breaker_state_name", c_char_p, (c_int,)),
    ("sbx_capability_name", c_char_p, (c_uint64,)),
    ("sbx_ctx_template_count", c_size_t, (c_void_p,)),
    ("sbx_ctx_template", c_void_p, (c_void_p, c_size_t)),
    ("sbx_template_name", c_char_p, (c_void_p,)),
    ("sbx_template_extensions", c_char_p, (c_void_p,)),
    ("sbx_create_opts_set_persistent", c_int, (c_void_p, c_bool)),
    ("sbx_create_opts_add_env", c_int, (c_void_p, c_char_p, c_char_p)),
    ("sbx_create_opts_add_label", c_int, (c_void_p, c_char_p, c_char_p)),
    ("sbx_create_opts_set_ttl", c_int, (c_void_p, c_uint64)),
    ("sbx_ctx_default_provider", c_char_p, (c_void_p,)),
    ("sbx_sandbox_create", c_int, (c_void_p, c_void_p, POINTER(c_void_p))),
    ("sbx_sandbox_get_or_create", c_int, (c_void_p, c_void_p, POINTER(c_void_p),
                                          POINTER(c_bool))),
    ("sbx_sandbox_open", c_int, (c_void_p, c_char_p, c_char_p, POINTER(c_void_p))),
    ("sbx_sandbox_exec", c_int, (c_void_p, c_void_p, POINTER(c_void_p))),
    ("sbx_sandbox_upload", c_int, (c_void_p, c_char_p, c_char_p, c_size_t, c_uint32)),
    ("sbx_sandbox_download", c_int, (c_void_p, c_char_p, c_size_t, POINTER(c_void_p),
                                     POINTER(c_size_t))),
    ("sbx_sandbox_list_files", c_int, (c_void_p, c_char_p, c_size_t, FILE_CB, c_void_p,
                                       POINTER(c_bool))),
    ("sbx_file_type_name", c_char_p, (c_int,)),
    ("sbx_sandbox_destroy", c_int, (c_void_p,)),
    ("sbx_sandbox_close", None, (c_void_p,)),
    ("sbx_sandbox_id", c_char_p, (c_void_p,)),
    ("sbx_sandbox_provider", c_char_p, (c_void_p,)),
    ("sbx_list_labeled", c_int, (c_void_p, c_char_p, POINTER(c_char_p), c_size_t,
                                 LIST_CB, c_void_p)),
    ("sbx_run", c_int, (c_void_p, c_void_p, c_void_p, POINTER(c_void_p))),
    ("sbx_result_free", None, (c_void_p,)),
    ("sbx_result_to_json", c_void_p, (c_void_p,)),  # char *, freed with free()
    # pools (sandbox.h)
    ("sbx_ctx_pool_count", c_size_t, (c_void_p,)),
    ("sbx_ctx_pool_name", c_char_p, (c_void_p, c_size_t)),
    ("sbx_pool_provider", c_char_p, (c_void_p, c_char_p)),
    ("sbx_pool_template", c_char_p, (c_void_p, c_char_p)),
    ("sbx_pool_stat_name", c_char_p, (c_int,)),
    ("sbx_pool_stats", c_int, (c_void_p, c_char_p, POINTER(c_uint64), c_size_t)),
    ("sbx_pool_last_error", c_int, (c_void_p, c_char_p, c_char_p, c_size_t)),
    ("sbx_pool_wait", c_int, (c_void_p, c_char_p, c_uint64)),
    # evaluation and compare's report (eval.h)
    ("sbx_eval_dataset_load", c_int, (c_void_p, c_char_p, c_int, POINTER(c_void_p))),
    ("sbx_eval_dataset_free", None, (c_void_p,)),
    ("sbx_eval_samples_load", c_int, (c_void_p, c_void_p, c_char_p, POINTER(c_void_p))),
    ("sbx_eval_samples_canonical", c_int, (c_void_p, c_void_p, POINTER(c_void_p))),
    ("sbx_eval_samples_free", None, (c_void_p,)),
    ("sbx_eval_opts_new", c_void_p, ()),
    ("sbx_eval_opts_free", None, (c_void_p,)),
    ("sbx_eval_opts_set_providers", c_int, (c_void_p, POINTER(c_char_p))),
    ("sbx_eval_opts_set_jobs", c_int, (c_void_p, c_uint)),
    ("sbx_eval_opts_set_timeout", c_int, (c_void_p, c_uint64)),
    ("sbx_eval_opts_set_limit", c_int, (c_void_p, c_int, c_uint64)),
    ("sbx_eval_opts_set_retries", c_int, (c_void_p, c_uint)),
    ("sbx_eval_opts_set_journal", c_int, (c_void_p, c_char_p, c_bool)),
    ("sbx_eval_opts_set_cancel", c_int, (c_void_p, c_void_p)),
    ("sbx_eval_opts_set_allow_partial", c_int, (c_void_p, c_bool)),
    ("sbx_eval_opts_set_callback", c_int, (c_void_p, EVAL_CB, c_void_p)),
    ("sbx_eval_run", c_int, (c_void_p, c_void_p, c_void_p, c_void_p, POINTER(c_void_p))),
    ("sbx_eval_summary_free", None, (c_void_p,)),
    ("sbx_eval_summary_load", c_int, (c_void_p, c_void_p, c_void_p, c_char_p,
                                      POINTER(c_void_p))),
    ("sbx_eval_summary_total", c_size_t, (c_void_p,)),
    ("sbx_eval_summary_record", c_void_p, (c_void_p, c_size_t)),
    ("sbx_eval_record_provider", c_char_p, (c_void_p,)),
    ("sbx_eval_summary_to_json", c_void_p, (c_void_p, POINTER(c_uint), c_size_t)),
    ("sbx_eval_meta_to_json", c_void_p, (c_char_p, c_char_p, c_void_p, POINTER(c_char_p))),
    ("sbx_eval_report_new", c_int, (c_void_p, c_char_p, c_char_p, POINTER(c_void_p))),
    ("sbx_eval_report_free", None, (c_void_p,)),
    ("sbx_eval_report_add", c_int, (c_void_p, c_char_p, c_char_p, c_char_p,
                                    POINTER(c_char_p), c_void_p)),
    ("sbx_eval_report_set_opts", c_int, (c_void_p, c_void_p)),
    ("sbx_eval_report_to_json", c_void_p, (c_void_p, POINTER(c_uint), c_size_t)),
    ("sbx_eval_report_to_markdown", c_void_p, (c_void_p, POINTER(c_uint), c_size_t)),
    ("sbx_eval_report_to_html", c_void_p, (c_void_p, POINTER(c_uint), c_size_t)),
    ("sbx_eval_report_set_files", c_int, (c_void_p, c_char_p)),
)

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_libc = ctypes.CDLL(None)
_libc.free.restype = None
_libc.free.argtypes = (c_void_p,)
free = _libc.free


def _library() -> tuple[str, str]:
    """(what to load, where that name came from)."""
    env = os.environ.get("POLYSANDBOX_LIBRARY")
    if env:
        return env, "$POLYSANDBOX_LIBRARY"
    try:
        from . import _paths
    except ImportError:  # not installed by make install
        pass
    else:
        path = os.path.join(_paths.LIBDIR, SONAME)
        if os.path.exists(path):
            return path, "the library make install put in " + _paths.LIBDIR
    return SONAME, "the installed library"


def use_loaded() -> None:
    """The cffi backend's module has loaded the library (by its soname):
    from now on ctypes uses that one.  ImportError when ctypes has loaded,
    or $POLYSANDBOX_LIBRARY names, another copy (handles of one must not
    reach the other)."""
    global _lib
    with _lock:
        loaded = ctypes.CDLL(SONAME)
        other, env = _lib, os.environ.get("POLYSANDBOX_LIBRARY")
        if other is None and env:
            try:
                other = ctypes.CDLL(env)
            except OSError as e:
                raise OSError(f"polysandbox: cannot load {env} ($POLYSANDBOX_LIBRARY): "
                              f"{e}") from None
        if other is not None and other._handle != loaded._handle:
            raise ImportError("polysandbox: the cffi module's libpolysandbox is not the "
                              "one ctypes loads ($POLYSANDBOX_LIBRARY, or the library "
                              "make install put beside the package)")
        if _lib is None:
            _lib = _declare(loaded)


def _declare(dll: ctypes.CDLL) -> ctypes.CDLL:
    for name, res, args in _PROTOS:
        f = getattr(dll, name)
        f.restype = res
        f.argtypes = args
    return dll


def lib() -> ctypes.CDLL:
    """The loaded library; OSError naming what was tried when it cannot
    be loaded."""
    global _lib
    with _lock:
        if _lib is None:
            path, src = _library()
            try:
                dll = ctypes.CDLL(path)
            except OSError as e:
                raise OSError(f"polysandbox: cannot load {path} ({src}): {e}") from None
            _lib = _declare(dll)
        return _lib
