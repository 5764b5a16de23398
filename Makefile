# pinsafe: safe DMA pins of file-backed pages. See README.md.
CONFIG ?= test
ONLY ?=
ROUNDS ?= 3
only := $(if $(ONLY),--only $(ONLY))

.PHONY: help deps base tree export build build-base tests check check-base \
	compare demo lint bench clean

help:
	@sed -n 's/^## //p' README.md | head -40 || true
	@echo "targets: demo check compare tree export build lint bench clean"

deps:
	scripts/deps.sh
base: deps
	scripts/fetch-base.sh
tree: base
	scripts/tree.sh
export:
	scripts/export.sh
build: tree
	scripts/build.sh --config $(CONFIG)
build-base: tree
	scripts/build.sh --config $(CONFIG) --base
tests: build
	scripts/build-tests.sh --config $(CONFIG)

# The test command (README, .ci/run): the series kernel, every suite.
check:
	scripts/check.sh --config $(CONFIG) $(only)
check-base:
	scripts/check.sh --config $(CONFIG) --base $(only)

# Base and series side by side in one table.
compare:
	scripts/check.sh --config $(CONFIG) --no-report $(only)
	scripts/check.sh --config $(CONFIG) --base --no-report $(only)
	scripts/report.py series=build/run-series-$(CONFIG) base=build/run-base-$(CONFIG) \
		| tee build/compare-$(CONFIG).txt

demo:
	scripts/demo.sh

lint:
	scripts/lint.sh

bench:
	scripts/bench.sh --rounds $(ROUNDS)

clean:
	rm -rf build/obj-* build/tests-* build/run-*
