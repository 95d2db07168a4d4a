# etc/local.mk - the default configuration and its reference page

# $(pkgsysconfdir) is $(sysconfdir)/polysandbox (configure.ac); the core
# reads it as SYSCONFDIR.
dist_pkgsysconf_DATA = etc/polysandbox.ini

templatesdir = $(pkgsysconfdir)/templates.d
dist_templates_DATA = \
	etc/templates.d/bash.ini \
	etc/templates.d/c.ini \
	etc/templates.d/cpp.ini \
	etc/templates.d/go.ini \
	etc/templates.d/java.ini \
	etc/templates.d/lua.ini \
	etc/templates.d/node.ini \
	etc/templates.d/perl.ini \
	etc/templates.d/php.ini \
	etc/templates.d/python.ini \
	etc/templates.d/python-data.ini \
	etc/templates.d/r.ini \
	etc/templates.d/ruby.ini \
	etc/templates.d/rust.ini \
	etc/templates.d/sh.ini \
	etc/templates.d/typescript.ini

dist_man_MANS += doc/polysandbox.ini.5

# The Go build cache the go template reads (contrib/go-cache-warm.sh):
# data built for sandboxes to read, regenerable, so under /var/cache
# (FHS), which the local provider binds read-only (cache_dir).  Built at
# install, where an administrator expects system-wide files to appear
# and once for every user (never at first use, in whoever's run that
# is); skipped without go, and under DESTDIR (a package's cache would be
# its build host's go: run the installed script from the postinst).
# The template's GOENV names the default /var/cache/polysandbox: an
# installed copy points at this prefix's $(pkgcachedir) instead.
dist_pkglibexec_SCRIPTS = contrib/go-cache-warm.sh
GO_CACHE_DIR = $(pkgcachedir)/go
install-data-hook: install-go-cache
install-go-cache:
	@f='$(DESTDIR)$(templatesdir)/go.ini'; \
	if test -f "$$f" && test '$(pkgcachedir)' != /var/cache/polysandbox; then \
	  sed 's|/var/cache/polysandbox/|$(pkgcachedir)/|' "$$f" >"$$f.tmp" && mv "$$f.tmp" "$$f"; \
	fi
	@if test -n '$(DESTDIR)'; then \
	  echo "Go build cache: not built under DESTDIR (run $(pkglibexecdir)/go-cache-warm.sh $(GO_CACHE_DIR) on the target)"; \
	elif ! command -v go >/dev/null 2>&1; then \
	  echo "Go build cache: go is not installed; the go template builds cold"; \
	else \
	  echo "Go build cache: building $(GO_CACHE_DIR)"; \
	  $(SHELL) $(srcdir)/contrib/go-cache-warm.sh '$(GO_CACHE_DIR)' || \
	    echo "Go build cache: not built; the go template builds cold"; \
	fi
uninstall-hook:
	-chmod -R u+w '$(DESTDIR)$(GO_CACHE_DIR)' 2>/dev/null
	-rm -rf '$(DESTDIR)$(GO_CACHE_DIR)'
.PHONY: install-go-cache
