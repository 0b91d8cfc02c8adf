# The layered libraries of libtracer/ (doc/hacking.md), for LDADD: a
# program or library names the ones it uses, top layer first.
LIBTRACER_UTIL_PLAIN = $(top_builddir)/libtracer/util/libtracer_util_plain.la
LIBTRACER_UTIL = $(top_builddir)/libtracer/util/libtracer_util.la
LIBTRACER_HOOK = $(top_builddir)/libtracer/hook/libtracer_hook.la
LIBTRACER_CONF = $(top_builddir)/libtracer/conf/libtracer_conf.la
LIBTRACER_RECORD = $(top_builddir)/libtracer/record/libtracer_record.la
LIBTRACER_NODE = $(top_builddir)/libtracer/node/libtracer_node.la
LIBTRACER_JUDGE = $(top_builddir)/libtracer/judge/libtracer_judge.la
LIBTRACER_NOTIFY = $(top_builddir)/libtracer/notify/libtracer_notify.la
LIBTRACER_VIEW = $(top_builddir)/libtracer/view/libtracer_view.la
