// SPDX-License-Identifier: GPL-2.0
/*
 * soak: device and RDMA writers into pinned page cache of ext4, xfs and
 * ext4 on dm-integrity, for a given time, against everything else a system
 * does to those files meanwhile; then every file is checked through its
 * block device.
 *
 * Workers (processes), until the deadline:
 *   dev_<fs>     a file of NPAGES pages mapped MAP_SHARED and pinned through
 *                the gup_test device emulation (FOLL_WRITE | FOLL_LONGTERM,
 *                pin_user_pages() or _fast() at random); the "device" writes
 *                generations into random ranges, or a kthread writes back to
 *                back; the pin is dropped (unpin dirty) and retaken at
 *                random; while pinned it syncs and tries hole punch,
 *                truncate and (xfs) reflink of its file, which must fail
 *                with EBUSY under vm.dma_pin_truncate_policy=1; while
 *                unpinned it writes, punches, zeroes, collapses and inserts.
 *                The ext4 one runs in a memory cgroup near its limit.
 *   rdma_<fs>    the same file shape registered with ibv_reg_mr() over
 *                rxe0 loopback, written by RDMA WRITE, deregistered and
 *                registered again at random.
 *   churn_<fs>   other files written, truncated, punched, collapsed,
 *                inserted, zeroed, reflinked (xfs) and removed.
 *   sync         sync(), syncfs() and fsync() storms; drop_caches and
 *                compaction every few seconds.
 *   freeze       FIFREEZE/FITHAW of xfs every few seconds.
 *   pressure     page cache and anonymous memory in the memory cgroup,
 *                up to its limit, again and again (an operation is a MiB).
 * The parent prints a progress line every minute (stdout, and the console
 * when it can). At the end each dev and rdma file, after fsync(), must
 * hold on its block device exactly what its model says was last written
 * (a page holds one 64-bit generation everywhere, or zeroes), pins must be
 * balanced (nr_foll_pin_acquired - nr_foll_pin_released as at the start)
 * and nr_pinned_dirty, where the kernel has it, back to 0 after sync().
 *
 * usage: soak -t SECONDS [-s SEED]      (KTAP on stdout)
 * Environment: PINSAFE_MNT_{EXT4,XFS,INTEG}, PINSAFE_DEV_{EXT4,XFS,INTEG}.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../rdma/common.h"
#include "../rdma/ktap.h"
#include "gup_test.h"

#define NPAGES		512
#define CHURN_PAGES	2048
#define STOP_GRACE_S	300	/* workers must be done this long after the deadline */
#define STALL_S		120	/* a worker without progress this long is stuck */
#define GUP_TEST_FILE	"/sys/kernel/debug/gup_test"
#define CGROUP_ROOT	"/sys/fs/cgroup"
#define CGROUP		CGROUP_ROOT "/pinsafe-soak"
#define MEMCG_MAX	(96UL << 20)

enum { FS_EXT4, FS_XFS, FS_INTEG, FS_NR };
static const char * const fs_names[FS_NR] = { "ext4", "xfs", "integ" };
static const long fs_magic[FS_NR] = {
	EXT4_SUPER_MAGIC, XFS_SUPER_MAGIC, EXT4_SUPER_MAGIC,
};

/* Per-worker counters, in a shared mapping the parent reads. */
struct wstats {
	atomic_long ops;	/* operations of any kind */
	atomic_long pages;	/* pages written by the device / RDMA */
	atomic_long pins;	/* pins (registrations) taken */
	atomic_long refused;	/* cuts refused (EBUSY) while pinned */
	atomic_long errors;	/* unexpected results */
	atomic_long mismatches;	/* pages wrong on disk at the end */
	atomic_int done;	/* 1: finished its final check */
	atomic_int skipped;	/* could not run at all */
	char why[128];		/* why, or the first error */
};

enum {
	W_DEV = 0,			/* + fs */
	W_RDMA = W_DEV + FS_NR,		/* + fs */
	W_CHURN = W_RDMA + FS_NR,	/* + fs */
	W_SYNC = W_CHURN + FS_NR,
	W_FREEZE,
	W_PRESSURE,
	W_NR,
};

struct shared {
	atomic_bool stop;
	struct wstats w[W_NR];
};

