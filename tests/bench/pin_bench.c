// SPDX-License-Identifier: GPL-2.0
/*
 * Writeback costs of DMA-pinned page cache, measured in the guest.
 *
 * usage: pin_bench DIR [MiB]
 *
 * In DIR (a scratch ext4/xfs/dm-integrity mount), prints "BENCH <name>
 * <value> <unit>" lines:
 *   write_fsync     buffered pwrite of an unpinned file + fsync (MiB/s)
 *   wb_unpinned     fsync of a MAP_SHARED file dirtied by the CPU (MiB/s)
 *   wb_pinned       fsync of the same file pinned and written by gup_test's
 *                   device emulation (MiB/s); on a kernel without
 *                   keep-dirty the device's data is not written at all
 *   memcpy          a plain 4 KiB memcpy (ns/page), to compare with the
 *                   bounce cost: (wb_pinned - wb_unpinned time) per page
 *   kept_dirty, bounced  /proc/vmstat deltas over wb_pinned (pages)
 * scripts/bench.sh runs it on the base and the series kernel and prints
 * ratios. Timings under QEMU TCG are noisy: compare ratios, not values.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "gup_test.h"

#define REPEAT	5

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long vmstat(const char *name)
{
	char key[64];
	long val;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", key, &val) == 2) {
		if (!strcmp(key, name)) {
			fclose(f);
			return val;
		}
	}
	fclose(f);
	return -1;
}

static void die(const char *what)
{
	fprintf(stderr, "pin_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int make_file(const char *path, size_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || ftruncate(fd, size) || fallocate(fd, 0, 0, size) ||
	    fsync(fd))
		die(path);
	return fd;
}

static double bench_write_fsync(const char *dir, size_t size)
{
	char path[4096];
	static char buf[1 << 20];
	double best = 0;
	int r;

	memset(buf, 0x5a, sizeof(buf));
	snprintf(path, sizeof(path), "%s/bench.write", dir);
	for (r = 0; r < REPEAT; r++) {
		int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		double t = now();
		size_t off;

		if (fd < 0)
			die(path);
		for (off = 0; off < size; off += sizeof(buf))
			if (pwrite(fd, buf, sizeof(buf), off) != sizeof(buf))
				die("pwrite");
		if (fsync(fd))
			die("fsync");
		t = now() - t;
		if (!best || t < best)
			best = t;
		close(fd);
	}
	unlink(path);
	return size / best / (1 << 20);
}

/* fsync time of a dirty MAP_SHARED file: CPU stores or the pinned device. */
static double bench_wb(const char *dir, size_t size, int gup_fd, long *kept,
		       long *bounced)
{
	size_t psize = getpagesize(), off;
	double best = 0;
	char path[4096];
	char *map;
	int fd, r;

	snprintf(path, sizeof(path), "%s/bench.wb", dir);
	fd = make_file(path, size);
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		die("mmap");
	for (off = 0; off < size; off += psize)
		map[off] = 1;
	if (gup_fd >= 0) {
		struct pin_device_test pin = {
			.addr = (uintptr_t)map, .size = size,
			.flags = PIN_DEVICE_TEST_FLAG_WRITE |
				 PIN_DEVICE_TEST_FLAG_FAST,
		};

		if (ioctl(gup_fd, PIN_DEVICE_TEST_START, &pin))
			die("PIN_DEVICE_TEST_START");
	}
	if (fsync(fd))
		die("fsync");
	*kept = vmstat("pinned_kept_dirty");
	*bounced = vmstat("pinned_bounced");
	for (r = 0; r < REPEAT; r++) {
		double t;

		if (gup_fd >= 0) {
			struct pin_device_write w = { .generation = r + 2 };

			if (ioctl(gup_fd, PIN_DEVICE_TEST_WRITE, &w))
				die("PIN_DEVICE_TEST_WRITE");
		} else {
			for (off = 0; off < size; off += psize)
				memset(map + off, r + 2, psize);
		}
		t = now();
		if (fsync(fd))
			die("fsync");
		t = now() - t;
		if (!best || t < best)
			best = t;
	}
	if (*kept >= 0)
		*kept = vmstat("pinned_kept_dirty") - *kept;
	if (*bounced >= 0)
		*bounced = vmstat("pinned_bounced") - *bounced;
	if (gup_fd >= 0) {
		__u32 flags = 0;

		ioctl(gup_fd, PIN_DEVICE_TEST_STOP, &flags);
	}
	munmap(map, size);
	close(fd);
	unlink(path);
	return size / best / (1 << 20);
}

static double bench_memcpy(void)
{
	static char a[1 << 22], b[1 << 22];
	size_t psize = getpagesize(), off;
	double t = now();
	int r;

	memset(a, 1, sizeof(a));
	for (r = 0; r < 16; r++)
		for (off = 0; off < sizeof(a); off += psize) {
			memcpy(b + off, a + off, psize);
			__asm__ volatile("" : : "r"(b) : "memory");
		}
	return (now() - t) * 1e9 / (16.0 * sizeof(a) / psize);
}

int main(int argc, char **argv)
{
	size_t size = (argc > 2 ? atol(argv[2]) : 16) << 20;
	long kept, bounced;
	int gup_fd;

	if (argc < 2) {
		fprintf(stderr, "usage: pin_bench DIR [MiB]\n");
		return 2;
	}
	printf("BENCH write_fsync %.1f MiB/s\n", bench_write_fsync(argv[1], size));
	printf("BENCH wb_unpinned %.1f MiB/s\n",
	       bench_wb(argv[1], size, -1, &kept, &bounced));
	gup_fd = open("/sys/kernel/debug/gup_test", O_RDWR);
	if (gup_fd >= 0) {
		printf("BENCH wb_pinned %.1f MiB/s\n",
		       bench_wb(argv[1], size, gup_fd, &kept, &bounced));
		printf("BENCH kept_dirty %ld pages\n", kept);
		printf("BENCH bounced %ld pages\n", bounced);
	}
	printf("BENCH memcpy %.0f ns/page\n", bench_memcpy());
	return 0;
}
