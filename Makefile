# Build: `make` builds build/libcore.a (all code that needs no KVM) and
# build/vmm.  `make check` runs every test that needs no guest; `make test`
# installs what is missing, then runs check and the end-to-end tests.
#
#   make SAN=address,undefined check    sanitizers (own build directory)
#   make SAN=thread check
#   make fuzz FUZZ_SECONDS=600          libFuzzer runs (clang)
#   make fuzz-smoke                     each target 20 s from the corpus
#   make ARCH=arm64                     the arm64 VMM, cross-built and
#                                       static: build/arm64/vmm
#
# ARCH picks the machine (arch/ARCH/): its pure models join libcore.a,
# its KVM code joins build/vmm.  Everything else is the same on both.

# Architecture names as kvmtool spells them: x86 (x86_64), arm64 (aarch64).
arch_name = $(patsubst x86_64,x86,$(patsubst aarch64,arm64,$(1)))
HOST_ARCH := $(call arch_name,$(shell uname -m))
ARCH    ?= $(HOST_ARCH)
override ARCH := $(call arch_name,$(ARCH))
SAN     ?=
WERROR  ?= -Werror
comma   := ,
ifeq ($(ARCH),$(HOST_ARCH))
CC      ?= gcc
O       ?= build$(if $(SAN),/san-$(subst $(comma),-,$(SAN)))
else ifeq ($(ARCH),arm64)
# Cross-built from Debian's gcc-aarch64-linux-gnu and the :arm64
# libraries, linked static: the arm64 test host has no arm64 userland
# of Debian's to load shared libraries from.
override CC := aarch64-linux-gnu-gcc
O       ?= build/arm64$(if $(SAN),/san-$(subst $(comma),-,$(SAN)))
CROSS_STATIC := -static
# libfdt for arm64 beside the host's (tests/arm64-libfdt.sh says why).
CROSS_FDT := build/arm64/libfdt
CFLAGS  += -I$(CROSS_FDT)
LDFLAGS += -L$(CROSS_FDT)
else
$(error ARCH=$(ARCH): x86 (x86_64) on an x86-64 host, or arm64)
endif

WARN    := -Wall -Wextra -Wshadow -Wvla -Wformat=2 -Wpointer-arith \
	   -Wstrict-prototypes -Wmissing-prototypes -Wundef \
	   $(WERROR)
CFLAGS  ?= -O2 -g
# Link-time optimisation: the per-request path crosses virtio/ and blk/
# (pop, chain walk, parse, push), and inlining across them saves about 70
# instructions per request (bench/JOURNAL.md, callgrind).  LTO= turns it off.
LTO     ?= -flto=auto
CFLAGS  += $(LTO) -std=gnu11 -D_GNU_SOURCE -pthread -I. $(WARN) -MMD -MP
# json-c: the control socket's JSON (api/) and devbench's reading of fio's.
LDLIBS  := -luring -lseccomp -ljson-c -lpthread -lm
# json-c: devbench reads fio's JSON output with it (bench/fiojson.c).
JSONC_CFLAGS = $(shell pkg-config --cflags json-c)
JSONC_LIBS   = $(shell pkg-config --libs json-c)
ifneq ($(SAN),)
CFLAGS  += -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SAN)
endif
# gcc warns that TSan does not model standalone fences; the ring code
# needs them, and TSan still checks every other access.
ifneq ($(findstring thread,$(SAN)),)
CFLAGS  += -Wno-tsan
endif

