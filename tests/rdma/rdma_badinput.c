// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_badinput: ibv_reg_mr()/ibv_dereg_mr() with bad or unusual input must
 * fail with a clear errno (or succeed where the kernel allows it), never
 * crash. The expectations are those of the base 6.12 code:
 *
 *   ib_uverbs_reg_mr()     ib_check_mr_access(): REMOTE_WRITE without
 *                          LOCAL_WRITE -> EINVAL
 *   ib_umem_get()          addr + size wraps -> EINVAL; zero pages -> EINVAL
 *                          (pages are counted over the page-aligned range)
 *   pin_user_pages_fast()  no VMA, or a VMA without VM_WRITE for FOLL_WRITE,
 *                          or without VM_READ -> EFAULT (check_vma_flags());
 *                          a fault that ends in SIGBUS (beyond EOF of a
 *                          shmem file) -> EFAULT (vm_fault_to_errno())
 *
 * Environment: PINSAFE_MNT_TMPFS (else a memfd, the same shmem code).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"
#include "ktap.h"

#define NTESTS		14
#define BUF_SIZE	(64UL << 10)

static long page_size;

static void *map_anon(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		ktap_bail_out("mmap of %zu bytes: %s", len, strerror(errno));
	return p;
}

/* Deregister and report; returns true if ibv_dereg_mr() succeeded. */
static bool dereg(struct ibv_mr *mr)
{
	int err = ibv_dereg_mr(mr);

	if (err)
		ktap_print_msg("ibv_dereg_mr: %s", strerror(err));
	return !err;
}

/* Registration must fail with errno want. */
static void expect_fail(struct rdma_ctx *r, const char *name, void *addr,
			size_t len, int access, int want)
{
	struct ibv_mr *mr;
	int err;

	mr = rdma_reg(r, addr, len, access, &err);
	if (mr) {
		ktap_print_msg("registration succeeded, expected %s",
			       strerror(want));
		dereg(mr);
	} else if (err != want) {
		ktap_print_msg("expected errno %d (%s)", want, strerror(want));
	}
	ktap_test_result(!mr && err == want, name);
}

/* Registration must succeed and the MR must deregister cleanly. */
static void expect_ok(struct rdma_ctx *r, const char *name, void *addr,
		      size_t len, int access)
{
	struct ibv_mr *mr;
	int err;

	mr = rdma_reg(r, addr, len, access, &err);
	ktap_test_result(mr && dereg(mr), name);
}

/*
 * Zero length: ib_umem_get() counts the pages of the page-aligned range
 * [ALIGN_DOWN(addr), ALIGN(addr + len)), so 0 bytes at a page-aligned
 * address are 0 pages (EINVAL), and 0 bytes inside a page pin that page.
 * Both outcomes are legitimate for a verbs provider: accept a working MR or
 * EINVAL, and say which one happened.
 */
static void test_len0(struct rdma_ctx *r, const char *name, void *addr)
{
	struct ibv_mr *mr;
	bool ok;
	int err;

	mr = rdma_reg(r, addr, 0, RDMA_ACCESS_RW, &err);
	if (mr) {
		ktap_print_msg("zero-length MR at %p accepted (length %zu)",
			       addr, mr->length);
		ok = dereg(mr);
	} else {
		ktap_print_msg("zero-length MR at %p refused: %s", addr,
			       strerror(err));
		ok = err == EINVAL;
	}
	ktap_test_result(ok, name);
}

static void test_unmapped(struct rdma_ctx *r)
{
	void *p = map_anon(BUF_SIZE, PROT_READ | PROT_WRITE);

	munmap(p, BUF_SIZE);
	expect_fail(r, "reg_unmapped_efault", p, BUF_SIZE, RDMA_ACCESS_RW,
		    EFAULT);
}

static void test_prot(struct rdma_ctx *r)
{
	void *ro = map_anon(BUF_SIZE, PROT_READ);
	void *none = map_anon(BUF_SIZE, PROT_NONE);

	/* Map the zero page: gup-fast then sees present, !pte_write PTEs. */
	if (madvise(ro, BUF_SIZE, MADV_POPULATE_READ))
		ktap_print_msg("MADV_POPULATE_READ: %s", strerror(errno));
	expect_fail(r, "reg_prot_read_writable_efault", ro, BUF_SIZE,
		    RDMA_ACCESS_RW, EFAULT);
	expect_ok(r, "reg_prot_read_readonly_ok", ro, BUF_SIZE,
		  IBV_ACCESS_REMOTE_READ);
	expect_fail(r, "reg_prot_none_efault", none, BUF_SIZE,
		    IBV_ACCESS_REMOTE_READ, EFAULT);
	munmap(ro, BUF_SIZE);
	munmap(none, BUF_SIZE);
}

