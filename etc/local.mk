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
	etc/templates.d/r.ini \
	etc/templates.d/ruby.ini \
	etc/templates.d/rust.ini \
	etc/templates.d/sh.ini \
	etc/templates.d/typescript.ini

dist_man_MANS += doc/polysandbox.ini.5
