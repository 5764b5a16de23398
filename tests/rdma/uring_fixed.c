// SPDX-License-Identifier: GPL-2.0
/*
 * uring_fixed: io_uring fixed buffers on ext4 and xfs file mappings.
 *
 * io_uring_register_buffers() pins its buffers with FOLL_WRITE |
 * FOLL_LONGTERM, and an O_DIRECT IORING_OP_READ_FIXED then lets the block
 * device write into them, as an RDMA NIC writes into an MR. With a
 * MAP_SHARED file range as the buffer, that is the page cache of the file:
 * the kernel this series is against refuses the registration (EFAULT); with
 * the series it works, and the device's writes reach the file. For ext4
 * and xfs, a file of 2 x NPAGES pages, its first NPAGES mapped and
 * registered:
 *
 *   register_<fs>    the registration succeeds
 *   read_fixed_<fs>  passes of NCHUNKS O_DIRECT READ_FIXED of a source file
 *                    (another pattern) into the registered range, until
 *                    MIN_CHURN rounds of a thread that
 *                    runs fsync(), sync_file_range(), sync() and truncates
 *                    and re-extends the file's unregistered tail overlapped
 *                    them; every
 *                    read completes in full and the mapping then holds the
 *                    source's bytes
 *   disk_<fs>        after fsync(), the block device (FIEMAP + O_DIRECT)
 *                    holds the source's bytes for the registered range
 *   truncate_<fs>    with vm.dma_pin_truncate_wait_ms=200 and
 *                    vm.dma_pin_truncate_policy=1, ftruncate() into the
 *                    registered range fails with EBUSY and leaves the size
 *   unregister_<fs>  io_uring_unregister_buffers() drops every pin
 *                    (nr_foll_pin_acquired - nr_foll_pin_released as before
 *                    the registration) and ftruncate(0) then succeeds at
 *                    once; the file's data was not lost on the way: it is
 *                    still on disk until then
 *
 *   refused_by_default_<fs>  before all that, with
 *                    vm.longterm_pin_file_mappings=1 (the default where
 *                    file pins can be revoked), the registration fails
 *                    with EFAULT: io_uring cannot give a pin back, so only
 *                    vm.longterm_pin_file_mappings=2, which the tests
 *                    above set, lets it pin files (on kernels where the
 *                    knob is at most 1, 1 lets every caller pin: skipped)
 *
 * Environment: PINSAFE_MNT_{EXT4,XFS}, PINSAFE_DEV_{EXT4,XFS}.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <liburing.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"
#include "ktap.h"

#define NPAGES		64
#define NCHUNKS		16
#define CUT_LIMIT_S	1.0
#define IO_TIMEOUT_S	60
#define MIN_CHURN	20	/* churn rounds the reads must overlap */
#define MAX_PASSES	500

static const char * const fs_names[] = { "ext4", "xfs" };
static const long fs_magic[] = { EXT4_SUPER_MAGIC, XFS_SUPER_MAGIC };
static const char * const tests[] = {
	"refused_by_default", "register", "read_fixed", "disk", "truncate",
	"unregister",
};

enum {
	T_DEFAULT, T_REGISTER, T_READ, T_DISK, T_TRUNCATE, T_UNREGISTER, T_NR
};

#define LONGTERM_KNOB	"/proc/sys/vm/longterm_pin_file_mappings"

#define NTESTS		(ARRAY_SIZE(fs_names) * T_NR)

static struct knob knobs[] = {
	{ .path = "/proc/sys/vm/dma_pin_truncate_wait_ms", .val = "200" },
	{ .path = "/proc/sys/vm/dma_pin_truncate_policy", .val = "1" },
};
static long page_size;

struct churn {
	int fd;
	size_t keep;		/* the registered range: never cut */
	atomic_bool stop;
	atomic_ulong rounds;
	int err;		/* first errno of a failed operation */
	const char *what;
};

/* Writeback, sync and a truncate of the unregistered tail, in a loop. */
static void *churn_thread(void *arg)
{
	struct churn *c = arg;
	size_t tail = c->keep;

	while (!atomic_load(&c->stop)) {
		const char *what = NULL;

		if (fsync(c->fd))
			what = "fsync";
		else if (sync_file_range(c->fd, 0, 0, SYNC_FILE_RANGE_WRITE))
			what = "sync_file_range";
		else if (ftruncate(c->fd, c->keep + page_size))
			what = "ftruncate (tail)";
		else if (ftruncate(c->fd, c->keep + tail))
			what = "ftruncate (extend)";
		if (what && !c->err) {
			c->err = errno;
			c->what = what;
		}
		if (!(c->rounds++ % 4))
			sync();
	}
	return NULL;
}