static void test_bad_args(struct rdma_ctx *r, void *buf)
{
	expect_fail(r, "reg_remote_write_without_local_write_einval", buf,
		    BUF_SIZE, IBV_ACCESS_REMOTE_WRITE, EINVAL);
	/* addr + len wraps around to page 1. */
	expect_fail(r, "reg_wrapping_range_einval", buf,
		    (size_t)(0 - (uintptr_t)buf) + page_size, RDMA_ACCESS_RW,
		    EINVAL);
}

/* A one-page shmem file; PINSAFE_MNT_TMPFS if set, else a memfd. */
static int open_one_page_file(char *path, size_t pathlen)
{
	const char *mnt = getenv("PINSAFE_MNT_TMPFS");
	int fd;

	path[0] = '\0';
	if (mnt && *mnt) {
		snprintf(path, pathlen, "%s/rdma_badinput.eof", mnt);
		fd = file_create_filled(path, page_size, 1);
		if (fd < 0)
			path[0] = '\0';
		return fd;
	}
	ktap_print_msg("PINSAFE_MNT_TMPFS not set: using a memfd (shmem too)");
	fd = memfd_create("rdma_badinput", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, page_size)) {
		close(fd);
		return -errno;
	}
	return fd;
}

/*
 * Two pages of a one-page file: the second page faults with SIGBUS
 * (shmem_get_folio_gfp() -EINVAL beyond i_size), which GUP turns into
 * EFAULT after ib_umem_get() has pinned the first page (and unpins it).
 */
static void test_past_eof(struct rdma_ctx *r)
{
	char path[PATH_MAX];
	void *p;
	int fd;

	fd = open_one_page_file(path, sizeof(path));
	if (fd < 0) {
		ktap_print_msg("one-page file: %s", strerror(-fd));
		ktap_test_skip("reg_past_eof_efault", "no file");
		ktap_test_skip("reg_before_eof_ok", "no file");
		return;
	}
	p = mmap(NULL, 2 * page_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, 0);
	if (p == MAP_FAILED)
		ktap_bail_out("mmap of a shmem file: %s", strerror(errno));
	expect_fail(r, "reg_past_eof_efault", p, 2 * page_size,
		    RDMA_ACCESS_RW, EFAULT);
	expect_ok(r, "reg_before_eof_ok", p, page_size, RDMA_ACCESS_RW);
	munmap(p, 2 * page_size);
	close(fd);
	if (path[0])
		unlink(path);
}

/* Register, deregister, register the same range again. */
static void test_rereg(struct rdma_ctx *r, void *buf)
{
	struct ibv_mr *mr;
	int err;

	mr = rdma_reg(r, buf, BUF_SIZE, RDMA_ACCESS_RW, &err);
	ktap_test_result(mr && dereg(mr), "dereg_ok");
	expect_ok(r, "reg_again_after_dereg_ok", buf, BUF_SIZE,
		  RDMA_ACCESS_RW);
}

/* Two MRs over one range coexist with distinct keys. */
static void test_overlap(struct rdma_ctx *r, void *buf)
{
	struct ibv_mr *a, *b;
	bool ok;
	int err;

	a = rdma_reg(r, buf, BUF_SIZE, RDMA_ACCESS_RW, &err);
	b = rdma_reg(r, buf, BUF_SIZE, RDMA_ACCESS_RW, &err);
	ok = a && b && a->lkey != b->lkey && a->rkey != b->rkey;
	if (a && b && !ok)
		ktap_print_msg("both MRs got the same keys");
	if (a && !dereg(a))
		ok = false;
	if (b && !dereg(b))
		ok = false;
	ktap_test_result(ok, "reg_same_range_twice_ok");
}

/* The pins outlive the mapping; dereg releases them without the VMA. */
static void test_dereg_after_munmap(struct rdma_ctx *r)
{
	void *p = map_anon(BUF_SIZE, PROT_READ | PROT_WRITE);
	struct ibv_mr *mr;
	int err;

	memset(p, 0x5a, BUF_SIZE);
	mr = rdma_reg(r, p, BUF_SIZE, RDMA_ACCESS_RW, &err);
	munmap(p, BUF_SIZE);
	ktap_test_result(mr && dereg(mr), "dereg_after_munmap_ok");
}

int main(int argc, char **argv)
{
	struct rdma_ctx r;
	char *buf;

	page_size = sysconf(_SC_PAGESIZE);
	rdma_start(argc, argv, &r, "rdma_badinput");
	ktap_set_plan(NTESTS);

	buf = map_anon(BUF_SIZE, PROT_READ | PROT_WRITE);
	memset(buf, 0xa5, BUF_SIZE);

	test_len0(&r, "reg_len0_aligned", buf);
	test_len0(&r, "reg_len0_unaligned", buf + 16);
	test_unmapped(&r);
	test_prot(&r);
	test_bad_args(&r, buf);
	test_past_eof(&r);
	test_rereg(&r, buf);
	test_overlap(&r, buf);
	test_dereg_after_munmap(&r);

	munmap(buf, BUF_SIZE);
	rdma_close(&r);
	ktap_finished();
}
