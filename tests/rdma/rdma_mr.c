// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_mr: register memory regions over different kinds of memory and let
 * rxe write into them with RDMA WRITE, through a loopback RC QP pair.
 *
 * For every buffer kind in kinds[]:
 *   reg_ro_<kind>  (some file kinds) REMOTE_READ-only registration works and
 *                  RDMA READ returns the file contents
 *   reg_rw_<kind>  LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ registration has the
 *                  outcome the table expects (success, or EFAULT)
 *   write_<kind>   RDMA WRITE of a pattern lands, checked byte by byte by CPU
 *                  (file kinds: after a writeback that cleaned the pages)
 *   read_<kind>    RDMA READ of the region returns the same pattern
 *   disk_<kind>    (ext4/xfs) after msync+fsync, with the MR still held, the
 *                  blocks named by FIEMAP hold the expected bytes (O_DIRECT
 *                  reads of the block device)
 *   dereg_<kind>   ibv_dereg_mr() works and the contents survive it (files:
 *                  read back with pread after dropping the page cache)
 *
 * Environment: PINSAFE_MNT_{TMPFS,EXT4,XFS}, PINSAFE_DEV_{EXT4,XFS}.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common.h"
#include "ktap.h"

enum reg_expect {
	EXPECT_REG_OK,
	EXPECT_REG_EFAULT,
};

/*
 * A writable ibv_reg_mr() of a MAP_SHARED ext4 or xfs file must work: the
 * base kernel refuses the FOLL_LONGTERM|FOLL_WRITE pin with EFAULT (mm/gup.c
 * writable_file_mapping_allowed(), gup_fast_folio_allowed()), which is what
 * the series fixes. With vm.longterm_pin_file_mappings=0 the series refuses
 * it again, on purpose: the *_knob_off kinds check that.
 */
#define KNOB	"/proc/sys/vm/longterm_pin_file_mappings"

enum backing {
	BACK_MALLOC,		/* posix_memalign() */
	BACK_ANON_MMAP,		/* MAP_PRIVATE|MAP_ANONYMOUS */
	BACK_MEMFD,		/* memfd_create(), MAP_SHARED */
	BACK_FILE,		/* a file on a mounted file system */
};

struct fs_info {
	const char *name;
	const char *mnt_env;
	const char *dev_env;	/* NULL: no block device to check */
	long magic;
};

static const struct fs_info fs_tmpfs = {
	"tmpfs", "PINSAFE_MNT_TMPFS", NULL, TMPFS_MAGIC,
};
static const struct fs_info fs_ext4 = {
	"ext4", "PINSAFE_MNT_EXT4", "PINSAFE_DEV_EXT4", EXT4_SUPER_MAGIC,
};
static const struct fs_info fs_xfs = {
	"xfs", "PINSAFE_MNT_XFS", "PINSAFE_DEV_XFS", XFS_SUPER_MAGIC,
};

struct buf_kind {
	const char *name;
	enum backing backing;
	const struct fs_info *fs;	/* BACK_FILE only */
	int map_flags;			/* MAP_SHARED or MAP_PRIVATE */
	size_t size;
	enum reg_expect expect_rw;
	bool test_ro;			/* also a read-only registration */
	bool knob_off;			/* register with KNOB set to 0 */
};

#define SZ_64K	(64UL << 10)
#define SZ_4M	(4UL << 20)

