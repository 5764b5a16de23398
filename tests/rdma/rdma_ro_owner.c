// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_ro_owner: a read-only registration of a file changes nothing for
 * the file's owner.
 *
 * ibv_reg_mr() with IBV_ACCESS_REMOTE_READ only takes a FOLL_LONGTERM pin
 * without FOLL_WRITE, which every kernel allows on any file a user can
 * read: the device can read the pages, never write them. So the owner's
 * truncate, hole punch and background writeback must behave as they do
 * without the registration. On ext4 and on xfs, with a 64-page MAP_SHARED
 * region registered read-only:
 *
 *   writeback_<fs>  page 0 rewritten with write() reaches the disk through
 *                   background writeback (dirty_expire 1 s, writeback
 *                   0.5 s) within 20 s, read through the block device at
 *                   the block FIEMAP names (FIEMAP without FLAG_SYNC:
 *                   nothing here may write the page but the flushers)
 *   punch_<fs>      with vm.dma_pin_truncate_wait_ms=5000 and
 *                   vm.dma_pin_truncate_policy=1 (fail after the wait),
 *                   where the kernel has them, punching the region out
 *                   succeeds at once: no wait, no EBUSY, and
 *                   pinned_truncate_waits in /proc/vmstat does not move
 *   truncate_<fs>   the same for ftruncate() to 0
 *
 * Environment: PINSAFE_MNT_{EXT4,XFS}, PINSAFE_DEV_{EXT4,XFS}.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"
#include "ktap.h"

#define NPAGES		64
#define WB_DEADLINE_S	20
#define CUT_LIMIT_S	1.0

static const char * const fs_names[] = { "ext4", "xfs" };
static const long fs_magic[] = { EXT4_SUPER_MAGIC, XFS_SUPER_MAGIC };
static const char * const tests[] = { "writeback", "punch", "truncate" };

#define NTESTS		(ARRAY_SIZE(fs_names) * ARRAY_SIZE(tests))

/* Knobs this program changes, restored at exit. */
static struct knob knobs[] = {
	{ .path = "/proc/sys/vm/dirty_expire_centisecs", .val = "100" },
	{ .path = "/proc/sys/vm/dirty_writeback_centisecs", .val = "50" },
	{ .path = "/proc/sys/vm/dma_pin_truncate_wait_ms", .val = "5000" },
	{ .path = "/proc/sys/vm/dma_pin_truncate_policy", .val = "1" },
};
static long page_size;

/*
 * Read file page 0 from the block device, at the block FIEMAP gives
 * without syncing the file first. 0, or -errno.
 */
static int disk_page0(int fd, const char *blkdev, void *buf)
{
	struct {
		struct fiemap fm;
		struct fiemap_extent fe;
	} m = { 0 };
	int devfd, ret = 0;

	m.fm.fm_length = page_size;
	m.fm.fm_extent_count = 1;
	if (ioctl(fd, FS_IOC_FIEMAP, &m.fm))
		return -errno;
	if (m.fm.fm_mapped_extents != 1 ||
	    (m.fe.fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC)))
		return -ENODATA;
	devfd = open(blkdev, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (devfd < 0)
		return -errno;
	if (pread(devfd, buf, page_size, m.fe.fe_physical) != page_size)
		ret = -EIO;
	close(devfd);
	return ret;
}

/* Does @buf, one page, hold the pattern of @seed? Quietly. */
static bool page_is(const uint8_t *buf, unsigned int seed)
{
	long i;

	for (i = 0; i < page_size; i++)
		if (buf[i] != pattern_byte(i, seed))
			return false;
	return true;
}

static void test_writeback(int fd, const char *blkdev, const char *name)
{
	unsigned int seed = 2;
	double end = now_s() + WB_DEADLINE_S;
	void *page = NULL;
	bool ok = false;
	int ret = 0;

	if (!blkdev) {
		ktap_test_skip(name, "no block device to check");
		return;
	}
	if (posix_memalign(&page, 4096, page_size)) {
		ktap_test_fail(name);
		return;
	}
	pattern_fill(page, page_size, seed);
	if (pwrite(fd, page, page_size, 0) != page_size) {
		ktap_print_msg("%s: pwrite: %s", name, strerror(errno));
		free(page);
		ktap_test_fail(name);
		return;
	}
	while (!ok && now_s() < end) {
		usleep(250000);
		ret = disk_page0(fd, blkdev, page);
		ok = !ret && page_is(page, seed);
	}
	if (!ok)
		ktap_print_msg("%s: page 0 not on disk after %d s of background writeback (%s)",
			       name, WB_DEADLINE_S,
			       ret ? strerror(-ret) : "old data");
	free(page);
	ktap_test_result(ok, name);
}