static struct shared *sh;
static long page_size;
static const char *mnt[FS_NR], *blkdev[FS_NR];
static bool knobs_ok;

static struct knob knobs[] = {
	{ .path = "/proc/sys/vm/dma_pin_truncate_wait_ms", .val = "50" },
	{ .path = "/proc/sys/vm/dma_pin_truncate_policy", .val = "1" },
};

/*
 * The pinner takes long-term write pins that cannot be revoked, as io_uring
 * does: where vm.longterm_pin_file_mappings=1 allows only revocable ones,
 * 2 allows them (best effort: older kernels have no 2, and 1 allows all).
 */
static struct knob longterm_knob = {
	.path = "/proc/sys/vm/longterm_pin_file_mappings", .val = "2",
};

static const char *wname(int w, char *buf, size_t len)
{
	static const char * const other[] = { "sync", "freeze", "pressure" };

	if (w < W_RDMA)
		snprintf(buf, len, "dev_%s", fs_names[w - W_DEV]);
	else if (w < W_CHURN)
		snprintf(buf, len, "rdma_%s", fs_names[w - W_RDMA]);
	else if (w < W_SYNC)
		snprintf(buf, len, "churn_%s", fs_names[w - W_CHURN]);
	else
		snprintf(buf, len, "%s", other[w - W_SYNC]);
	return buf;
}

static void __printf(2, 3) werr(struct wstats *s, const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&s->errors, 1) == 0) {
		va_start(ap, fmt);
		vsnprintf(s->why, sizeof(s->why), fmt, ap);
		va_end(ap);
	}
}

static bool stopping(void)
{
	return atomic_load(&sh->stop);
}

static unsigned long rnd(unsigned long n)
{
	return n ? (unsigned long)random() % n : 0;
}

/* ---- the model: one generation per page, 0 meaning zeroes ------------ */

struct model {
	uint64_t gen[NPAGES];
};

static void fill_gen(void *page, uint64_t gen)
{
	uint64_t *p = page;
	long i;

	for (i = 0; i < page_size / 8; i++)
		p[i] = gen;
}

/* What the block device holds for fd against the model; mismatched pages. */
static long model_check(int fd, const char *dev, const struct model *m,
			const char *name)
{
	size_t len = NPAGES * page_size;
	uint64_t *data = malloc(len);
	long bad = 0, i, j;
	int ret;

	if (!data)
		return NPAGES;
	ret = disk_read(fd, dev, data, len, true, false);
	if (ret) {
		ktap_print_msg("%s: reading the file from %s: %s", name, dev,
			       ret < 0 ? strerror(-ret) : "bad extents");
		free(data);
		return NPAGES;
	}
	for (i = 0; i < NPAGES; i++) {
		uint64_t *p = data + i * (page_size / 8);

		for (j = 0; j < page_size / 8; j++)
			if (p[j] != m->gen[i])
				break;
		if (j < page_size / 8 && bad++ < 5)
			ktap_print_msg("%s: page %ld on disk: word %ld is %llu, expected generation %llu",
				       name, i, j, (unsigned long long)p[j],
				       (unsigned long long)m->gen[i]);
	}
	free(data);
	return bad;
}

static int file_make(const char *path, size_t pages)
{
	void *zero = calloc(1, page_size);
	size_t i;
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || !zero) {
		free(zero);
		return fd < 0 ? -errno : -ENOMEM;
	}
	for (i = 0; i < pages; i++)
		if (pwrite(fd, zero, page_size, i * page_size) != page_size)
			break;
	free(zero);
	if (i < pages || fsync(fd)) {
		close(fd);
		return -EIO;
	}
	return fd;
}