static const struct buf_kind kinds[] = {
	{ "anon_malloc", BACK_MALLOC, NULL, 0, SZ_64K,
	  EXPECT_REG_OK, false, false },
	{ "anon_mmap", BACK_ANON_MMAP, NULL, MAP_PRIVATE, SZ_64K,
	  EXPECT_REG_OK, false, false },
	{ "memfd_shared", BACK_MEMFD, NULL, MAP_SHARED, SZ_64K,
	  EXPECT_REG_OK, false, false },
	{ "tmpfs_shared", BACK_FILE, &fs_tmpfs, MAP_SHARED, SZ_64K,
	  EXPECT_REG_OK, false, false },
	{ "ext4_shared", BACK_FILE, &fs_ext4, MAP_SHARED, SZ_64K,
	  EXPECT_REG_OK, true, false },
	{ "xfs_shared", BACK_FILE, &fs_xfs, MAP_SHARED, SZ_64K,
	  EXPECT_REG_OK, true, false },
	{ "ext4_shared_knob_off", BACK_FILE, &fs_ext4, MAP_SHARED, SZ_64K,
	  EXPECT_REG_EFAULT, false, true },
	/* FOLL_WRITE breaks COW: rxe writes anon copies, the file keeps its data. */
	{ "ext4_private", BACK_FILE, &fs_ext4, MAP_PRIVATE, SZ_64K,
	  EXPECT_REG_OK, false, false },
	{ "anon_mmap_4m", BACK_ANON_MMAP, NULL, MAP_PRIVATE, SZ_4M,
	  EXPECT_REG_OK, false, false },
	{ "tmpfs_shared_4m", BACK_FILE, &fs_tmpfs, MAP_SHARED, SZ_4M,
	  EXPECT_REG_OK, false, false },
	{ "ext4_shared_4m", BACK_FILE, &fs_ext4, MAP_SHARED, SZ_4M,
	  EXPECT_REG_OK, false, false },
	{ "xfs_shared_4m", BACK_FILE, &fs_xfs, MAP_SHARED, SZ_4M,
	  EXPECT_REG_OK, false, false },
};

#define NKINDS		ARRAY_SIZE(kinds)
#define SCRATCH_SIZE	SZ_4M

/* A registered anonymous buffer: RDMA WRITE source and RDMA READ sink. */
struct scratch {
	void *addr;
	struct ibv_mr *mr;
};

/* One instance of a buffer kind under test. */
struct buf {
	const struct buf_kind *k;
	unsigned int file_seed;		/* initial contents */
	unsigned int rdma_seed;		/* what RDMA WRITE puts there */
	void *addr;
	int fd;
	char path[PATH_MAX];
	const char *blkdev;		/* NULL: no disk check possible */
	int reg_err;			/* errno of the RW registration */
};

static const char *errno_name(int err)
{
	const char *name = err ? strerrorname_np(err) : NULL;

	return name ? name : "failed";
}

static bool kind_has_disk(const struct buf_kind *k)
{
	return k->backing == BACK_FILE && k->fs->dev_env;
}

static bool kind_is_shared(const struct buf_kind *k)
{
	return k->map_flags & MAP_SHARED;
}

static unsigned int kind_ntests(const struct buf_kind *k)
{
	return 4 + k->test_ro + kind_has_disk(k);
}

static const char *tname(const char *test, const struct buf *b)
{
	static char name[128];

	snprintf(name, sizeof(name), "%s_%s", test, b->k->name);
	return name;
}

/* ---- buffer setup ----------------------------------------------------- */

static int map_fd(struct buf *b)
{
	b->addr = mmap(NULL, b->k->size, PROT_READ | PROT_WRITE,
		       b->k->map_flags, b->fd, 0);
	if (b->addr == MAP_FAILED) {
		b->addr = NULL;
		return -errno;
	}
	return 0;
}

/* Returns 0, or a reason to skip the kind in *why. */
static int setup_file(struct buf *b, char *why, size_t whylen)
{
	const struct fs_info *fs = b->k->fs;
	const char *mnt = getenv(fs->mnt_env);
	struct statfs st;

	if (!mnt || !*mnt) {
		snprintf(why, whylen, "%s not set", fs->mnt_env);
		return -ENOENT;
	}
	if (statfs(mnt, &st)) {
		snprintf(why, whylen, "%s: %s", mnt, strerror(errno));
		return -errno;
	}
	if (st.f_type != fs->magic) {
		snprintf(why, whylen, "%s is not %s (f_type 0x%lx)", mnt,
			 fs->name, (long)st.f_type);
		return -EINVAL;
	}
	snprintf(b->path, sizeof(b->path), "%s/rdma_mr.%s", mnt, b->k->name);
	b->fd = file_create_filled(b->path, b->k->size, b->file_seed);
	if (b->fd < 0) {
		snprintf(why, whylen, "create %s: %s", b->path,
			 strerror(-b->fd));
		b->path[0] = '\0';
		return b->fd;
	}
	if (fs->dev_env) {
		b->blkdev = getenv(fs->dev_env);
		if (b->blkdev && !*b->blkdev)
			b->blkdev = NULL;
	}
	return 0;
}

