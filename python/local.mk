# python/local.mk - the Python package (Python over libpolysandbox through
# its cffi module or ctypes; see python/README.md).  `make install`
# installs it in $(pkgpythondir) ($(pythondir)/polysandbox, byte-compiled
# by automake) unless configure --disable-python; `pip install ./python`
# also works (setup.py compiles the cffi module there).

POLYSANDBOX_PY = \
	python/polysandbox/__init__.py \
	python/polysandbox/_fields.py \
	python/polysandbox/_cffi.py \
	python/polysandbox/_native.py \
	python/polysandbox/client.py \
	python/polysandbox/errors.py \
	python/polysandbox/evalargs.py \
	python/polysandbox/info.py \
	python/polysandbox/local.py \
	python/polysandbox/localeval.py \
	python/polysandbox/many.py \
	python/polysandbox/report.py \
	python/polysandbox/request.py \
	python/polysandbox/result.py \
	python/polysandbox/sandbox.py \
	python/polysandbox/stream.py
PYTHON_FILES = python/README.md python/pyproject.toml python/_paths.py.in \
	python/cffi_build.py python/setup.py \
	python/polysandbox/py.typed $(POLYSANDBOX_PY)
EXTRA_DIST += $(PYTHON_FILES)

if ENABLE_PYTHON
pkgpython_PYTHON = $(POLYSANDBOX_PY)
nodist_pkgpython_PYTHON = python/_paths.py
pkgpython_DATA = python/polysandbox/py.typed
BUILT_SOURCES += python/_paths.py
endif

# _paths.py names the installed library's directory (_native.py loads it
# from there first).  Made at every make, and replaced only when it
# changes, so that `make install prefix=...` installs the prefix's own.
python/_paths.py: $(srcdir)/python/_paths.py.in FORCE-python-paths
	$(AM_V_GEN)$(MKDIR_P) python && \
	sed 's|@libdir[@]|$(libdir)|g' $(srcdir)/python/_paths.py.in >$@-t$$$$ && \
	if cmp -s $@-t$$$$ $@; then rm -f $@-t$$$$; else mv -f $@-t$$$$ $@; fi
FORCE-python-paths:
.PHONY: FORCE-python-paths
CLEANFILES += python/_paths.py python/_paths.py-t*

# The cffi backend (API mode): cffi_build.py writes its C source, checked
# against <polysandbox/sandbox.h>; libtool builds it as a module linked
# with libpolysandbox, installed beside the package (_cffi.py loads it).
if ENABLE_CFFI
pkgpyexec_LTLIBRARIES = python/_polysandbox_cffi.la
nodist_python__polysandbox_cffi_la_SOURCES = python/_polysandbox_cffi.c
python__polysandbox_cffi_la_CPPFLAGS = -I$(top_srcdir)/core/include -I$(top_srcdir)/sdk/include \
	$(PYTHON_CPPFLAGS)
# cffi's generated code, not ours: the project's warnings are not asked of it
python__polysandbox_cffi_la_CFLAGS =
python__polysandbox_cffi_la_LDFLAGS = -module -avoid-version -shared
python__polysandbox_cffi_la_LIBADD = core/libpolysandbox.la
CLEANFILES += python/_polysandbox_cffi.c
endif
python/_polysandbox_cffi.c: $(srcdir)/python/cffi_build.py \
		$(top_srcdir)/core/include/polysandbox/sandbox.h \
		$(top_srcdir)/core/include/polysandbox/eval.h
	$(AM_V_GEN)$(MKDIR_P) python && \
	$(PYTHON) $(srcdir)/python/cffi_build.py $@-t >/dev/null && mv -f $@-t $@
