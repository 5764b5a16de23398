/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal KTAP output for the pinsafe RDMA tests, following the conventions
 * of tools/testing/selftests/kselftest.h (exit codes, "# SKIP" directives,
 * "1..0 # SKIP" for a program that cannot run at all) without depending on
 * the kernel tree.
 *
 * Header only: the counters live in a function-local static, so every
 * translation unit may include this file, but only the program's main file
 * should report results.
 */
#ifndef PINSAFE_KTAP_H
#define PINSAFE_KTAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef __printf
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#endif
#ifndef __noreturn
#define __noreturn	__attribute__((noreturn))
#endif

#define KSFT_PASS	0
#define KSFT_FAIL	1
#define KSFT_XFAIL	2
#define KSFT_XPASS	3
#define KSFT_SKIP	4

struct ktap_state {
	unsigned int plan;
	unsigned int num;
	unsigned int pass;
	unsigned int fail;
	unsigned int skip;
};

static inline struct ktap_state *ktap_state(void)
{
	static struct ktap_state state;

	return &state;
}

static inline void ktap_print_header(void)
{
	/* stderr of libraries may be interleaved; keep our lines whole. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
}

static inline void ktap_set_plan(unsigned int plan)
{
	ktap_state()->plan = plan;
	printf("1..%u\n", plan);
}

static inline void __printf(1, 2)
ktap_print_msg(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static inline void ktap_test_pass(const char *name)
{
	struct ktap_state *s = ktap_state();

	s->pass++;
	printf("ok %u %s\n", ++s->num, name);
}

static inline void ktap_test_fail(const char *name)
{
	struct ktap_state *s = ktap_state();

	s->fail++;
	printf("not ok %u %s\n", ++s->num, name);
}

static inline void ktap_test_result(bool ok, const char *name)
{
	if (ok)
		ktap_test_pass(name);
	else
		ktap_test_fail(name);
}

static inline void __printf(2, 3)
ktap_test_skip(const char *name, const char *fmt, ...)
{
	struct ktap_state *s = ktap_state();
	va_list ap;

	s->skip++;
	printf("ok %u %s # SKIP ", ++s->num, name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/*
 * Nothing can run (no device, ...): a plan of one skipped test named name.
 * (kselftest prints "1..0 # SKIP", which kunit_parser.py, used by
 * scripts/report.py, counts as an error rather than a skip.)
 */
static inline void __noreturn __printf(2, 3)
ktap_exit_skip_all(const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("1..1\nok 1 %s # SKIP ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	exit(KSFT_SKIP);
}

/* Setup failed after the plan was printed: stop the whole document. */
static inline void __noreturn __printf(1, 2)
ktap_bail_out(const char *fmt, ...)
{
	va_list ap;

	printf("Bail out! ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	exit(KSFT_FAIL);
}

/* Print the totals and exit: 0 if every test passed or skipped. */
static inline void __noreturn ktap_finished(void)
{
	struct ktap_state *s = ktap_state();

	if (s->num != s->plan) {
		ktap_print_msg("planned %u tests but ran %u", s->plan, s->num);
		s->fail++;
	}
	printf("# Totals: pass:%u fail:%u xfail:0 xpass:0 skip:%u error:0\n",
	       s->pass, s->fail, s->skip);
	exit(s->fail ? KSFT_FAIL : KSFT_PASS);
}

#endif /* PINSAFE_KTAP_H */