/* NCHUNKS READ_FIXED of @src into buffer 0 (@buf), all in flight at once. */
static bool read_fixed(struct io_uring *ring, int src, void *buf, size_t len,
		       const char *name)
{
	size_t chunk = len / NCHUNKS;
	struct __kernel_timespec ts = { .tv_sec = IO_TIMEOUT_S };
	struct io_uring_cqe *cqe;
	bool ok = true;
	unsigned int i;
	int ret;

	for (i = 0; i < NCHUNKS; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		io_uring_prep_read_fixed(sqe, src, (char *)buf + i * chunk,
					 chunk, i * chunk, 0);
		sqe->user_data = i;
	}
	ret = io_uring_submit(ring);
	if (ret != NCHUNKS) {
		ktap_print_msg("%s: io_uring_submit: %d", name, ret);
		return false;
	}
	for (i = 0; i < NCHUNKS; i++) {
		ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
		if (ret) {
			ktap_print_msg("%s: %u of %u reads not completed after %d s: %s",
				       name, NCHUNKS - i, NCHUNKS, IO_TIMEOUT_S,
				       strerror(-ret));
			return false;
		}
		if (cqe->res != (int)chunk) {
			ktap_print_msg("%s: read %llu: %s", name,
				       (unsigned long long)cqe->user_data,
				       cqe->res < 0 ? strerror(-cqe->res) :
				       "short read");
			ok = false;
		}
		io_uring_cqe_seen(ring, cqe);
	}
	return ok;
}

static bool test_read(struct io_uring *ring, int fd, int src, void *buf,
		      size_t len, const char *name)
{
	struct churn c = { .fd = fd, .keep = len };
	unsigned int passes = 0;
	pthread_t thr;
	bool ok;

	if (pthread_create(&thr, NULL, churn_thread, &c)) {
		ktap_print_msg("%s: pthread_create failed", name);
		return false;
	}
	/* Read again and again until the churn has had MIN_CHURN rounds. */
	do {
		ok = read_fixed(ring, src, buf, len, name);
		passes++;
	} while (ok && passes < MAX_PASSES &&
		 atomic_load(&c.rounds) < MIN_CHURN);
	atomic_store(&c.stop, true);
	pthread_join(thr, NULL);
	ktap_print_msg("%s: %u passes of %u reads, %lu rounds of fsync/sync_file_range/truncate beside them",
		       name, passes, NCHUNKS, (unsigned long)c.rounds);
	if (c.err) {
		ktap_print_msg("%s: %s: %s", name, c.what, strerror(c.err));
		ok = false;
	}
	return pattern_check(buf, len, 2, name) && ok;
}

/* ftruncate() into the registered range: EBUSY after the bounded wait. */
static void test_truncate(int fd, size_t len, bool knobs_ok, const char *name)
{
	off_t before = lseek(fd, 0, SEEK_END);
	double t = now_s();
	int ret, err;

	if (!knobs_ok) {
		ktap_test_skip(name, "no vm.dma_pin_truncate_policy");
		return;
	}
	ret = ftruncate(fd, len / 2);
	err = errno;
	t = now_s() - t;
	ktap_print_msg("%s: ftruncate into the registered range: %s after %.2f s",
		       name, ret ? strerror(err) : "done", t);
	ktap_test_result(ret && err == EBUSY &&
			 lseek(fd, 0, SEEK_END) == before, name);
}

static void test_unregister(struct io_uring *ring, int fd, long pins_before,
			    const char *blkdev, size_t len, const char *name)
{
	long pins;
	double t;
	bool ok = true;
	int ret;

	ret = io_uring_unregister_buffers(ring);
	if (ret) {
		ktap_print_msg("%s: io_uring_unregister_buffers: %s", name,
			       strerror(-ret));
		ok = false;
	}
	pins = pins_held();
	if (pins != pins_before) {
		ktap_print_msg("%s: %ld pins held, %ld before registering",
			       name, pins, pins_before);
		ok = false;
	}
	/* Unpinned, the data written through the buffer is still the file's. */
	if (blkdev && disk_check(fd, blkdev, len, 2) != 0)
		ok = false;
	t = now_s();
	if (ftruncate(fd, 0)) {
		ktap_print_msg("%s: ftruncate(0): %s", name, strerror(errno));
		ok = false;
	}
	t = now_s() - t;
	if (t > CUT_LIMIT_S) {
		ktap_print_msg("%s: ftruncate(0) took %.2f s", name, t);
		ok = false;
	}
	ktap_test_result(ok, name);
}

static void skip_rest(char names[][64], unsigned int from, const char *why)
{
	unsigned int t;

	for (t = from; t < T_NR; t++)
		ktap_test_skip(names[t], "%s", why);
}

