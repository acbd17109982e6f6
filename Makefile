# libprof: a statistical sampling CPU profiler. One non-recursive GNU Makefile.
# Targets: all test lint asan fuzz bench demo install uninstall clean (see README.md).
# Local overrides go in an untracked config.mak.
-include config.mak

ifeq ($(origin CC),default)
CC      := gcc
endif
ARCH    := $(shell $(CC) -dumpmachine | cut -d- -f1)
BUILD   ?= build
OBJ     := $(BUILD)/obj
PREFIX  ?= /usr/local
# Where `make install` puts things (DESTDIR, when set, is prepended to each). prof finds
# the library in ../lib next to its own directory: another LIBDIR needs PROF_LIBRARY.
BINDIR      ?= $(PREFIX)/bin
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
MANDIR      ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
# The release, and the library's ABI version: its soname is libprof.so.$(SOMAJOR).
VERSION := 0.1.0
SOMAJOR := 0
TEST_FUZZ_SECONDS ?= 15
TEST_FUZZ_CFI_SECONDS ?= 10
# Compile jobs of the builds that test, demo and asan start (one per CPU); the tests
# themselves run as scripts/run-tests.sh says.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

# DEBUG=1: the debug checks (PROF_ALWAYS/PROF_NEVER assert, SMP_RAW_CHECK aborts).
DEBUG       ?= 0
WARN        := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
OPT         := -O2 -g
BASE_CFLAGS := -std=gnu11 -D_GNU_SOURCE -I. $(WARN) $(OPT) -MMD -MP \
               -DPROF_VERSION_STRING='"$(VERSION)"' $(EXTRA_CFLAGS)
ifeq ($(DEBUG),1)
BASE_CFLAGS += -DPROF_DEBUG
endif
LIB_CFLAGS  := -fPIC -fvisibility=hidden -fno-omit-frame-pointer -ftls-model=initial-exec
LIB_LDFLAGS := -shared -Wl,-z,now -Wl,-z,defs -Wl,--exclude-libs,ALL \
               -Wl,-z,start-stop-visibility=hidden -Wl,-soname,libprof.so.$(SOMAJOR)
REP_LDLIBS  := -lbfd -lz -llzma -lm -ldl
WORK_CFLAGS := -std=gnu11 -I. -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
               -fno-inline-functions -fno-optimize-sibling-calls $(WARN) -MMD -MP

SMP_SRCS := $(wildcard sampler/*.c)
LP_SRCS  := $(wildcard libprof/*.c)

# The libunwind stepper (PROF_UNWIND=libunwind) is one switch: UNWIND=1 when libunwind's
# header is found, UNWIND=0 builds without it (PROF_UNWIND=libunwind then falls back to fp).
# The same switch gives prof libunwind's remote unwinder for `prof stacks --unwind`
# (attach/ptrace_unwind.c, which without it says that prof was built without libunwind).
HASH     := \#
ifeq ($(origin UNWIND),undefined)
UNWIND   := $(shell echo '$(HASH)include <libunwind.h>' | $(CC) -E -x c - >/dev/null 2>&1 \
              && echo 1 || echo 0)
endif
UNW_SRCS := sampler/walk_unw.c
ifeq ($(UNWIND),1)
BASE_CFLAGS += -DPROF_HAVE_LIBUNWIND
UNW_LDLIBS  :=
REP_LDLIBS  += -lunwind-ptrace -lunwind-generic
else
SMP_SRCS := $(filter-out $(UNW_SRCS),$(SMP_SRCS))
UNW_LDLIBS  :=
endif
REP_SRCS := $(wildcard reporter/*/*.c)
ATT_SRCS := $(wildcard attach/*.c)
SMP_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(SMP_SRCS))
LP_OBJS  := $(patsubst %.c,$(OBJ)/%.o,$(LP_SRCS))
REP_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(REP_SRCS))
ATT_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(ATT_SRCS))
LIB_OBJS := $(SMP_OBJS) $(LP_OBJS)

# The objects on the signal handler's path; `make lint` checks what they call (the list is
# the script's argument: it is written here only).
HANDLER_OBJS := $(OBJ)/sampler/handler.o $(OBJ)/sampler/walk.o $(OBJ)/sampler/ring.o \
                $(OBJ)/sampler/snapshot.o $(OBJ)/sampler/app_action.o \
                $(OBJ)/sampler/probe.o $(OBJ)/sampler/codemap.o $(OBJ)/sampler/jitter.o \
                $(OBJ)/sampler/toggle.o $(OBJ)/sampler/defer.o $(OBJ)/sampler/sigstack.o \
                $(filter $(OBJ)/sampler/walk_unw.o,$(SMP_OBJS))

# Unit tests link the library's objects minus the ones that arm profiling from a
# constructor or interpose libc, and the reporter's objects minus main().
LP_LIVE_OBJS := $(OBJ)/libprof/session.o $(OBJ)/libprof/interpose.o $(OBJ)/libprof/api.o
UNIT_OBJS    := $(SMP_OBJS) $(filter-out $(LP_LIVE_OBJS),$(LP_OBJS)) \
                $(filter-out $(OBJ)/reporter/cmd/main.o,$(REP_OBJS)) $(ATT_OBJS)
UNIT_SRCS    := $(wildcard tests/arch/test_*.c tests/common/test_*.c tests/sampler/test_*.c \
                          tests/libprof/test_*.c \
                          tests/attach/test_*.c tests/reporter/*/test_*.c)