/* Punch, truncate or reflink a pinned file: must be refused (EBUSY). */
static void try_cut_pinned(struct wstats *s, int fd, int fsi, struct model *m)
{
	unsigned long first = rnd(NPAGES - 8), n = 1 + rnd(8), i;
	int ret, what = rnd(fsi == FS_XFS ? 3 : 2);
	const char *op = "punch";

	if (what == 0) {
		ret = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				first * page_size, n * page_size);
	} else if (what == 1) {
		op = "truncate";
		ret = ftruncate(fd, first * page_size);
		if (!ret)	/* not refused: back to full size */
			ret = ftruncate(fd, NPAGES * page_size) ? -1 : 0;
		n = NPAGES - first;
	} else {
		char path[PATH_MAX];
		int dst;

		op = "reflink";
		snprintf(path, sizeof(path), "%s/soak.clone", mnt[fsi]);
		dst = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		ret = dst < 0 ? -1 : ioctl(dst, FICLONE, fd);
		if (dst >= 0)
			close(dst);
		unlink(path);
		n = 0;	/* the source is not changed either way */
	}
	atomic_fetch_add(&s->ops, 1);
	if (ret && errno == EBUSY) {
		atomic_fetch_add(&s->refused, 1);
		return;
	}
	if (ret) {
		werr(s, "%s of a pinned file: %s", op, strerror(errno));
		return;
	}
	if (knobs_ok && n)
		werr(s, "%s of a pinned range succeeded (policy 1)", op);
	/* The kernel did it: the model follows what was claimed. */
	for (i = first; i < first + n && i < NPAGES; i++)
		m->gen[i] = 0;
}

/* Unpinned: an ordinary writer and file-range operations. */
static void unpinned_ops(struct wstats *s, int fd, struct model *m,
			 uint64_t *gen, void *page)
{
	unsigned long first = rnd(NPAGES - 16), n = 1 + rnd(16), i;
	loff_t off = first * page_size, len = n * page_size;
	int what = rnd(6), ret = 0;

	atomic_fetch_add(&s->ops, 1);
	switch (what) {
	case 0:
	case 1:		/* write */
		for (i = first; i < first + n; i++) {
			fill_gen(page, ++*gen);
			if (pwrite(fd, page, page_size, i * page_size) != page_size) {
				werr(s, "pwrite: %s", strerror(errno));
				return;
			}
			m->gen[i] = *gen;
		}
		return;
	case 2:		/* punch */
		ret = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				off, len);
		break;
	case 3:		/* zero range */
		ret = fallocate(fd, FALLOC_FL_ZERO_RANGE, off, len);
		break;
	case 4:		/* collapse, then back to size */
		ret = fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, off, len);
		if (!ret)
			ret = ftruncate(fd, NPAGES * page_size);
		if (!ret) {
			memmove(&m->gen[first], &m->gen[first + n],
				(NPAGES - first - n) * sizeof(m->gen[0]));
			for (i = NPAGES - n; i < NPAGES; i++)
				m->gen[i] = 0;
		}
		goto check;
	case 5:		/* insert a hole, then back to size */
		ret = fallocate(fd, FALLOC_FL_INSERT_RANGE, off, len);
		if (!ret)
			ret = ftruncate(fd, NPAGES * page_size);
		if (!ret) {
			memmove(&m->gen[first + n], &m->gen[first],
				(NPAGES - first - n) * sizeof(m->gen[0]));
			for (i = first; i < first + n; i++)
				m->gen[i] = 0;
		}
		goto check;
	}
	if (!ret)
		for (i = first; i < first + n; i++)
			m->gen[i] = 0;
check:
	if (ret)
		werr(s, "file range operation %d: %s", what, strerror(errno));
}

/*
 * The device's kthread writes [first, first + n) back to back, one
 * generation (its own counter, from 1 at each pin) at a time, for a while;
 * once stopped, the whole range holds its last generation.
 */
static bool writer_burst(struct wstats *s, int gfd, unsigned long first,
			 unsigned long n, struct model *m)
{
	struct pin_device_writer w = {
		.offset = first * page_size,
		.size = n * page_size,
	};
	struct pin_device_status st0, st;
	unsigned long i;

	if (ioctl(gfd, PIN_DEVICE_TEST_STATUS, &st0) ||
	    ioctl(gfd, PIN_DEVICE_TEST_WRITER_START, &w)) {
		werr(s, "writer start: %s", strerror(errno));
		return false;
	}
	usleep(100000 + rnd(400000));
	if (ioctl(gfd, PIN_DEVICE_TEST_WRITER_STOP, &st)) {
		werr(s, "writer stop: %s", strerror(errno));
		return false;
	}
	if (st.generation > st0.generation)
		for (i = first; i < first + n; i++)
			m->gen[i] = st.generation;
	atomic_fetch_add(&s->pages, st.pages_written - st0.pages_written);
	return true;
}

