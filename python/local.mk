# python/local.mk - `import mica` (python/mica: ctypes over libmica), its
# pytest suite (tests/python, through tests/test_python.sh) and, with
# --enable-python, its installation into $(pythondir).

MICA_PY_SOURCES = python/mica/__init__.py python/mica/_lib.py
EXTRA_DIST += $(MICA_PY_SOURCES) python/mica/py.typed python/pyproject.toml \
	python/README.md tests/python/test_mica.py tests/test_python.sh \
	bench/python_overhead.py

TESTS += tests/test_python.sh

if MICA_PYTHON_PKG
micapydir = $(pythondir)/mica
micapy_PYTHON = $(MICA_PY_SOURCES)
nodist_micapy_PYTHON = python/mica/_config.py
dist_micapy_DATA = python/mica/py.typed
CLEANFILES += python/mica/_config.py
# Made by `make` (all), so that `make install` has it.
BUILT_SOURCES += python/mica/_config.py
# Where the installed package finds the installed libmica.
python/mica/_config.py: Makefile
	$(AM_V_GEN)$(MKDIR_P) python/mica && \
	  echo '"""Written by make install: where libmica is."""' >$@ && \
	  echo 'LIBDIR = "$(libdir)"' >>$@
endif
