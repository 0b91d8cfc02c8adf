# Included by every libtracer/<lib>/Makefile.am.  The libraries are
# layered (doc/hacking.md): a library includes and links only the ones
# below it, and a program links the ones it uses, top layer first.
AM_CPPFLAGS = \
	-I$(top_srcdir) \
	-I$(top_srcdir)/tests/unit \
	-DSYSCONFDIR=\"$(sysconfdir)\" \
	-DLOCALSTATEDIR=\"$(localstatedir)\" \
	-DRUNSTATEDIR=\"$(runstatedir)\" \
	-DTEST_SRCDIR=\"$(abs_top_srcdir)/tests\" \
	-DTEST_BUILDDIR=\"$(abs_builddir)\" \
	$(JANSSON_CFLAGS) \
	$(YAML_CFLAGS) \
	$(HWLOC_CFLAGS) \
	$(MUNGE_CFLAGS) \
	$(CRYPTO_CFLAGS) \
	$(LIBBPF_CFLAGS) \
	$(CMOCKA_CFLAGS)

TEST_EXTENSIONS = .t
T_LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/config/tap-driver.sh
AM_TESTS_ENVIRONMENT = \
	CMOCKA_MESSAGE_OUTPUT=TAP; export CMOCKA_MESSAGE_OUTPUT;

CLEANFILES =
include $(top_srcdir)/config/libtracer.mk
