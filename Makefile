# pinsafe: safe DMA pins of file-backed pages. See README.md and docs/.
# "make help" lists the targets: the "## target: text" comments below.
CONFIG ?= test
ONLY ?=
ROUNDS ?= 3
only := $(if $(ONLY),--only $(ONLY)) $(if $(FILTER),--filter $(FILTER))
# build/, or where scripts/lib.sh puts it (a checkout path with spaces).
# make soak runs the debug kernel unless CONFIG is given.
soak_config := $(if $(filter file,$(origin CONFIG)),debug,$(CONFIG))
BUILD := $(shell bash -c '. scripts/lib.sh && echo "$$BUILD"')

.PHONY: help selftest deps base tree export build build-base tests check \
	check-base check-bisect compare demo shell lint bench two-host fstests soak kunit deb clean

## help: list the targets (this text)
help:
	@echo "usage: make TARGET [CONFIG=qemu|test|debug] [ONLY=suite,...] [FILTER=test,...] [ROUNDS=N]"
	@echo "       PINSAFE_ACCEL=auto|kvm|tcg selects QEMU's accelerator (default: probe KVM)"
	@awk '/^## [a-z-]+: / { sub(/^## /, ""); i = index($$0, ": "); \
		printf "  %-12s %s\n", substr($$0, 1, i - 1), substr($$0, i + 2) }' \
		Makefile

## selftest: harness self-tests on recorded logs (seconds, no build needed)
selftest:
	@command -v python3 >/dev/null || scripts/deps.sh
	python3 scripts/harness_test.py

## deps: install the Debian 12 packages that are missing (apt-get)
deps:
	scripts/deps.sh
## base: install and verify the base source package (BASE)
base: deps
	scripts/fetch-base.sh
## tree: (re)make build/linux: base as git, patches/ applied with git am
tree: base
	scripts/tree.sh
## export: write base..HEAD of build/linux back to patches/
export:
	scripts/export.sh
## build: build the series kernel only (CONFIG=qemu|test|debug)
build: tree
	scripts/build.sh --config $(CONFIG)
## build-base: build the base kernel (+ the test patches) only
build-base: tree
	scripts/build.sh --config $(CONFIG) --base
## tests: build the series kernel and the userspace tests
tests: build
	scripts/build-tests.sh --config $(CONFIG)

# The test command (README, .ci/run): the series kernel, every suite.
## check: selftest, then build, boot and run every suite on the series kernel
check: selftest tree
	scripts/check.sh --config $(CONFIG) $(only)
## check-base: the same on the base kernel (+ the test patches)
check-base: selftest tree
	scripts/check.sh --config $(CONFIG) --base $(only)

## check-bisect: checkpatch, build, boot and test every prefix of the series [FROM=N] [TO=M] [JOBS=guests]
check-bisect: selftest tree
	scripts/check-bisect.sh $(if $(FROM),--from $(FROM)) $(if $(TO),--to $(TO)) $(if $(JOBS),--jobs $(JOBS))

# Base and series side by side in one table.
## compare: check on series and base, one table with both columns
compare: selftest tree
	scripts/check.sh --config $(CONFIG) --no-report $(only)
	scripts/check.sh --config $(CONFIG) --base --no-report $(only)
	scripts/report.py series=$(BUILD)/run-series-$(CONFIG) base=$(BUILD)/run-base-$(CONFIG) \
		| tee $(BUILD)/compare-$(CONFIG).txt

## demo: from a fresh machine to RDMA on a file (DEMO_BASE=1: base too)
demo: tree
	scripts/demo.sh

## shell: boot the series kernel with disks, rxe and tests set up; a shell on this terminal
shell: tree
	scripts/shell.sh --config $(CONFIG)

## lint: checkpatch --strict on the patches, shellcheck on the scripts
lint: tree
	scripts/lint.sh

## bench: guest instruction counts per workload, base vs series (TCG plugin)
bench: tree
	scripts/bench.sh --rounds $(ROUNDS)

## two-host: RDMA between two guests into file MRs, series beside base
two-host: tree
	scripts/two-host.sh --config $(CONFIG)

## fstests: curated fstests on FS=ext4|xfs from FSTESTS=<checkout> [KERNEL=series|base] [GROUP=quick|TESTS=a,b]
fstests: tree
	scripts/fstests.sh --fstests "$(FSTESTS)" --fs "$(FS)" --config $(CONFIG) \
		$(if $(KERNEL),--kernels $(KERNEL)) $(if $(GROUP),--group $(GROUP)) \
		$(if $(TESTS),--tests $(TESTS))

## soak: DURATION=30m of every writer and disturbance at once (CONFIG=debug)
soak: tree
	scripts/soak.sh --duration $(or $(DURATION),30m) --config $(soak_config) \
		$(if $(KERNEL),--kernels $(KERNEL))

## kunit: the gup_pin KUnit suite with kunit.py --kunitconfig=mm --arch=x86_64
kunit: tree
	scripts/kunit.sh

## deb: linux-image/linux-libc-dev packages of the series [DEB_CONFIG=test|debian]
deb: tree
	scripts/deb.sh --config $(or $(DEB_CONFIG),test)

## clean: remove kernel builds, test builds and run logs (keeps build/linux)
clean:
	rm -rf $(BUILD)/obj-* $(BUILD)/tests-* $(BUILD)/run-*