/* Write @val to the knob; 0, or -errno (-ENOENT: no such knob). */
static int longterm_knob(const char *val)
{
	int fd = open(LONGTERM_KNOB, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		ret = -errno;
	close(fd);
	return ret;
}

/* The default mode refuses io_uring's pins of the file; then allow them. */
static void test_default(struct io_uring *ring, struct iovec *iov,
			 const char *name)
{
	int ret;

	if (longterm_knob("2")) {
		ktap_test_skip(name, "no vm.longterm_pin_file_mappings=2 here");
		return;
	}
	longterm_knob("1");
	ret = io_uring_register_buffers(ring, iov, 1);
	if (!ret)
		io_uring_unregister_buffers(ring);
	longterm_knob("2");
	ktap_print_msg("%s: with vm.longterm_pin_file_mappings=1: %s", name,
		       ret ? strerror(-ret) : "registered");
	ktap_test_result(ret == -EFAULT, name);
}

static void run_fs(unsigned int i, bool knobs_ok)
{
	char path[PATH_MAX], spath[PATH_MAX], names[T_NR][64];
	char why[PATH_MAX + 64] = "";
	size_t len = NPAGES * page_size;
	struct io_uring ring;
	const char *mnt, *blkdev;
	struct iovec iov;
	void *addr = MAP_FAILED;
	int fd = -1, src = -1, ret;
	bool ring_ok = false;
	long pins_before;
	unsigned int t;

	for (t = 0; t < T_NR; t++)
		snprintf(names[t], sizeof(names[t]), "%s_%s", tests[t],
			 fs_names[i]);
	mnt = fs_target(fs_names[i], fs_magic[i], &blkdev, why, sizeof(why));
	if (mnt) {
		snprintf(path, sizeof(path), "%s/uring_fixed", mnt);
		snprintf(spath, sizeof(spath), "%s/uring_fixed.src", mnt);
		fd = file_create_filled(path, 2 * len, 1);
		src = fd < 0 ? fd : file_create_filled(spath, len, 2);
		if (fd < 0 || src < 0)
			snprintf(why, sizeof(why), "create files: %s",
				 strerror(-(fd < 0 ? fd : src)));
	}
	if (!why[0]) {
		/* The reads must come from the disk: O_DIRECT. */
		close(src);
		src = open(spath, O_RDONLY | O_DIRECT | O_CLOEXEC);
		if (src < 0)
			snprintf(why, sizeof(why), "open O_DIRECT: %s",
				 strerror(errno));
	}
	if (!why[0]) {
		addr = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (addr == MAP_FAILED)
			snprintf(why, sizeof(why), "mmap: %s", strerror(errno));
	}
	if (!why[0]) {
		ret = io_uring_queue_init(NCHUNKS, &ring, 0);
		if (ret)
			snprintf(why, sizeof(why), "io_uring_queue_init: %s",
				 strerror(-ret));
		ring_ok = !ret;
	}
	if (why[0]) {
		skip_rest(names, 0, why);
		goto out;
	}

	pins_before = pins_held();
	iov.iov_base = addr;
	iov.iov_len = len;
	test_default(&ring, &iov, names[T_DEFAULT]);
	ret = io_uring_register_buffers(&ring, &iov, 1);
	if (ret) {
		ktap_print_msg("%s: io_uring_register_buffers of a MAP_SHARED %s file: %s%s",
			       names[T_REGISTER], fs_names[i], strerror(-ret),
			       ret == -EFAULT ?
			       " (this kernel refuses longterm write pins of the file)" :
			       "");
		ktap_test_fail(names[T_REGISTER]);
		skip_rest(names, T_READ, "no registered buffer");
		goto out;
	}
	ktap_test_pass(names[T_REGISTER]);
	ktap_test_result(test_read(&ring, fd, src, addr, len, names[T_READ]),
			 names[T_READ]);
	if (!blkdev) {
		ktap_test_skip(names[T_DISK], "no block device to check");
	} else if (fsync(fd)) {
		ktap_print_msg("%s: fsync: %s", names[T_DISK], strerror(errno));
		ktap_test_fail(names[T_DISK]);
	} else {
		ktap_test_result(disk_check(fd, blkdev, len, 2) == 0,
				 names[T_DISK]);
	}
	test_truncate(fd, len, knobs_ok, names[T_TRUNCATE]);
	test_unregister(&ring, fd, pins_before, blkdev, len,
			names[T_UNREGISTER]);
out:
	if (ring_ok)
		io_uring_queue_exit(&ring);
	if (addr != MAP_FAILED)
		munmap(addr, len);
	if (src >= 0)
		close(src);
	if (fd >= 0)
		close(fd);
	if (mnt) {
		unlink(path);
		unlink(spath);
	}
}

int main(void)
{
	unsigned int i, set;

	page_size = sysconf(_SC_PAGESIZE);
	ktap_print_header();
	ktap_set_plan(NTESTS);
	set = knobs_set(knobs, ARRAY_SIZE(knobs));
	if (set < ARRAY_SIZE(knobs))
		ktap_print_msg("no %s: this kernel's truncate does not wait",
			       knobs[set].path);
	for (i = 0; i < ARRAY_SIZE(fs_names); i++)
		run_fs(i, set == ARRAY_SIZE(knobs));
	knobs_restore(knobs, ARRAY_SIZE(knobs));
	longterm_knob("1");
	ktap_finished();
}
