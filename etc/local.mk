# etc/local.mk - the default configuration and its reference page

# $(pkgsysconfdir) is $(sysconfdir)/polysandbox (configure.ac); the core
# reads it as SYSCONFDIR.
dist_pkgsysconf_DATA = etc/polysandbox.ini

templatesdir = $(pkgsysconfdir)/templates.d
dist_templates_DATA = \
	etc/templates.d/bash.ini \
	etc/templates.d/c.ini \
	etc/templates.d/cpp.ini \
	etc/templates.d/node.ini \
	etc/templates.d/python.ini \
	etc/templates.d/sh.ini

dist_man_MANS += doc/polysandbox.ini.5