static void dev_worker(int fsi)
{
	struct wstats *s = &sh->w[W_DEV + fsi];
	size_t len = NPAGES * page_size;
	struct model *m = calloc(1, sizeof(*m));
	void *page = malloc(page_size);
	char path[PATH_MAX], name[32];
	uint64_t gen = 1ULL << 32;	/* above the kthread's generations */
	int fd, gfd;

	wname(W_DEV + fsi, name, sizeof(name));
	snprintf(path, sizeof(path), "%s/soak.dev", mnt[fsi]);
	fd = file_make(path, NPAGES);
	gfd = open(GUP_TEST_FILE, O_RDWR | O_CLOEXEC);
	if (fd < 0 || gfd < 0 || !m || !page) {
		snprintf(s->why, sizeof(s->why), "%s", fd < 0 ? "cannot create its file" :
			 "no " GUP_TEST_FILE " (CONFIG_GUP_TEST)");
		atomic_store(&s->skipped, 1);
		exit(0);
	}
	close(gfd);
	while (!stopping()) {
		struct pin_device_test pin = { .size = len };
		void *addr;
		unsigned int rounds = 5 + rnd(40), r;
		__u32 unpin = PIN_DEVICE_TEST_UNPIN_DIRTY;

		addr = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		gfd = open(GUP_TEST_FILE, O_RDWR | O_CLOEXEC);
		if (addr == MAP_FAILED || gfd < 0) {
			werr(s, "mmap/open: %s", strerror(errno));
			break;
		}
		pin.addr = (uintptr_t)addr;
		pin.flags = PIN_DEVICE_TEST_FLAG_WRITE | PIN_DEVICE_TEST_FLAG_LONGTERM |
			    (rnd(2) ? PIN_DEVICE_TEST_FLAG_FAST : 0);
		if (ioctl(gfd, PIN_DEVICE_TEST_START, &pin)) {
			werr(s, "longterm write pin of the file: %s", strerror(errno));
			close(gfd);
			munmap(addr, len);
			break;
		}
		atomic_fetch_add(&s->pins, 1);
		for (r = 0; r < rounds && !stopping(); r++) {
			unsigned long first = rnd(NPAGES), n = 1 + rnd(NPAGES - first);
			unsigned long i;

			switch (rnd(8)) {
			case 0:		/* the kthread writes back to back for a while */
				writer_burst(s, gfd, first, n, m);
				break;
			case 1:
				fsync(fd);
				break;
			case 2:
				sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
				break;
			case 3:
				if (rnd(4) == 0)
					try_cut_pinned(s, fd, fsi, m);
				break;
			default: {
				struct pin_device_write w = {
					.generation = ++gen,
					.offset = first * page_size,
					.size = n * page_size,
				};

				if (ioctl(gfd, PIN_DEVICE_TEST_WRITE, &w)) {
					werr(s, "device write: %s", strerror(errno));
					break;
				}
				for (i = first; i < first + n; i++)
					m->gen[i] = gen;
				atomic_fetch_add(&s->pages, n);
			}
			}
			atomic_fetch_add(&s->ops, 1);
			usleep(rnd(20000));
		}
		if (ioctl(gfd, PIN_DEVICE_TEST_STOP, &unpin))
			werr(s, "unpin: %s", strerror(errno));
		close(gfd);
		munmap(addr, len);
		for (r = rnd(6); r && !stopping(); r--)
			unpinned_ops(s, fd, m, &gen, page);
	}
	if (fsync(fd))
		werr(s, "final fsync: %s", strerror(errno));
	if (blkdev[fsi])
		atomic_store(&s->mismatches, model_check(fd, blkdev[fsi], m, name));
	else
		snprintf(s->why, sizeof(s->why), "no block device to check");
	close(fd);
	unlink(path);
	atomic_store(&s->done, 1);
	exit(0);
}

