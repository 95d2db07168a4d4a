# plugins/kubernetes/local.mk - the kubernetes provider (REST with libcurl,
# pods/exec over libwebsockets, kubeconfig with libyaml, tar with libarchive)
#
# A loadable module exporting only sandbox_provider_v1, linked with the
# shared libcurl client (plugins/common/libsbxhttp.la).

if BUILD_PROVIDER_KUBERNETES
provider_LTLIBRARIES += plugins/kubernetes/kubernetes.la
plugins_kubernetes_kubernetes_la_SOURCES = \
	plugins/kubernetes/kube-int.h \
	plugins/kubernetes/kubernetes.c \
	plugins/kubernetes/kube-agent.c \
	plugins/kubernetes/kube-api.c \
	plugins/kubernetes/kube-auth.c \
	plugins/kubernetes/kube-config.c \
	plugins/kubernetes/kube-exec.c \
	plugins/kubernetes/kube-files.c \
	plugins/kubernetes/kube-labels.c \
	plugins/kubernetes/kube-pod.c \
	plugins/kubernetes/kube-program.c \
	plugins/kubernetes/kube-signal.c \
	plugins/kubernetes/kube-watch.c \
	plugins/kubernetes/kube-ws.c \
	plugins/kubernetes/kube-yaml.c \
	plugins/common/tar-mem.c plugins/common/tar-mem.h
plugins_kubernetes_kubernetes_la_CPPFLAGS = $(AM_CPPFLAGS) $(SBXHTTP_CPPFLAGS)
plugins_kubernetes_kubernetes_la_CFLAGS = $(SBX_MODULE_COPTS) $(SBXHTTP_CFLAGS) \
	$(LWS_CFLAGS) $(YAML_CFLAGS) $(OPENSSL_CFLAGS) $(LIBARCHIVE_CFLAGS)
plugins_kubernetes_kubernetes_la_LDFLAGS = $(SBX_MODULE_LDOPTS)
plugins_kubernetes_kubernetes_la_LIBADD = $(SBXHTTP_LIBS) $(LWS_LIBS) $(YAML_LIBS) \
	$(OPENSSL_LIBS) $(LIBARCHIVE_LIBS)

kubernetesconfdir = $(pkgsysconfdir)/providers.d
dist_kubernetesconf_DATA = plugins/kubernetes/kubernetes.ini
endif

EXTRA_DIST += plugins/kubernetes/README.md plugins/kubernetes/kubernetes.ini
