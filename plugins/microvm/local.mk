# plugins/microvm/local.mk - the microvm provider (QEMU -M microvm guests)
#
# A loadable module exporting only sandbox_provider_v1; its guest agent
# (sbx-agent), PID 1 of every guest, is built with the plain compiler, no
# sanitizer and statically (it runs in the VM, which has no libasan and
# no shared C library of ours); polysandbox-microvm-image puts it with
# the host's kernel and python3 into the guest image.

MV_PROTO = plugins/microvm/mv-proto.h plugins/microvm/mv-proto.c
if BUILD_PROVIDER_MICROVM
provider_LTLIBRARIES += plugins/microvm/microvm.la
plugins_microvm_microvm_la_SOURCES = \
	plugins/microvm/microvm.c \
	plugins/microvm/mv-accel.c \
	plugins/microvm/mv-cgroup.c \
	plugins/microvm/mv-chan.c \
	plugins/microvm/mv-exec.c \
	plugins/microvm/mv-fc.c \
	plugins/microvm/mv-fcsnap.c \
	plugins/microvm/mv-files.c \
	plugins/microvm/mv-hold.c \
	plugins/microvm/mv-image.c \
	plugins/microvm/mv-imagegc.c \
	plugins/microvm/mv-jail.c \
	plugins/microvm/mv-net.c \
	plugins/microvm/mv-int.h \
	plugins/microvm/mv-persist.c \
	plugins/microvm/mv-qemu.c \
	plugins/microvm/mv-qjail.c \
	plugins/microvm/mv-seal.c \
	plugins/microvm/mv-snap.c \
	plugins/microvm/mv-snapgc.c \
	plugins/microvm/mv-spawn.c \
	plugins/microvm/mv-vmm.h \
	plugins/microvm/mv-xrun.c \
	plugins/common/randhex.c \
	plugins/common/randhex.h \
	$(MV_PROTO)
plugins_microvm_microvm_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/common
plugins_microvm_microvm_la_CFLAGS = $(SBX_MODULE_COPTS) $(CURL_CFLAGS) $(JANSSON_CFLAGS) $(SODIUM_CFLAGS)
plugins_microvm_microvm_la_LIBADD = $(CURL_LIBS) $(JANSSON_LIBS) $(SODIUM_LIBS)
plugins_microvm_microvm_la_LDFLAGS = $(SBX_MODULE_LDOPTS)

pkglibexec_SCRIPTS = plugins/microvm/sbx-agent
MV_AGENT_SRC = plugins/microvm/agent/mv-agent.c plugins/microvm/agent/mv-filter.c \
	plugins/microvm/agent/mv-netup.c
plugins/microvm/sbx-agent: $(MV_AGENT_SRC:%=$(top_srcdir)/%) \
	  $(top_srcdir)/plugins/microvm/agent/mv-filter.h \
	  $(top_srcdir)/plugins/microvm/agent/mv-netup.h \
	  $(top_srcdir)/plugins/microvm/mv-proto.c $(top_srcdir)/plugins/microvm/mv-proto.h \
	  $(top_srcdir)/sdk/include/polysandbox/common.h
	$(AM_V_CC)$(MKDIR_P) plugins/microvm && \
	$(CC) -std=gnu11 -O2 -static $(WARN_CFLAGS) -I$(top_srcdir)/plugins/microvm \
	  -I$(top_srcdir)/sdk/include -o $@ \
	  $(MV_AGENT_SRC:%=$(top_srcdir)/%) $(top_srcdir)/plugins/microvm/mv-proto.c
CLEANFILES += plugins/microvm/sbx-agent

bin_SCRIPTS = plugins/microvm/polysandbox-microvm-image
plugins/microvm/polysandbox-microvm-image: $(srcdir)/plugins/microvm/polysandbox-microvm-image.sh
	$(AM_V_GEN)$(MKDIR_P) plugins/microvm && cp $(srcdir)/plugins/microvm/polysandbox-microvm-image.sh $@ && chmod +x $@
CLEANFILES += plugins/microvm/polysandbox-microvm-image

microvmconfdir = $(pkgsysconfdir)/providers.d
dist_microvmconf_DATA = plugins/microvm/microvm.ini
endif

EXTRA_DIST += plugins/microvm/README.md plugins/microvm/microvm.ini \
	plugins/microvm/agent/mv-agent.c plugins/microvm/agent/mv-filter.c \
	plugins/microvm/agent/mv-filter.h plugins/microvm/agent/mv-netup.c \
	plugins/microvm/agent/mv-netup.h plugins/microvm/polysandbox-microvm-image.sh $(MV_PROTO)