/* A cut of the registered range must succeed at once, without a wait. */
static void test_cut(int fd, bool punch, bool knobs, const char *name)
{
	long waits = vmstat_read("pinned_truncate_waits");
	double t = now_s();
	int ret;

	if (punch)
		ret = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				0, NPAGES * page_size);
	else
		ret = ftruncate(fd, 0);
	t = now_s() - t;
	if (ret)
		ktap_print_msg("%s: %s", name, strerror(errno));
	if (t > CUT_LIMIT_S)
		ktap_print_msg("%s: took %.2f s%s", name, t,
			       knobs ? " (vm.dma_pin_truncate_wait_ms=5000)" : "");
	if (waits >= 0 && vmstat_read("pinned_truncate_waits") != waits) {
		ktap_print_msg("%s: waited for a read-only pin", name);
		ret = -1;
	}
	ktap_test_result(!ret && t <= CUT_LIMIT_S, name);
}

static void run_fs(struct rdma_ctx *r, unsigned int i, bool knobs)
{
	char path[PATH_MAX], names[ARRAY_SIZE(tests)][64];
	const char *mnt, *blkdev;
	char why[PATH_MAX + 64] = "";
	size_t size = NPAGES * page_size;
	struct ibv_mr *mr = NULL;
	unsigned int t;
	void *addr = MAP_FAILED;
	int fd = -1, err;

	for (t = 0; t < ARRAY_SIZE(tests); t++)
		snprintf(names[t], sizeof(names[t]), "%s_%s", tests[t],
			 fs_names[i]);
	mnt = fs_target(fs_names[i], fs_magic[i], &blkdev, why, sizeof(why));
	if (mnt) {
		snprintf(path, sizeof(path), "%s/rdma_ro_owner", mnt);
		fd = file_create_filled(path, size, 1);
		if (fd < 0 || fsync(fd))
			snprintf(why, sizeof(why), "create %s: %s", path,
				 strerror(fd < 0 ? -fd : errno));
	}
	if (!why[0]) {
		addr = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
		if (addr == MAP_FAILED)
			snprintf(why, sizeof(why), "mmap: %s", strerror(errno));
	}
	if (!why[0]) {
		mr = rdma_reg(r, addr, size, IBV_ACCESS_REMOTE_READ, &err);
		if (!mr)
			snprintf(why, sizeof(why),
				 "read-only ibv_reg_mr(): %s", strerror(err));
	}
	if (why[0]) {
		/* A refused read-only registration is a failure, not a skip. */
		for (t = 0; t < ARRAY_SIZE(tests); t++) {
			if (!mr && addr != MAP_FAILED) {
				ktap_print_msg("%s: %s", names[t], why);
				ktap_test_fail(names[t]);
			} else {
				ktap_test_skip(names[t], "%s", why);
			}
		}
	} else {
		test_writeback(fd, blkdev, names[0]);
		test_cut(fd, true, knobs, names[1]);
		test_cut(fd, false, knobs, names[2]);
	}
	if (mr && ibv_dereg_mr(mr))
		ktap_print_msg("ibv_dereg_mr: %s", strerror(errno));
	if (addr != MAP_FAILED)
		munmap(addr, size);
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
}

int main(int argc, char **argv)
{
	struct rdma_ctx r;
	unsigned int i, set;

	page_size = sysconf(_SC_PAGESIZE);
	rdma_start(argc, argv, &r, "rdma_ro_owner");
	ktap_set_plan(NTESTS);
	set = knobs_set(knobs, ARRAY_SIZE(knobs));
	if (set < 2)
		ktap_print_msg("cannot set %s", knobs[set].path);
	else if (set < ARRAY_SIZE(knobs))
		ktap_print_msg("no %s: this kernel's truncate does not wait",
			       knobs[set].path);
	for (i = 0; i < ARRAY_SIZE(fs_names); i++)
		run_fs(&r, i, set == ARRAY_SIZE(knobs));
	knobs_restore(knobs, ARRAY_SIZE(knobs));
	rdma_close(&r);
	ktap_finished();
}