static void rdma_worker(int fsi)
{
	struct wstats *s = &sh->w[W_RDMA + fsi];
	struct rdma_opts opts = { .dev = RDMA_DEFAULT_DEV, .gid_index = -1 };
	size_t len = NPAGES * page_size;
	struct model *m = calloc(1, sizeof(*m));
	char path[PATH_MAX], name[32];
	struct rdma_ctx r;
	struct ibv_mr *lmr;
	uint64_t gen = 0;
	void *lbuf;
	int fd, err;

	wname(W_RDMA + fsi, name, sizeof(name));
	snprintf(path, sizeof(path), "%s/soak.rdma", mnt[fsi]);
	if (!m || rdma_open(&r, &opts) || rdma_loop_connect(&r)) {
		snprintf(s->why, sizeof(s->why), "no usable %s", opts.dev);
		atomic_store(&s->skipped, 1);
		exit(0);
	}
	fd = file_make(path, NPAGES);
	lbuf = mmap(NULL, 16 * page_size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	lmr = lbuf == MAP_FAILED ? NULL :
	      rdma_reg(&r, lbuf, 16 * page_size, IBV_ACCESS_LOCAL_WRITE, &err);
	if (fd < 0 || !lmr) {
		snprintf(s->why, sizeof(s->why), "setup failed");
		atomic_store(&s->skipped, 1);
		exit(0);
	}
	while (!stopping()) {
		void *addr = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
				  fd, 0);
		unsigned int rounds = 5 + rnd(30), i;
		struct ibv_mr *mr;

		if (addr == MAP_FAILED) {
			werr(s, "mmap: %s", strerror(errno));
			break;
		}
		errno = 0;
		mr = ibv_reg_mr(r.pd, addr, len, RDMA_ACCESS_RW);
		if (!mr) {
			werr(s, "ibv_reg_mr() of the file: %s", strerror(errno));
			munmap(addr, len);
			break;
		}
		atomic_fetch_add(&s->pins, 1);
		for (i = 0; i < rounds && !stopping(); i++) {
			unsigned long first = rnd(NPAGES - 16), n = 1 + rnd(16), p;

			for (p = 0; p < n; p++)
				fill_gen((char *)lbuf + p * page_size, gen + 1 + p);
			if (rdma_op(&r, IBV_WR_RDMA_WRITE, lmr, lbuf, n * page_size,
				    mr->rkey, (uintptr_t)addr + first * page_size,
				    true)) {
				werr(s, "RDMA WRITE failed");
				break;
			}
			for (p = 0; p < n; p++)
				m->gen[first + p] = gen + 1 + p;
			gen += n;
			atomic_fetch_add(&s->pages, n);
			atomic_fetch_add(&s->ops, 1);
			if (rnd(4) == 0)
				fsync(fd);
		}
		if (ibv_dereg_mr(mr))
			werr(s, "ibv_dereg_mr: %s", strerror(errno));
		munmap(addr, len);
		if (atomic_load(&s->errors))
			break;
	}
	if (fsync(fd))
		werr(s, "final fsync: %s", strerror(errno));
	if (blkdev[fsi])
		atomic_store(&s->mismatches, model_check(fd, blkdev[fsi], m, name));
	close(fd);
	unlink(path);
	rdma_close(&r);
	atomic_store(&s->done, 1);
	exit(0);
}

static void churn_worker(int fsi)
{
	struct wstats *s = &sh->w[W_CHURN + fsi];
	char path[PATH_MAX], path2[PATH_MAX];
	void *buf = malloc(64 * page_size);

	snprintf(path, sizeof(path), "%s/soak.churn", mnt[fsi]);
	snprintf(path2, sizeof(path2), "%s/soak.churn2", mnt[fsi]);
	if (!buf)
		exit(0);
	memset(buf, 0x5a, 64 * page_size);
	while (!stopping()) {
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644), d;
		unsigned int i;

		if (fd < 0) {
			werr(s, "open: %s", strerror(errno));
			break;
		}
		for (i = 0; i < 20 && !stopping(); i++) {
			loff_t off = rnd(CHURN_PAGES) * page_size;
			loff_t len = (1 + rnd(64)) * page_size;
			int ret = 0;

			switch (rnd(8)) {
			case 0:
			case 1:
				ret = pwrite(fd, buf, len, off) < 0 ? -1 : 0;
				break;
			case 2:
				ret = ftruncate(fd, off);
				break;
			case 3:
				ret = fallocate(fd, FALLOC_FL_PUNCH_HOLE |
						FALLOC_FL_KEEP_SIZE, off, len);
				break;
			case 4:
				ret = fallocate(fd, FALLOC_FL_ZERO_RANGE, off, len);
				break;
			case 5:
				ret = fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, off, len);
				break;
			case 6:
				ret = fallocate(fd, FALLOC_FL_INSERT_RANGE, off, len);
				break;
			case 7:
				if (fsi != FS_XFS) {
					ret = fallocate(fd, 0, off, len);
					break;
				}
				d = open(path2, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
				ret = d < 0 ? -1 : ioctl(d, FICLONE, fd);
				if (d >= 0)
					close(d);
				break;
			}
			/* Ranges past EOF are EINVAL; a full disk is ENOSPC. */
			if (ret && errno != EINVAL && errno != ENOSPC)
				werr(s, "file operation: %s", strerror(errno));
			atomic_fetch_add(&s->ops, 1);
		}
		close(fd);
		if (rnd(4) == 0) {
			unlink(path);
			unlink(path2);
		}
	}
	unlink(path);
	unlink(path2);
	atomic_store(&s->done, 1);
	exit(0);
}