UNIT_TOBJS   := $(patsubst %.c,$(OBJ)/%.o,$(UNIT_SRCS))
E2E_SRCS     := $(wildcard tests/e2e/*.c)
E2E_TOBJS    := $(patsubst %.c,$(OBJ)/%.o,$(E2E_SRCS))
WORKLOADS    := $(patsubst tests/workloads/%.c,$(BUILD)/workloads/%,$(wildcard tests/workloads/*.c))
EXAMPLES     := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))

LIB  := $(BUILD)/libprof.so
PROF := $(BUILD)/prof

# Everything built depends on the settings it was built with: a change of CC, the flags,
# UNWIND or DEBUG rewrites this file, and so rebuilds what used the old ones.
FLAGS_FILE := $(BUILD)/flags
FLAGS_NOW  := $(CC) $(BASE_CFLAGS) | $(LIB_CFLAGS) | $(LIB_LDFLAGS) | $(REP_LDLIBS) | \
              UNWIND=$(UNWIND) | $(WORK_CFLAGS) | $(EXTRA_LDFLAGS)
$(shell mkdir -p $(BUILD))
ifneq ($(file <$(FLAGS_FILE)),$(FLAGS_NOW))
$(file >$(FLAGS_FILE),$(FLAGS_NOW))
endif

.PHONY: all deps test unit e2e lint asan fuzz bench demo install uninstall clean test-aarch64
all: $(LIB) $(PROF) $(EXAMPLES)

deps:
	@scripts/setup.sh

$(OBJ)/sampler/%.o: sampler/%.c $(FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(LIB_CFLAGS) -c $< -o $@

$(OBJ)/libprof/%.o: libprof/%.c $(FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(LIB_CFLAGS) -c $< -o $@

$(OBJ)/reporter/%.o: reporter/%.c $(FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -c $< -o $@

$(OBJ)/attach/%.o: attach/%.c $(FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -c $< -o $@

$(OBJ)/tests/%.o: tests/%.c $(FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(TEST_CFLAGS) -Wno-missing-prototypes \
	    -DBUILD_DIR='"$(abspath $(BUILD))"' -DSRC_DIR='"$(CURDIR)"' -c $< -o $@

# The backtrace test's chain of functions must keep frame pointers, its leaf included: a
# leaf's caller is never guessed (common/fp_step.h).
$(OBJ)/tests/libprof/test_backtrace.o: TEST_CFLAGS = -fno-omit-frame-pointer -fno-optimize-sibling-calls \
    -mno-omit-leaf-frame-pointer

$(LIB): $(LIB_OBJS) $(FLAGS_FILE)
	$(CC) $(LIB_LDFLAGS) $(EXTRA_LDFLAGS) -o $@ $(filter %.o,$^) $(UNW_LDLIBS) -lpthread -ldl

$(PROF): $(REP_OBJS) $(ATT_OBJS) $(FLAGS_FILE)
	$(CC) $(EXTRA_LDFLAGS) -o $@ $(filter %.o,$^) $(REP_LDLIBS)

$(BUILD)/workloads/%: tests/workloads/%.c $(FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) $(WORK_CFLAGS) -MF $@.d -o $@ $< -lpthread -lm

# nofp linked by LLD (Debian's lld), whose layout maps the executable segment at a
# different distance from its file offset than the read-only one before it (rustc's
# toolchain links so): tests/e2e/test_runtimes.c.
$(BUILD)/workloads/nofp_lld: tests/workloads/nofp.c $(FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) $(WORK_CFLAGS) -fuse-ld=lld -MF $@.d -o $@ $< -lpthread -lm
WORKLOADS += $(if $(shell command -v ld.lld 2>/dev/null),$(BUILD)/workloads/nofp_lld)

# tracectx publishes the OpenTelemetry thread context: its TLS variable in the dynamic
# symbol table, as the specification asks (tests/e2e/test_labels.c).
$(BUILD)/workloads/tracectx: tests/workloads/tracectx.c $(FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) $(WORK_CFLAGS) -Iinclude -fno-ipa-icf -Wl,--export-dynamic-symbol=otel_thread_ctx_v1 \
	    -MF $@.d \
	    -o $@ $< -lpthread -lm

# phases and latelabels label through <libprof/prof_weak.h>, as an installed program would.
$(BUILD)/workloads/phases $(BUILD)/workloads/latelabels: $(BUILD)/workloads/%: \
    tests/workloads/%.c $(FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) $(WORK_CFLAGS) -Iinclude -fno-ipa-icf -MF $@.d -o $@ $< -lpthread -lm

# The examples include the API as an installed program does: <libprof/prof.h>.
$(BUILD)/examples/%: examples/%.c $(FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) $(WORK_CFLAGS) -Iinclude -MF $@.d -o $@ $< -lpthread -lm

# The stack-walk benchmark links the steppers' objects directly (bench/walk.sh runs it).
WALK_BENCH_OBJS := $(SMP_OBJS) $(filter-out $(LP_LIVE_OBJS),$(LP_OBJS))
$(BUILD)/bench/walk: bench/walk.c $(WALK_BENCH_OBJS) $(FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -MF $@.d -fno-omit-frame-pointer -o $@ $< $(WALK_BENCH_OBJS) \
	    $(if $(filter 1,$(UNWIND)),-lunwind) -lpthread -ldl

# The signal floor: a loop sampled as the perf source samples, doing nothing per sample;
# and what a second thread costs a program that unmaps memory.
$(BUILD)/bench/floor: bench/floor.c $(FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -MF $@.d -o $@ $< -lpthread -ldl

$(BUILD)/bench/cputime: bench/cputime.c $(FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -MF $@.d -o $@ $<

$(BUILD)/bench/tlb: bench/tlb.c $(FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -MF $@.d -o $@ $< -lpthread

# Start and exit (bench/startexit.py): a preloaded library that does nothing, and a loop
# of fork() and _exit().
$(BUILD)/bench/empty.so: bench/empty.c $(FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -fPIC -shared -MF $@.d -o $@ $<

$(BUILD)/bench/forkexit: bench/forkexit.c $(FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -MF $@.d -o $@ $<

# What a thread label costs (bench/labels.c): the weak calls, with and without libprof.
$(BUILD)/bench/labels: bench/labels.c $(FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -Iinclude -MF $@.d -o $@ $<

$(BUILD)/tests/unit: $(UNIT_TOBJS) $(UNIT_OBJS) $(FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) $(EXTRA_LDFLAGS) -o $@ $(filter %.o,$^) -lcriterion $(REP_LDLIBS) $(UNW_LDLIBS) -lpthread -ldl

$(BUILD)/tests/e2e: $(E2E_TOBJS) $(FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) $(EXTRA_LDFLAGS) -o $@ $(filter %.o,$^) -lcriterion -lpthread -lm

unit: $(BUILD)/tests/unit
e2e: all $(BUILD)/tests/e2e $(WORKLOADS)

test: deps
	@scripts/setup-browser.sh
	@$(MAKE) --no-print-directory -j$(JOBS) all unit e2e
	@$(MAKE) --no-print-directory lint
	@scripts/fuzz.sh $(TEST_FUZZ_SECONDS) $(TEST_FUZZ_CFI_SECONDS) >$(BUILD)/fuzz.log 2>&1 || \
	    { tail -n 20 $(BUILD)/fuzz.log; \
	      echo "fuzz: the profile reader or the unwind-table compiler crashed"; exit 1; }
	@echo "fuzz: $(TEST_FUZZ_SECONDS) s on the profile reader, $(TEST_FUZZ_CFI_SECONDS) s on the" \
	    "unwind-table compiler, no crash"
	@$(MAKE) --no-print-directory test-aarch64 >$(BUILD)/aarch64.log 2>&1 || \
	    { tail -n 20 $(BUILD)/aarch64.log; echo "test-aarch64: failed"; exit 1; }
	@grep -E 'Synthesis|skipped' $(BUILD)/aarch64.log | sed 's/^/aarch64: /'
	@scripts/run-tests.sh $(BUILD)

# The steppers' unit tests for aarch64: cross-built with a Criterion stand-in
# (tests/arch/mini) and run under qemu-user; skipped with a message without the tools.
AARCH64_CC    ?= aarch64-linux-gnu-gcc
QEMU_AARCH64  ?= qemu-aarch64
AARCH64_SRCS  := sampler/walk.c sampler/probe.c sampler/codemap.c libprof/codemap.c tests/arch/mini/main.c \
                 tests/common/test_uw_step.c tests/common/test_uw_build.c \
                 tests/arch/test_leaf.c tests/arch/test_sigframe.c tests/sampler/test_walk.c \
                 tests/sampler/test_probe.c tests/sampler/test_codemap.c
test-aarch64:
	@if ! command -v $(AARCH64_CC) >/dev/null 2>&1 || \
	    ! command -v $(QEMU_AARCH64) >/dev/null 2>&1; then \
	    echo "test-aarch64: skipped: $(AARCH64_CC) or $(QEMU_AARCH64) is missing" \
	         "(apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)"; \
	else \
	    mkdir -p $(BUILD)/aarch64 && \
	    $(AARCH64_CC) -std=gnu11 -D_GNU_SOURCE -I. -Itests/arch/mini $(WARN) \
	        -Wno-missing-prototypes -O2 -g -static -o $(BUILD)/aarch64/unit $(AARCH64_SRCS) \
	        -lpthread && \
	    $(QEMU_AARCH64) $(BUILD)/aarch64/unit; \
	fi

lint: $(LIB) $(HANDLER_OBJS)
	@scripts/lint.sh $(BUILD) $(HANDLER_OBJS)

# AddressSanitizer and UBSan over the unit tests and the reporter (the preloaded
# library cannot carry ASan into an uninstrumented program, so e2e stays out).
asan: deps
	@$(MAKE) --no-print-directory -j$(JOBS) BUILD=build/asan DEBUG=1 \
	    EXTRA_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all" \
	    EXTRA_LDFLAGS="-fsanitize=address,undefined" unit build/asan/prof
	@LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp scripts/run-tests.sh build/asan unit

fuzz:
	@scripts/setup.sh fuzz
	@scripts/fuzz.sh $(FUZZ_SECONDS)

bench:
	@scripts/setup.sh bench
	@$(MAKE) --no-print-directory all $(WORKLOADS) $(BUILD)/bench/walk $(BUILD)/bench/floor \
	    $(BUILD)/bench/tlb $(BUILD)/bench/cputime $(BUILD)/bench/empty.so $(BUILD)/bench/forkexit \
	    $(BUILD)/bench/labels
	@bench/walk.sh $(BUILD)
	@bench/run.sh $(BUILD)
	@python3 bench/fairness.py $(BUILD)
	@bench/reporter.sh $(BUILD)
	@bench/ci_false_alarms.sh $(BUILD)

demo: deps
	@$(MAKE) --no-print-directory -j$(JOBS) all $(EXAMPLES)
	@scripts/demo.sh $(BUILD)

# The library as distributions ship one: the file named by its full version, the soname
# link the loader follows, and the development link -lprof finds.
INSTALL_LIB := $(DESTDIR)$(LIBDIR)/libprof.so.$(VERSION)
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig \
	    $(DESTDIR)$(INCLUDEDIR)/libprof $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7 \
	    $(DESTDIR)$(BASHCOMPDIR)
	install -m 0755 $(LIB) $(INSTALL_LIB)
	ln -sf libprof.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libprof.so.$(SOMAJOR)
	ln -sf libprof.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/libprof.so
	install -m 0755 $(PROF) $(DESTDIR)$(BINDIR)/prof
	install -m 0755 scripts/ci-check.sh $(DESTDIR)$(BINDIR)/prof-ci-check
	install -m 0644 include/libprof/prof.h include/libprof/prof_format.h \
	    $(DESTDIR)$(INCLUDEDIR)/libprof/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(VERSION)|g' \
	    scripts/libprof.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/libprof.pc
	install -m 0644 docs/man/prof.1 $(DESTDIR)$(MANDIR)/man1/prof.1
	install -m 0644 docs/man/libprof.7 $(DESTDIR)$(MANDIR)/man7/libprof.7
	install -m 0644 scripts/prof-completion.bash $(DESTDIR)$(BASHCOMPDIR)/prof

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/prof $(DESTDIR)$(BINDIR)/prof-ci-check \
	    $(INSTALL_LIB) $(DESTDIR)$(LIBDIR)/libprof.so.$(SOMAJOR) \
	    $(DESTDIR)$(LIBDIR)/libprof.so $(DESTDIR)$(LIBDIR)/pkgconfig/libprof.pc \
	    $(DESTDIR)$(INCLUDEDIR)/libprof/prof.h $(DESTDIR)$(INCLUDEDIR)/libprof/prof_format.h \
	    $(DESTDIR)$(MANDIR)/man1/prof.1 $(DESTDIR)$(MANDIR)/man7/libprof.7 \
	    $(DESTDIR)$(BASHCOMPDIR)/prof
	-rmdir $(DESTDIR)$(INCLUDEDIR)/libprof 2>/dev/null

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
