# plugins/modal/local.mk - the Modal provider (gRPC over libcurl's HTTP/2,
# messages encoded with protobuf-c)
#
# The C of the messages is generated at build time by protoc-c from the
# trimmed copies of Modal's .proto files kept here, into the build tree.

MODAL_PROTOS = plugins/modal/api.proto plugins/modal/task_command_router.proto
MODAL_PB_C = plugins/modal/api.pb-c.c plugins/modal/api.pb-c.h \
	plugins/modal/task_command_router.pb-c.c plugins/modal/task_command_router.pb-c.h

if BUILD_PROVIDER_MODAL
provider_LTLIBRARIES += plugins/modal/modal.la
plugins_modal_modal_la_SOURCES = \
	plugins/modal/modal-int.h \
	plugins/modal/modal.c \
	plugins/modal/modal-api.c \
	plugins/modal/modal-router.c \
	plugins/modal/modal-exec.c \
	plugins/modal/modal-files.c \
	plugins/modal/modal-grpc.c \
	plugins/modal/modal-grpc.h
nodist_plugins_modal_modal_la_SOURCES = $(MODAL_PB_C)
plugins_modal_modal_la_CPPFLAGS = $(AM_CPPFLAGS) $(SBXHTTP_CPPFLAGS) -I$(top_builddir)/plugins/modal
plugins_modal_modal_la_CFLAGS = $(SBX_MODULE_COPTS) $(SBXHTTP_CFLAGS) $(PROTOBUF_C_CFLAGS)
plugins_modal_modal_la_LDFLAGS = $(SBX_MODULE_LDOPTS)
plugins_modal_modal_la_LIBADD = $(SBXHTTP_LIBS) $(PROTOBUF_C_LIBS)

BUILT_SOURCES += $(MODAL_PB_C)
CLEANFILES += $(MODAL_PB_C)

modalconfdir = $(pkgsysconfdir)/providers.d
dist_modalconf_DATA = plugins/modal/modal.ini
endif

# protoc-c names its output after the .proto's path below -I.
plugins/modal/api.pb-c.c plugins/modal/api.pb-c.h: plugins/modal/api.proto
	$(AM_V_GEN)$(MKDIR_P) plugins/modal && \
	$(PROTOC_C) -I$(srcdir)/plugins/modal --c_out=plugins/modal $(srcdir)/plugins/modal/api.proto
plugins/modal/task_command_router.pb-c.c plugins/modal/task_command_router.pb-c.h: \
		plugins/modal/task_command_router.proto
	$(AM_V_GEN)$(MKDIR_P) plugins/modal && \
	$(PROTOC_C) -I$(srcdir)/plugins/modal --c_out=plugins/modal \
		$(srcdir)/plugins/modal/task_command_router.proto

EXTRA_DIST += plugins/modal/README.md plugins/modal/modal.ini $(MODAL_PROTOS)