static void write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		ssize_t n = write(fd, val, strlen(val));

		(void)n;	/* best effort */
		close(fd);
	}
}

static void sync_worker(void)
{
	struct wstats *s = &sh->w[W_SYNC];
	unsigned long n = 0;
	int fds[FS_NR], i;

	for (i = 0; i < FS_NR; i++)
		fds[i] = mnt[i] ? open(mnt[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	while (!stopping()) {
		switch (rnd(3)) {
		case 0:
			sync();
			break;
		default:
			i = rnd(FS_NR);
			if (fds[i] >= 0 && syncfs(fds[i]))
				werr(s, "syncfs %s: %s", fs_names[i], strerror(errno));
		}
		if (++n % 50 == 0)
			write_file("/proc/sys/vm/drop_caches", "3");
		if (n % 70 == 0)
			write_file("/proc/sys/vm/compact_memory", "1");
		atomic_fetch_add(&s->ops, 1);
		usleep(20000 + rnd(100000));
	}
	atomic_store(&s->done, 1);
	exit(0);
}

static void freeze_worker(void)
{
	struct wstats *s = &sh->w[W_FREEZE];
	int fd = mnt[FS_XFS] ? open(mnt[FS_XFS], O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

	if (fd < 0) {
		snprintf(s->why, sizeof(s->why), "no xfs mount");
		atomic_store(&s->skipped, 1);
		exit(0);
	}
	while (!stopping()) {
		sleep(2 + rnd(3));
		if (stopping())
			break;
		if (ioctl(fd, FIFREEZE, 0)) {
			werr(s, "FIFREEZE: %s", strerror(errno));
			continue;
		}
		usleep(50000 + rnd(300000));
		if (ioctl(fd, FITHAW, 0))
			werr(s, "FITHAW: %s", strerror(errno));
		atomic_fetch_add(&s->ops, 1);
	}
	atomic_store(&s->done, 1);
	exit(0);
}

/* A memory cgroup near its limit, for this process and the ext4 dev worker. */
static bool memcg_setup(void)
{
	char val[32];
	struct stat st;

	if (stat(CGROUP_ROOT "/cgroup.controllers", &st) &&
	    (mkdir(CGROUP_ROOT, 0755) && errno != EEXIST ?
	     true : mount("none", CGROUP_ROOT, "cgroup2", 0, NULL) != 0))
		return false;
	write_file(CGROUP_ROOT "/cgroup.subtree_control", "+memory");
	if (mkdir(CGROUP, 0755) && errno != EEXIST)
		return false;
	snprintf(val, sizeof(val), "%lu", MEMCG_MAX);
	write_file(CGROUP "/memory.max", val);
	return stat(CGROUP "/memory.max", &st) == 0;
}

static void memcg_enter(void)
{
	char pid[16];

	snprintf(pid, sizeof(pid), "%d", getpid());
	write_file(CGROUP "/cgroup.procs", pid);
}

static void pressure_worker(bool memcg)
{
	struct wstats *s = &sh->w[W_PRESSURE];
	size_t anon = MEMCG_MAX / 2, chunk = 1 << 20, i;
	char path[PATH_MAX];
	void *buf = malloc(chunk);

	if (!memcg || !mnt[FS_EXT4] || !buf) {
		snprintf(s->why, sizeof(s->why), "no memory cgroup or ext4");
		atomic_store(&s->skipped, 1);
		exit(0);
	}
	memcg_enter();
	memset(buf, 0x33, chunk);
	snprintf(path, sizeof(path), "%s/soak.pressure", mnt[FS_EXT4]);
	while (!stopping()) {
		char *a = mmap(NULL, anon, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (a != MAP_FAILED) {
			for (i = 0; i < anon; i += page_size)
				a[i] = 1;
		}
		/* Page cache past the limit: reclaim and memcg dirty throttling. */
		/* An operation is a MiB: the stall watch sees progress. */
		for (i = 0; fd >= 0 && i < 2 * MEMCG_MAX && !stopping(); i += chunk) {
			if (pwrite(fd, buf, chunk, i) < 0) {
				if (errno != ENOSPC)
					werr(s, "pwrite: %s", strerror(errno));
				break;
			}
			atomic_fetch_add(&s->ops, 1);
		}
		if (fd >= 0)
			close(fd);
		if (a != MAP_FAILED)
			munmap(a, anon);
		atomic_fetch_add(&s->ops, 1);
	}
	unlink(path);
	atomic_store(&s->done, 1);
	exit(0);
}

static void progress(long t, long total)
{
	char line[1024], name[32];
	int w, n;
	FILE *con;

	n = snprintf(line, sizeof(line), "pinsafe soak: %lds of %lds:", t, total);
	for (w = 0; w < W_NR && n < (int)sizeof(line) - 64; w++) {
		struct wstats *s = &sh->w[w];

		if (atomic_load(&s->skipped))
			continue;
		n += snprintf(line + n, sizeof(line) - n, " %s %ld ops/%ld pg/%ld pins%s",
			      wname(w, name, sizeof(name)), atomic_load(&s->ops),
			      atomic_load(&s->pages), atomic_load(&s->pins),
			      atomic_load(&s->errors) ? "/ERR" : "");
	}
	printf("# %s\n", line);
	con = fopen("/dev/console", "w");
	if (con) {
		fprintf(con, "%s\n", line);
		fclose(con);
	}
}

/*
 * A worker whose operation count has not moved for STALL_S seconds is
 * stuck: say so, and have the kernel list its blocked tasks with their
 * stacks (sysrq w) on the console, once per worker.
 */
static void watch_stalls(long now)
{
	static long last_ops[W_NR], since[W_NR];
	static bool told[W_NR];
	char name[32];
	int w;

	for (w = 0; w < W_NR; w++) {
		struct wstats *s = &sh->w[w];
		long ops = atomic_load(&s->ops);

		if (atomic_load(&s->skipped) || atomic_load(&s->done))
			continue;
		if (ops != last_ops[w] || !since[w]) {
			last_ops[w] = ops;
			since[w] = now;
			continue;
		}
		if (now - since[w] < STALL_S || told[w])
			continue;
		told[w] = true;
		atomic_fetch_add(&s->errors, 1);
		snprintf(s->why, sizeof(s->why), "no progress for %d s at %ld s",
			 STALL_S, now);
		ktap_print_msg("%s: no progress for %d s (at %ld s): blocked tasks on the console",
			       wname(w, name, sizeof(name)), STALL_S, now);
		write_file("/proc/sysrq-trigger", "w");	/* blocked tasks */
		write_file("/proc/sysrq-trigger", "l");	/* running CPUs */
	}
}

int main(int argc, char **argv)
{
	long duration = 0, t, pins_before, pd;
	unsigned int seed = 1, set, longterm_set;
	pid_t pids[W_NR] = { 0 };
	char why[256], name[32];
	bool memcg;
	int c, w, i;

	while ((c = getopt(argc, argv, "t:s:")) != -1) {
		if (c == 't')
			duration = atol(optarg);
		else if (c == 's')
			seed = atoi(optarg);
		else
			duration = -1;
	}
	if (duration <= 0) {
		fprintf(stderr, "usage: %s -t SECONDS [-s SEED]\n", argv[0]);
		return 2;
	}
	page_size = sysconf(_SC_PAGESIZE);
	ktap_print_header();
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		ktap_exit_skip_all("soak", "mmap: %s", strerror(errno));
	for (i = 0; i < FS_NR; i++) {
		mnt[i] = fs_target(fs_names[i], fs_magic[i], &blkdev[i], why,
				   sizeof(why));
		if (!mnt[i])
			ktap_print_msg("%s", why);
	}
	set = knobs_set(knobs, ARRAY_SIZE(knobs));
	knobs_ok = set == ARRAY_SIZE(knobs);
	longterm_set = knobs_set(&longterm_knob, 1);
	if (!knobs_ok)
		ktap_print_msg("no %s: cuts of pinned files are not refused on this kernel",
			       knobs[set].path);
	memcg = memcg_setup();
	ktap_print_msg("soak: %ld s, seed %u, memory cgroup %s", duration, seed,
		       memcg ? "96 MiB" : "unavailable");
	ktap_set_plan(W_NR + 2);
	pins_before = pins_held();
	fflush(stdout);

	for (w = 0; w < W_NR; w++) {
		int fsi = w < W_SYNC ? (w - W_DEV) % FS_NR : 0;

		if (w < W_SYNC && !mnt[fsi]) {
			atomic_store(&sh->w[w].skipped, 1);
			snprintf(sh->w[w].why, sizeof(sh->w[w].why), "no %s mount",
				 fs_names[fsi]);
			continue;
		}
		pids[w] = fork();
		if (pids[w] < 0)
			ktap_bail_out("fork: %s", strerror(errno));
		if (pids[w])
			continue;
		srandom(seed * 1000 + w);
		if (w == W_DEV + FS_EXT4 && memcg)
			memcg_enter();
		if (w < W_RDMA)
			dev_worker(fsi);
		else if (w < W_CHURN)
			rdma_worker(fsi);
		else if (w < W_SYNC)
			churn_worker(fsi);
		else if (w == W_SYNC)
			sync_worker();
		else if (w == W_FREEZE)
			freeze_worker();
		else
			pressure_worker(memcg);
		exit(0);
	}

	for (t = 0; t < duration; t++) {
		sleep(1);
		if ((t + 1) % 60 == 0)
			progress(t + 1, duration);
		watch_stalls(t + 1);
	}
	atomic_store(&sh->stop, true);
	progress(duration, duration);
	for (t = 0; t < STOP_GRACE_S; t++) {
		for (w = 0; w < W_NR; w++)
			if (pids[w] > 0 && waitpid(pids[w], NULL, WNOHANG) == pids[w])
				pids[w] = 0;
		for (w = 0; w < W_NR && !pids[w]; w++)
			;
		if (w == W_NR)
			break;
		sleep(1);
	}
	for (w = 0; w < W_NR; w++) {
		struct wstats *s = &sh->w[w];

		wname(w, name, sizeof(name));
		if (pids[w] > 0) {
			ktap_print_msg("%s: still running %d s after the deadline: killed",
				       name, STOP_GRACE_S);
			kill(pids[w], SIGKILL);
			waitpid(pids[w], NULL, 0);
			ktap_test_fail(name);
			continue;
		}
		if (atomic_load(&s->skipped)) {
			ktap_test_skip(name, "%s", s->why);
			continue;
		}
		ktap_print_msg("%s: %ld operations, %ld pages written by the device, %ld pins, %ld cuts refused while pinned, %ld errors, %ld pages wrong on disk",
			       name, atomic_load(&s->ops), atomic_load(&s->pages),
			       atomic_load(&s->pins), atomic_load(&s->refused),
			       atomic_load(&s->errors), atomic_load(&s->mismatches));
		if (atomic_load(&s->errors))
			ktap_print_msg("%s: first error: %s", name, s->why);
		ktap_test_result(atomic_load(&s->done) && !atomic_load(&s->errors) &&
				 !atomic_load(&s->mismatches), name);
	}
	sync();
	if (pins_held() != pins_before)
		ktap_print_msg("pins held: %ld, %ld at the start", pins_held(),
			       pins_before);
	ktap_test_result(pins_held() == pins_before, "pins_balanced");
	pd = vmstat_read("nr_pinned_dirty");
	if (pd < 0) {
		ktap_test_skip("pinned_dirty_zero", "no nr_pinned_dirty on this kernel");
	} else {
		ktap_print_msg("nr_pinned_dirty after sync: %ld", pd);
		ktap_test_result(pd == 0, "pinned_dirty_zero");
	}
	knobs_restore(knobs, ARRAY_SIZE(knobs));
	knobs_restore(&longterm_knob, longterm_set);
	ktap_finished();
}
