# libprof: a statistical sampling CPU profiler. One non-recursive GNU Makefile.
# Targets: all test lint asan fuzz bench demo install clean (see README.md).
# Local overrides go in an untracked config.mak.
-include config.mak

ifeq ($(origin CC),default)
CC      := gcc
endif
ARCH    := $(shell $(CC) -dumpmachine | cut -d- -f1)
BUILD   ?= build
OBJ     := $(BUILD)/obj
PREFIX  ?= /usr/local
TEST_FUZZ_SECONDS ?= 15

WARN        := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
OPT         := -O2 -g
BASE_CFLAGS := -std=gnu11 -D_GNU_SOURCE -I. $(WARN) $(OPT) -MMD -MP $(EXTRA_CFLAGS)
LIB_CFLAGS  := -fPIC -fvisibility=hidden -fno-omit-frame-pointer -ftls-model=initial-exec
LIB_LDFLAGS := -shared -Wl,-z,now -Wl,-z,defs -Wl,--exclude-libs,ALL
REP_LDLIBS  := -lbfd -lz
WORK_CFLAGS := -std=gnu11 -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
               -fno-inline-functions -fno-optimize-sibling-calls $(WARN)

SMP_SRCS := $(wildcard sampler/*.c)
LP_SRCS  := $(wildcard libprof/*.c)
REP_SRCS := $(wildcard reporter/*.c)
SMP_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(SMP_SRCS))
LP_OBJS  := $(patsubst %.c,$(OBJ)/%.o,$(LP_SRCS))
REP_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(REP_SRCS))
LIB_OBJS := $(SMP_OBJS) $(LP_OBJS)

# The objects on the signal handler's path; `make lint` checks what they call.
HANDLER_OBJS := $(OBJ)/sampler/handler.o $(OBJ)/sampler/walk_fp.o $(OBJ)/sampler/ring.o

# Unit tests link the library's objects minus the ones that arm profiling from a
# constructor or interpose libc, and the reporter's objects minus main().
LP_LIVE_OBJS := $(OBJ)/libprof/lifecycle.o $(OBJ)/libprof/interpose.o $(OBJ)/libprof/api.o
UNIT_OBJS    := $(SMP_OBJS) $(filter-out $(LP_LIVE_OBJS),$(LP_OBJS)) \
                $(filter-out $(OBJ)/reporter/main.o,$(REP_OBJS))
UNIT_SRCS    := $(wildcard tests/sampler/test_*.c tests/libprof/test_*.c tests/reporter/test_*.c)
UNIT_TOBJS   := $(patsubst %.c,$(OBJ)/%.o,$(UNIT_SRCS))
E2E_SRCS     := $(wildcard tests/e2e/*.c)
E2E_TOBJS    := $(patsubst %.c,$(OBJ)/%.o,$(E2E_SRCS))
WORKLOADS    := $(patsubst tests/workloads/%.c,$(BUILD)/workloads/%,$(wildcard tests/workloads/*.c))
EXAMPLES     := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))

LIB  := $(BUILD)/libprof.so
PROF := $(BUILD)/prof

.PHONY: all deps test unit e2e lint asan fuzz bench demo install clean
all: $(LIB) $(PROF)

deps:
	@scripts/setup.sh

$(OBJ)/sampler/%.o: sampler/%.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(LIB_CFLAGS) -c $< -o $@

$(OBJ)/libprof/%.o: libprof/%.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(LIB_CFLAGS) -c $< -o $@

$(OBJ)/reporter/%.o: reporter/%.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -c $< -o $@

$(OBJ)/tests/%.o: tests/%.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -Wno-missing-prototypes -DBUILD_DIR='"$(abspath $(BUILD))"' \
	    -c $< -o $@

$(LIB): $(LIB_OBJS)
	$(CC) $(LIB_LDFLAGS) $(EXTRA_LDFLAGS) -o $@ $^ -lpthread -ldl

$(PROF): $(REP_OBJS)
	$(CC) $(EXTRA_LDFLAGS) -o $@ $^ $(REP_LDLIBS)

$(BUILD)/workloads/%: tests/workloads/%.c
	@mkdir -p $(@D)
	$(CC) $(WORK_CFLAGS) -o $@ $< -lpthread -lm

$(BUILD)/examples/%: examples/%.c
	@mkdir -p $(@D)
	$(CC) $(WORK_CFLAGS) -o $@ $< -lpthread -lm

$(BUILD)/tests/unit: $(UNIT_TOBJS) $(UNIT_OBJS)
	@mkdir -p $(@D)
	$(CC) $(EXTRA_LDFLAGS) -o $@ $^ -lcriterion $(REP_LDLIBS) -lpthread -ldl

$(BUILD)/tests/e2e: $(E2E_TOBJS)
	@mkdir -p $(@D)
	$(CC) $(EXTRA_LDFLAGS) -o $@ $^ -lcriterion -lpthread

unit: $(BUILD)/tests/unit
e2e: all $(BUILD)/tests/e2e $(WORKLOADS)

test: deps
	@$(MAKE) --no-print-directory all unit e2e
	@$(MAKE) --no-print-directory lint
	@scripts/fuzz.sh $(TEST_FUZZ_SECONDS) >$(BUILD)/fuzz.log 2>&1 || \
	    { tail -n 20 $(BUILD)/fuzz.log; echo "fuzz: the profile reader crashed"; exit 1; }
	@echo "fuzz: $(TEST_FUZZ_SECONDS) s on the profile reader, no crash"
	@scripts/run-tests.sh $(BUILD)

lint: $(LIB) $(HANDLER_OBJS)
	@scripts/lint.sh $(BUILD)

# AddressSanitizer and UBSan over the unit tests and the reporter (the preloaded
# library cannot carry ASan into an uninstrumented program, so e2e stays out).
asan: deps
	@$(MAKE) --no-print-directory BUILD=build/asan \
	    EXTRA_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all" \
	    EXTRA_LDFLAGS="-fsanitize=address,undefined" unit build/asan/prof
	@scripts/run-tests.sh build/asan unit

fuzz:
	@scripts/setup.sh fuzz
	@scripts/fuzz.sh $(FUZZ_SECONDS)

bench:
	@scripts/setup.sh bench
	@$(MAKE) --no-print-directory all $(WORKLOADS)
	@bench/run.sh $(BUILD)

demo: deps
	@$(MAKE) --no-print-directory all $(EXAMPLES)
	@scripts/demo.sh $(BUILD)

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/bin \
	    $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 0755 $(LIB) $(DESTDIR)$(PREFIX)/lib/libprof.so
	install -m 0755 $(PROF) $(DESTDIR)$(PREFIX)/bin/prof
	install -m 0644 include/prof.h include/prof_format.h $(DESTDIR)$(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|g' scripts/libprof.pc.in \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/libprof.pc

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