static int buf_setup(struct buf *b, char *why, size_t whylen)
{
	size_t size = b->k->size;
	int ret;

	b->fd = -1;
	switch (b->k->backing) {
	case BACK_MALLOC:
		ret = -posix_memalign(&b->addr, 4096, size);
		if (!ret)
			pattern_fill(b->addr, size, b->file_seed);
		break;
	case BACK_ANON_MMAP:
		b->addr = mmap(NULL, size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ret = b->addr == MAP_FAILED ? -errno : 0;
		if (ret)
			b->addr = NULL;
		else
			pattern_fill(b->addr, size, b->file_seed);
		break;
	case BACK_MEMFD:
		b->fd = memfd_create("rdma_mr", MFD_CLOEXEC);
		ret = b->fd < 0 ? -errno : 0;
		if (!ret && ftruncate(b->fd, size))
			ret = -errno;
		if (!ret)
			ret = fd_fill(b->fd, size, b->file_seed);
		break;
	case BACK_FILE:
		ret = setup_file(b, why, whylen);
		if (ret)
			return ret;
		break;
	default:
		ret = -EINVAL;
	}
	if (!ret && b->fd >= 0)
		ret = map_fd(b);
	if (ret)
		snprintf(why, whylen, "buffer setup failed: %s",
			 strerror(-ret));
	return ret;
}

static void buf_unmap(struct buf *b)
{
	if (!b->addr)
		return;
	if (b->k->backing == BACK_MALLOC)
		free(b->addr);
	else
		munmap(b->addr, b->k->size);
	b->addr = NULL;
}

static void buf_teardown(struct buf *b)
{
	buf_unmap(b);
	if (b->fd >= 0)
		close(b->fd);
	if (b->path[0])
		unlink(b->path);
}

/* ---- test steps ------------------------------------------------------- */

/* RDMA READ the whole region into scratch and compare with seed. */
static bool read_back(struct rdma_ctx *r, struct scratch *s, struct buf *b,
		      struct ibv_mr *mr, unsigned int seed, const char *what)
{
	memset(s->addr, 0, b->k->size);
	if (rdma_rw(r, IBV_WR_RDMA_READ, s->mr, s->addr, b->k->size, mr,
		    b->addr))
		return false;
	return pattern_check(s->addr, b->k->size, seed, what);
}

/*
 * A pin without FOLL_WRITE is allowed on every mapping, so the base kernel
 * accepts this; the data read must be the file's.
 */
static void test_reg_ro(struct rdma_ctx *r, struct scratch *s, struct buf *b)
{
	struct ibv_mr *mr;
	bool ok;
	int err;

	mr = rdma_reg(r, b->addr, b->k->size, IBV_ACCESS_REMOTE_READ, &err);
	if (!mr) {
		ktap_test_fail(tname("reg_ro", b));
		return;
	}
	ok = read_back(r, s, b, mr, b->file_seed, "RDMA READ of read-only MR");
	err = ibv_dereg_mr(mr);
	if (err) {
		ktap_print_msg("ibv_dereg_mr: %s", strerror(err));
		ok = false;
	}
	ktap_test_result(ok, tname("reg_ro", b));
}

/*
 * Register for writing and judge the outcome against the table. Returns the
 * MR if registration worked (even if unexpectedly), else NULL with the
 * reason for skipping the data tests in *why.
 */
/* Write @val to KNOB; returns the old value, or -1 if there is no KNOB. */
static int knob_set(int val)
{
	char old = '1', buf[2] = { (char)('0' + val), '\n' };
	int fd = open(KNOB, O_RDWR);

	if (fd < 0)
		return -1;
	if (read(fd, &old, 1) != 1 || pwrite(fd, buf, 2, 0) != 2)
		ktap_print_msg("%s: %s", KNOB, strerror(errno));
	close(fd);
	return old - '0';
}

static struct ibv_mr *test_reg_rw(struct rdma_ctx *r, struct buf *b,
				  char *why, size_t whylen)
{
	const struct buf_kind *k = b->k;
	const char *map = kind_is_shared(k) ? "MAP_SHARED" : "MAP_PRIVATE";
	struct ibv_mr *mr;
	int err, knob = -1;

	if (k->knob_off) {
		knob = knob_set(0);
		ktap_print_msg("%s %s with %s=0 (%s): must be refused", k->name,
			       map, KNOB, knob < 0 ? "absent" : "set");
	}
	mr = rdma_reg(r, b->addr, k->size, RDMA_ACCESS_RW, &err);
	b->reg_err = mr ? 0 : err;
	if (knob >= 0)
		knob_set(knob);

	switch (k->expect_rw) {
	case EXPECT_REG_OK:
		ktap_test_result(mr, tname("reg_rw", b));
		snprintf(why, whylen, "registration failed: %s",
			 strerror(err));
		break;
	case EXPECT_REG_EFAULT:
		if (mr)
			ktap_print_msg("registration succeeded but EFAULT was expected");
		ktap_test_result(!mr && err == EFAULT, tname("reg_rw", b));
		if (err == EFAULT)
			snprintf(why, whylen, "registration refused (expected)");
		else
			snprintf(why, whylen, "registration failed: %s",
				 strerror(err));
		break;
	}
	return mr;
}

/* msync(MS_SYNC) + fsync: one integrity writeback of the region. */
static void writeback(struct buf *b)
{
	if (msync(b->addr, b->k->size, MS_SYNC))
		ktap_print_msg("msync: %s", strerror(errno));
	if (fsync(b->fd))
		ktap_print_msg("fsync: %s", strerror(errno));
}

static bool test_write(struct rdma_ctx *r, struct scratch *s, struct buf *b,
		       struct ibv_mr *mr)
{
	bool ok;

	/*
	 * Clean the pinned pages first, so that rxe's write lands in pages
	 * the file system believes clean: without the series' keep-dirty
	 * rule the next fsync skips them and disk_<kind> sees stale data.
	 */
	if (b->fd >= 0)
		writeback(b);
	pattern_fill(s->addr, b->k->size, b->rdma_seed);
	ok = !rdma_rw(r, IBV_WR_RDMA_WRITE, s->mr, s->addr, b->k->size, mr,
		      b->addr) &&
	     pattern_check(b->addr, b->k->size, b->rdma_seed,
			   "region after RDMA WRITE (CPU read)");
	ktap_test_result(ok, tname("write", b));
	return ok;
}

static void test_read(struct rdma_ctx *r, struct scratch *s, struct buf *b,
		      struct ibv_mr *mr)
{
	ktap_test_result(read_back(r, s, b, mr, b->rdma_seed,
				   "RDMA READ after RDMA WRITE"),
			 tname("read", b));
}

/* What the file must hold: private mappings never write back. */
static unsigned int file_expect_seed(const struct buf *b)
{
	return kind_is_shared(b->k) ? b->rdma_seed : b->file_seed;
}

static const char *test_disk(struct buf *b)
{
	int ret;

	if (!b->blkdev) {
		ktap_test_skip(tname("disk", b), "%s not set",
			       b->k->fs->dev_env);
		return "-";
	}
	writeback(b);
	ret = disk_check(b->fd, b->blkdev, b->k->size, file_expect_seed(b));
	if (ret < 0)
		ktap_test_fail(tname("disk", b));
	else
		ktap_test_result(ret == 0, tname("disk", b));
	return ret == 0 ? "yes" : "NO";
}

static void test_dereg(struct buf *b, struct ibv_mr *mr)
{
	bool ok = true;
	int err;

	err = ibv_dereg_mr(mr);
	if (err) {
		ktap_print_msg("ibv_dereg_mr: %s", strerror(err));
		ok = false;
	}
	/* The mapping itself still shows what rxe wrote. */
	if (!pattern_check(b->addr, b->k->size, b->rdma_seed,
			   "region after dereg (CPU read)"))
		ok = false;
	if (b->fd >= 0) {
		buf_unmap(b);
		file_drop_cache(b->fd);
		if (!file_check(b->fd, b->k->size, file_expect_seed(b),
				"file after dereg (pread)"))
			ok = false;
	}
	ktap_test_result(ok, tname("dereg", b));
}

static void skip_tests(struct buf *b, bool from_reg_rw, const char *why)
{
	static const char * const tests[] = {
		"reg_ro", "reg_rw", "write", "read", "disk", "dereg",
	};
	unsigned int i = from_reg_rw ? 2 : 0;

	for (; i < ARRAY_SIZE(tests); i++) {
		if (i == 0 && !b->k->test_ro)
			continue;
		if (i == 4 && !kind_has_disk(b->k))
			continue;
		ktap_test_skip(tname(tests[i], b), "%s", why);
	}
}

static void run_kind(struct rdma_ctx *r, struct scratch *s, unsigned int idx)
{
	struct buf b = {
		.k = &kinds[idx],
		.file_seed = 2 * idx + 1,
		.rdma_seed = 2 * idx + 2,
	};
	char why[PATH_MAX + 64];
	const char *disk;
	struct ibv_mr *mr;
	bool wrote;

	ktap_print_msg("---- %s: %zu bytes", b.k->name, b.k->size);
	if (buf_setup(&b, why, sizeof(why))) {
		skip_tests(&b, false, why);
		buf_teardown(&b);
		return;
	}
	if (b.k->test_ro)
		test_reg_ro(r, s, &b);
	mr = test_reg_rw(r, &b, why, sizeof(why));
	if (!mr) {
		skip_tests(&b, true, why);
		buf_teardown(&b);
		/* One line per kind for "make demo" (scripts/demo-table.py). */
		ktap_print_msg("DEMO kind=%s reg=%s write=- disk=-", b.k->name,
			       errno_name(b.reg_err));
		return;
	}
	wrote = test_write(r, s, &b, mr);
	test_read(r, s, &b, mr);
	disk = kind_has_disk(b.k) ? test_disk(&b) : "-";
	test_dereg(&b, mr);
	buf_teardown(&b);
	ktap_print_msg("DEMO kind=%s reg=ok write=%s disk=%s", b.k->name,
		       wrote ? "yes" : "NO", disk);
}

int main(int argc, char **argv)
{
	struct rdma_ctx r;
	struct scratch s;
	unsigned int i, plan = 0;
	int err;

	rdma_start(argc, argv, &r, "rdma_mr");
	if (rdma_loop_connect(&r))
		ktap_bail_out("cannot connect the loopback QP pair");

	for (i = 0; i < NKINDS; i++)
		plan += kind_ntests(&kinds[i]);
	ktap_set_plan(plan);

	s.addr = mmap(NULL, SCRATCH_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s.addr == MAP_FAILED)
		ktap_bail_out("scratch buffer: %s", strerror(errno));
	s.mr = rdma_reg(&r, s.addr, SCRATCH_SIZE, RDMA_ACCESS_RW, &err);
	if (!s.mr)
		ktap_bail_out("cannot register the anonymous scratch buffer");

	for (i = 0; i < NKINDS; i++)
		run_kind(&r, &s, i);

	ibv_dereg_mr(s.mr);
	munmap(s.addr, SCRATCH_SIZE);
	rdma_close(&r);
	ktap_finished();
}