CORE_SRC := $(wildcard virtio/*.c blk/*.c hw/*.c host/*.c api/*.c arch/$(ARCH)/hw/*.c)
VMM_SRC  := $(wildcard vmm/*.c arch/$(ARCH)/vmm/*.c)
CORE_OBJ := $(CORE_SRC:%.c=$(O)/%.o)
# What only one architecture's VMM links: liblzma (x86: a bzImage's
# payload unpacked on the host), libfdt (arm64: the device tree).
VMM_LIBS_x86    := -llzma
VMM_LIBS_arm64  := -lfdt
VMM_OBJ  := $(VMM_SRC:%.c=$(O)/obj/%.o)

TEST_SUPPORT := $(wildcard tests/support/*.c)
TEST_SRC     := $(wildcard tests/unit/test_*.c)
TEST_BIN     := $(TEST_SRC:tests/unit/%.c=$(O)/tests/%)
# The arm64 machine's pure models (Image loader, device tree, ECAM) are
# tested on any host, linked in from their own objects.
ARM64_HW_OBJ := $(patsubst %.c,$(O)/%.o,$(wildcard arch/arm64/hw/*.c))
ARM64_TEST_SRC := $(wildcard tests/unit/arm64/test_*.c)
TEST_BIN     += $(ARM64_TEST_SRC:tests/unit/arm64/%.c=$(O)/tests/arm64/%)
TEST_SUP_OBJ := $(TEST_SUPPORT:%.c=$(O)/%.o)

FUZZ_SRC     := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_REPLAY  := $(FUZZ_SRC:tests/fuzz/%.c=$(O)/fuzz-replay/%)
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 20
# The clang builds of the fuzz targets (tests/fuzz/run.sh), apart.
FUZZ_OUT     := $(O)/fuzz

BENCH_BIN := $(O)/bench/devbench
TOOLS     := $(O)/tests/no-uring

.PHONY: all check test e2e-arm64 unit fuzz-replay fuzz fuzz-smoke deps guest guest-kernel e2e run devbench bench bench-smoke clean
ifeq ($(CROSS_STATIC),)
all: $(O)/libcore.a $(O)/vmm $(TEST_BIN) $(BENCH_BIN) $(TOOLS)
else
# Cross-built: the VMM; `make ARCH=arm64 unit` builds the unit tests of
# everything but the x86 machine's models and runs them in the arm64 test
# host (tests/arm64-unit.sh).
X86_TESTS := test_boot test_mptable test_pci_host test_serial
# test_fiojson: devbench's own module, and devbench is not cross-built
# (nor json-c installed for arm64).
TEST_BIN := $(filter-out $(X86_TESTS:%=$(O)/tests/%) $(O)/tests/test_fiojson,$(TEST_BIN))
all: $(O)/vmm
endif

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(O)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(O)/libcore.a: $(CORE_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

ifneq ($(CROSS_FDT),)
$(CROSS_FDT)/libfdt.a:
	tests/arm64-libfdt.sh $(CROSS_FDT)
$(CORE_OBJ) $(VMM_OBJ): | $(CROSS_FDT)/libfdt.a
endif

$(O)/vmm: $(VMM_OBJ) $(O)/libcore.a
	$(CC) $(CFLAGS) $(LDFLAGS) $(CROSS_STATIC) $^ -o $@ $(LDLIBS) $(VMM_LIBS_$(ARCH))

$(O)/tests/%: $(O)/tests/unit/%.o $(TEST_SUP_OBJ) $(O)/libcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS) -lcmocka

$(O)/tests/arm64/%: $(O)/tests/unit/arm64/%.o $(ARM64_HW_OBJ) $(O)/libcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ -lfdt -lcmocka -lpthread

# Helpers of the end-to-end tests (tests/tools).
$(O)/tests/%: tests/tools/%.c $(O)/tests/support/nouring.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@

$(O)/bench/devbench: $(O)/bench/devbench.o $(O)/bench/fiojson.o $(TEST_SUP_OBJ) $(O)/libcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS) $(JSONC_LIBS) -lm

# bench/fiojson.c (fio's JSON through json-c) is not in libcore.a: the
# VMM has no use for it.
$(O)/bench/fiojson.o: CFLAGS += $(JSONC_CFLAGS)
$(O)/tests/test_fiojson: $(O)/bench/fiojson.o
# vmm/'s option parser and terminal handling, tested without KVM (the
# parser calls blk/'s: libcore.a again after it).
$(O)/tests/test_cmdline: $(O)/obj/vmm/cmdline.o
$(O)/tests/test_cmdline: LDLIBS := $(O)/libcore.a $(LDLIBS)
$(O)/tests/test_term: $(O)/obj/vmm/term.o
$(O)/tests/test_fiojson: LDLIBS += $(JSONC_LIBS)

# The fuzz targets built by the normal compiler with a main() that replays
# the corpus, so `make check` runs every saved input.
# Both machines' models are fuzzed on this host: the arm64 ones (the
# Image loader, the device tree, ECAM) are linked in from their objects.
FUZZ_ARM64_OBJ := $(if $(filter x86,$(ARCH)),$(ARM64_HW_OBJ))
$(O)/fuzz-replay/%: tests/fuzz/%.c tests/fuzz/replay_main.c $(TEST_SUP_OBJ) $(FUZZ_ARM64_OBJ) $(O)/libcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS) -lfdt

ifeq ($(CROSS_STATIC),)
unit: $(TEST_BIN)
	@tests/run-unit.sh $(TEST_BIN)
else
unit: $(TEST_BIN)
	@tests/arm64-unit.sh $(abspath $(O)/lib) $(abspath $(TEST_BIN))
endif

fuzz-replay: $(FUZZ_REPLAY)
	@tests/run-unit.sh $(FUZZ_REPLAY:%=replay:%)

# Everything that needs no guest: KVM smoke tests with tiny guests (in the
# test host where this host has no usable /dev/kvm), unit and harness
# tests, fuzz-corpus replay; and (plain build only) the arm64 VMM built,
# its checks that need no KVM (tests/smoke/arm64.sh) and the unit tests
# built for arm64, run in the arm64 test host (tests/arm64-unit.sh).
check: all $(FUZZ_REPLAY)
	@SMOKE_SAN=$(SAN) tests/timed.sh smoke tests/smoke/run.sh $(abspath $(O)/vmm)
ifeq ($(SAN),)
	$(MAKE) --no-print-directory ARCH=arm64
	@tests/smoke/arm64.sh $(abspath build/arm64/vmm)
	@tests/timed.sh "arm64 unit (arm64 test host)" $(MAKE) --no-print-directory ARCH=arm64 unit
endif
	@tests/timed.sh "unit, fuzz replay" tests/run-unit.sh $(TEST_BIN) $(FUZZ_REPLAY:%=replay:%)
# The harness's tests do not depend on the C build: once, not per sanitizer.
ifeq ($(SAN),)
	@tests/timed.sh tests/py /usr/bin/python3 -m pytest -q -p no:cacheprovider --color=no tests/py
endif

fuzz:
	FUZZ_OUT=$(FUZZ_OUT) tests/fuzz/run.sh $(FUZZ_SECONDS)

# Every libFuzzer target built with clang and run a short while from the
# committed corpus (which it leaves as it is): a fuzz build that broke,
# or an input of the corpus that crashes, fails.
fuzz-smoke:
	FUZZ_OUT=$(FUZZ_OUT) FUZZ_SMOKE=1 tests/fuzz/run.sh $(FUZZ_SMOKE_SECONDS)

deps:
	@tests/deps.sh

# The sanitizer builds of check run too: a relaxed store where a release
# is needed compiles to the same x86 code, and only TSan sees it.
# Each step's time goes to the log and, at the end, to a table (tests/timed.sh).
test: deps
	@rm -f build/test-times.txt
	@tests/timed.sh check $(MAKE) check
	@tests/timed.sh fuzz-smoke $(MAKE) fuzz-smoke
	@tests/timed.sh "check (address,undefined)" $(MAKE) SAN=address,undefined check
	@tests/timed.sh "check (thread)" $(MAKE) SAN=thread check
	@tests/timed.sh e2e $(MAKE) e2e E2E_MARK="not long" ARM64_E2E_CASES="$(ARM64_QUICK)"
	@tests/timed.sh bench-smoke $(MAKE) bench-smoke
	@tests/timed.sh --summary

guest:
	ARCH=$(ARCH) guest/build.sh

# A guest kernel of one's own, build/guest/kernels/NAME/bzImage: Debian's
# linux-source of the guest kernel's version with the *.patch of PATCHES
# applied and CONFIG (a fragment on allnoconfig; default guest/small.config),
# cached by the content of all three (guest/build.sh kernel; guest/README.md).
guest-kernel: guest
	guest/build.sh kernel "$(NAME)" "$(PATCHES)" "$(CONFIG)"

# End to end (tests/e2e/README.md): the pytest tests of tests/e2e/py (bad
# command lines, then real guests under QEMU and ours, on each guest
# kernel) through bench/vmbench pytest: in one boot of the test host when
# this host's KVM is too slow for Linux (`vmm probe` decides), booted
# again for the tests left if it dies.  E2E_MARK picks by pytest marker:
# `make test` leaves out the tests marked long (E2E_MARK="not long").
e2e: all
	@tests/timed.sh "x86 guest build" $(MAKE) --no-print-directory guest
	@tests/timed.sh "x86 e2e (x86 test host)" bench/vmbench pytest $(if $(E2E_MARK),-- -m "$(E2E_MARK)")
	@tests/timed.sh "arm64 e2e (arm64 test host)" $(MAKE) --no-print-directory e2e-arm64

# The arm64 VMM end to end (tests/e2e/arm64): Debian's arm64 kernel in the
# arm64 test host, from this host's pytest; `make test` runs the quick
# cases, `make e2e` every one (ARM64_E2E_CASES picks).
ARM64_QUICK := verify-ram-2q verify-file-1q readonly console sigterm poweroff reset panic
ARM64_E2E_CASES ?= $(ARM64_QUICK) verify-ram-1q verify-file-2q verify-intx hotplug hotplug-io hotplug-rescan hotplug-launch hotplug-50 sizes sizes-4 sizes-16
e2e-arm64:
	$(MAKE) --no-print-directory ARCH=arm64 SAN=
	@tests/timed.sh "arm64 guest build" env ARCH=arm64 guest/build.sh
	ARM64_E2E_CASES="$(ARM64_E2E_CASES)" /usr/bin/python3 -m pytest -q \
		-p no:cacheprovider --color=no tests/e2e/arm64

# The main job: 2 vCPUs, ram:1G as /dev/vdb, fio randread-4k and
# randwrite-4k, a summary at the end (bench/vmbench run; KERNEL=small for the
# small guest kernel; ARCH=arm64: the arm64 VMM in the arm64 test host).
run: all guest
	bench/vmbench run $(if $(filter arm64,$(ARCH)),--arch arm64) $(if $(KERNEL),--kernel $(KERNEL))

bench: $(BENCH_BIN)

# The device alone, driven from the host, against the host's fio (the
# full matrix takes a few minutes; DEVBENCH_ARGS=--quick for a subset).
devbench: $(BENCH_BIN)
	$(BENCH_BIN) $(DEVBENCH_ARGS)

# A short run of bench/vmbench (one repeat, one tiny job) and checks of
# everything it writes (tests/bench-smoke.sh).
bench-smoke: all guest
	tests/bench-smoke.sh

clean:
	rm -rf build

-include $(shell find $(O) -name '*.d' -type f -not -path '*/guest/*' 2>/dev/null)

.SECONDARY:
