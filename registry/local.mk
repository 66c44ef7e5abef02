# registry/local.mk - module discovery, dlopen, ABI negotiation, the
# checks of creators, the creator table and the host service table (part
# of libmica, on top of core/base/); and the registry's test with the
# fake modules it loads.

libmica_la_SOURCES += registry/registry.c registry/registry.h \
	registry/load.c registry/module.c registry/check.c registry/host.h \
	registry/host.c registry/peek.c registry/scan.c registry/rules.c

# The scanner: loads new or changed module files in a process of its own
# (registry/scan.c), from $(pkglibexecdir).  Uninstalled, the tests name
# it through $MICA_SCANNER.
pkglibexec_PROGRAMS += registry/mica-scan-module
registry_mica_scan_module_SOURCES = registry/scanner.c
registry_mica_scan_module_LDADD = libmica.la

# ---- tests -------------------------------------------------------------------
check_PROGRAMS += tests/test_registry
TESTS += tests/test_registry
tests_test_registry_SOURCES = tests/test_registry.c
tests_test_registry_LDADD = $(MICA_TEST_LIBS)

# Fake modules, one per way a module file or creator can be refused.  Not
# installed; libtool leaves them in tests/modules/.libs/, where
# test_registry finds them through $MICA_TOP_BUILDDIR.
MICA_FAKE_MODULES = tests/modules/good.la tests/modules/twin.la \
	tests/modules/abi_new.la tests/modules/abi_old.la \
	tests/modules/no_entry.la tests/modules/init_fail.la \
	tests/modules/init_quiet.la tests/modules/small_desc.la \
	tests/modules/bad_creators.la
check_LTLIBRARIES += $(MICA_FAKE_MODULES)
noinst_HEADERS += tests/modules/fake.h

# no_entry exports no mica_module_init, so it cannot take the module flags'
# -export-symbols-regex; none of them need it.
MICA_FAKE_MODULE_FLAGS = -module -avoid-version -shared -rpath /nowhere
tests_modules_good_la_SOURCES = tests/modules/good.c
tests_modules_good_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_modules_twin_la_SOURCES = tests/modules/twin.c
tests_modules_twin_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_modules_abi_new_la_SOURCES = tests/modules/abi_new.c
tests_modules_abi_new_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_modules_abi_old_la_SOURCES = tests/modules/abi_old.c
tests_modules_abi_old_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_modules_no_entry_la_SOURCES = tests/modules/no_entry.c
tests_modules_no_entry_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_modules_init_fail_la_SOURCES = tests/modules/init_fail.c
tests_modules_init_fail_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_modules_init_quiet_la_SOURCES = tests/modules/init_quiet.c
tests_modules_init_quiet_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_modules_small_desc_la_SOURCES = tests/modules/small_desc.c
tests_modules_small_desc_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_modules_bad_creators_la_SOURCES = tests/modules/bad_creators.c
tests_modules_bad_creators_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)

# A working module with three CPU implementations of one type, for the
# tests of implementation choice (tests/test_network.c); in a folder of its
# own, apart from the fake modules test_registry loads by folder.
check_LTLIBRARIES += tests/choice/choice.la
tests_choice_choice_la_SOURCES = tests/choice/choice.c
tests_choice_choice_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_choice_choice_la_LIBADD = modules/common/libmicamodkit.la

# Hostile modules (issue 15), in a folder of their own: inits that
# segfault, abort, exit or hang (tests/hostile/crash.c, one module each),
# an entry symbol that is data, a descriptor and a schema claiming more
# than they hold, instances without ops or callbacks.  Built without the
# sanitizers, as a third party's binary would be.
MICA_HOSTILE_MODULES = tests/hostile/crash_segv.la \
	tests/hostile/crash_abort.la tests/hostile/crash_exit.la \
	tests/hostile/crash_hang.la tests/hostile/entry_data.la \
	tests/hostile/overclaim_creators.la tests/hostile/overclaim_fields.la \
	tests/hostile/null_ops.la
check_LTLIBRARIES += $(MICA_HOSTILE_MODULES)
MICA_HOSTILE_CFLAGS = $(MICA_WARN_CFLAGS)
tests_hostile_crash_segv_la_SOURCES = tests/hostile/crash.c
tests_hostile_crash_segv_la_CPPFLAGS = $(AM_CPPFLAGS) -DHOSTILE_KIND=1
tests_hostile_crash_segv_la_CFLAGS = $(MICA_HOSTILE_CFLAGS)
tests_hostile_crash_segv_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_hostile_crash_abort_la_SOURCES = tests/hostile/crash.c
tests_hostile_crash_abort_la_CPPFLAGS = $(AM_CPPFLAGS) -DHOSTILE_KIND=2
tests_hostile_crash_abort_la_CFLAGS = $(MICA_HOSTILE_CFLAGS)
tests_hostile_crash_abort_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_hostile_crash_exit_la_SOURCES = tests/hostile/crash.c
tests_hostile_crash_exit_la_CPPFLAGS = $(AM_CPPFLAGS) -DHOSTILE_KIND=3
tests_hostile_crash_exit_la_CFLAGS = $(MICA_HOSTILE_CFLAGS)
tests_hostile_crash_exit_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_hostile_crash_hang_la_SOURCES = tests/hostile/crash.c
tests_hostile_crash_hang_la_CPPFLAGS = $(AM_CPPFLAGS) -DHOSTILE_KIND=4
tests_hostile_crash_hang_la_CFLAGS = $(MICA_HOSTILE_CFLAGS)
tests_hostile_crash_hang_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_hostile_entry_data_la_SOURCES = tests/hostile/entry_data.c
tests_hostile_entry_data_la_CFLAGS = $(MICA_HOSTILE_CFLAGS)
tests_hostile_entry_data_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_hostile_overclaim_creators_la_SOURCES = tests/hostile/overclaim.c
tests_hostile_overclaim_creators_la_CPPFLAGS = $(AM_CPPFLAGS) -DHOSTILE_KIND=1
tests_hostile_overclaim_creators_la_CFLAGS = $(MICA_HOSTILE_CFLAGS)
tests_hostile_overclaim_creators_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_hostile_overclaim_fields_la_SOURCES = tests/hostile/overclaim.c
tests_hostile_overclaim_fields_la_CPPFLAGS = $(AM_CPPFLAGS) -DHOSTILE_KIND=2
tests_hostile_overclaim_fields_la_CFLAGS = $(MICA_HOSTILE_CFLAGS)
tests_hostile_overclaim_fields_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_hostile_null_ops_la_SOURCES = tests/hostile/null_ops.c
tests_hostile_null_ops_la_CFLAGS = $(MICA_HOSTILE_CFLAGS)
tests_hostile_null_ops_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)

check_PROGRAMS += tests/test_hostile
TESTS += tests/test_hostile tests/test_cli_hostile.sh
tests_test_hostile_SOURCES = tests/test_hostile.c
tests_test_hostile_LDADD = $(MICA_TEST_LIBS)
EXTRA_DIST += tests/test_cli_hostile.sh

# Out-of-tree fusion rules (tests/test_cli_fusion.sh): a module with a
# rule and a layer type of its own (tests/fusion/), and one whose rules
# are refused at load (tests/fusion/bad/), each in a folder of its own.
check_LTLIBRARIES += tests/fusion/addrelu.la tests/fusion/bad/badrules.la
tests_fusion_addrelu_la_SOURCES = tests/fusion/addrelu.c
tests_fusion_addrelu_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_fusion_addrelu_la_LIBADD = modules/common/libmicamodkit.la
tests_fusion_bad_badrules_la_SOURCES = tests/fusion/bad/badrules.c
tests_fusion_bad_badrules_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_fusion_bad_badrules_la_LIBADD = modules/common/libmicamodkit.la

# The same module built against mica/module.h before fusion rules grew
# links and tensor tests (tests/fusion/v1/mica/module.h, a copy): its
# rule still loads and fires (tests/test_cli_xformer.sh).
check_LTLIBRARIES += tests/fusion/v1/addrelu.la
tests_fusion_v1_addrelu_la_SOURCES = tests/fusion/addrelu.c
tests_fusion_v1_addrelu_la_CPPFLAGS = -I$(top_srcdir)/tests/fusion/v1 \
	$(AM_CPPFLAGS)
tests_fusion_v1_addrelu_la_LDFLAGS = $(MICA_FAKE_MODULE_FLAGS)
tests_fusion_v1_addrelu_la_LIBADD = modules/common/libmicamodkit.la
EXTRA_DIST += tests/fusion/v1/mica/module.h

# The transformer rules on PyTorch exports (tests/onnx/make_xformer.py).
TESTS += tests/test_cli_xformer.sh
EXTRA_DIST += tests/test_cli_xformer.sh tests/onnx/make_xformer.py \
	tests/onnx/models/ln14.onnx tests/onnx/models/gelu14.onnx \
	tests/onnx/models/tiny_bert14.onnx tests/onnx/models/xformer.x.npy \
	tests/onnx/models/tiny_bert14.input_ids.npy \
	tests/onnx/models/tiny_bert14.attention_mask.npy \
	tests/onnx/models/tiny_bert_dyn.onnx \
	tests/onnx/models/tiny_bert_eager14.onnx
