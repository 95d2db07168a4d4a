# plugins/cloudflare/local.mk - the Cloudflare provider (the bridge Worker
# of @cloudflare/sandbox: REST and server-sent events)
#
# A loadable module exporting only sandbox_provider_v1, linked with the
# shared libcurl client (plugins/common/libsbxhttp.la).

if BUILD_PROVIDER_CLOUDFLARE
provider_LTLIBRARIES += plugins/cloudflare/cloudflare.la
plugins_cloudflare_cloudflare_la_SOURCES = plugins/cloudflare/cloudflare.c
plugins_cloudflare_cloudflare_la_CPPFLAGS = $(AM_CPPFLAGS) $(SBXHTTP_CPPFLAGS)
plugins_cloudflare_cloudflare_la_CFLAGS = $(SBX_MODULE_COPTS) $(SBXHTTP_CFLAGS) $(SODIUM_CFLAGS)
plugins_cloudflare_cloudflare_la_LDFLAGS = $(SBX_MODULE_LDOPTS)
plugins_cloudflare_cloudflare_la_LIBADD = $(SBXHTTP_LIBS) $(SODIUM_LIBS)

cloudflareconfdir = $(pkgsysconfdir)/providers.d
dist_cloudflareconf_DATA = plugins/cloudflare/cloudflare.ini
endif

EXTRA_DIST += plugins/cloudflare/README.md plugins/cloudflare/cloudflare.ini
