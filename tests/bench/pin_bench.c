// SPDX-License-Identifier: GPL-2.0
/*
 * Costs of the pinsafe series, measured in the guest in exact instruction
 * counts (and, for people, in guest-clock MiB/s).
 *
 * usage: pin_bench ext4|integ DIR
 *
 * Every measured workload runs between two insn_window markers
 * (insn_window.h): under QEMU with the insn_window plugin
 * (scripts/qemu-plugin/) the host gets the kernel and user instructions
 * executed in between. DIR must be on a loop device over tmpfs, so that no
 * I/O in a window waits for the host. The program is static and mlock()s
 * itself, so no page of it is read over 9p inside a window.
 *
 * Each window opens after a nap of 0.2 s and closes 0.1 s after the
 * workload (see begin()). A workload repeated in one run marks each
 * repetition with the same id; its counts add up.
 *
 * For each workload it prints
 *	WINDOW <id> <name> <amount> <unit>	what the window with that id did
 *	BENCH <name> <value> <unit>		guest-clock throughput
 * ext4 (an unpinned, never write-pinned file system):
 *	write_fsync	30 x (create, write 4 MiB, fsync) of new files
 *	truncate	ftruncate to 0 of those 30 cached, clean files
 *	punch		hole punch of the whole 4 MiB of 30 cached files
 *	punch_mapped	the same with every page of the files mapped
 *			(MAP_SHARED, read-faulted): the series unmaps the
 *			range before it looks for pins, and the punch then
 *			unmaps it again (these four, in turn, FILE_REPEAT
 *			times)
 *	pin_fast_anon	pin_user_pages_fast + unpin, one page per call, 4 MiB
 *			of anonymous memory, 8 times (gup_test -a)
 *	pin_fast_file_ro  the same with read-only pins (no FOLL_WRITE) of a
 *			MAP_SHARED ext4 file never pinned for writing
 *	pin_fast_file	the same with write pins of that file: a write pin
 *			makes it a write-pinned file (the series records it)
 *	pin_basic_file	pin_user_pages (gup_test -b) on the file
 *	wb_unpinned	fsync of 16 MiB of MAP_SHARED file dirtied by the CPU
 *	wb_pinned	fsync of 16 MiB pinned and written by gup_test's device
 *	sync_by_other	4 x sync() by uid 65534 while 16 MiB of a file are
 *			pinned and written by the device, then one fsync by
 *			the owner (fsync_by_owner); BENCH gives the bytes the
 *			block device wrote per call
 *	pin_longterm_file  PIN_DEVICE_TEST_START (FOLL_LONGTERM | FOLL_WRITE)
 *			of 4 MiB of a file and STOP, 8 times
 *	pin_revocable	the same with PIN_DEVICE_TEST_FLAG_REVOCABLE: what
 *			registering the pins as revocable costs (kernels that
 *			refuse long-term file pins print neither)
 * integ (ext4 on dm-integrity, a stable-writes device: pinned pages are
 * written from bounce copies on the series):
 *	wb_unpinned, wb_pinned	as above; BENCH bounced gives the pages
 *	memcpy_libc	16 MiB copied page by page with memcpy()
 *	memcpy_movsb	the same with rep movsb (the kernel's memcpy on CPUs
 *			with FSRM; TCG counts every iteration)
 *	memcpy_kloop	the same with the loop of the kernel's memcpy_orig
 *			(arch/x86/lib/memcpy_64.S), its memcpy without FSRM,
 *			as under TCG: the instructions a bounce's copy costs
 * The window ids are fixed (enum window); scripts/bench-report.py joins
 * them with the plugin's output.
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
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "gup_test.h"
#include "insn_window.h"
#include "../lib/vmstat.h"

#define MiB		(1UL << 20)
#define NFILES		30
#define FILE_SIZE	(4 * MiB)
#define FILE_REPEAT	3
#define PIN_SIZE	(4 * MiB)
#define PIN_LOOPS	8
#define WB_SIZE		(16 * MiB)
#define WB_REPEAT	3
#define COPY_SIZE	(16 * MiB)
#define FOLL_WRITE	0x01
#define SYNC_CALLS	4
#define NOBODY		65534
#ifndef PIN_DEVICE_TEST_FLAG_REVOCABLE	/* gup_test.h of the base kernel */
#define PIN_DEVICE_TEST_FLAG_REVOCABLE	0x10
#endif

enum window {
	W_WRITE_FSYNC = 1, W_TRUNCATE, W_PUNCH, W_PIN_FAST_ANON,
	W_PIN_FAST_FILE, W_PIN_BASIC_FILE, W_WB_UNPINNED, W_WB_PINNED,
	W_WB_UNPINNED_INTEG, W_WB_PINNED_INTEG, W_MEMCPY_LIBC, W_MEMCPY_MOVSB,
	W_MEMCPY_KLOOP, W_PIN_FAST_FILE_RO, W_PUNCH_MAPPED, W_SYNC_OTHER,
	W_FSYNC_OWNER, W_PIN_LONGTERM_FILE, W_PIN_REVOCABLE,
};

#define MARK(n)	case n: if (stop) insn_window_stop(n); else insn_window_start(n); break

/* The markers need constant ids: one case per window. */
static void mark(enum window w, int stop)
{
	switch (w) {
	MARK(W_WRITE_FSYNC); MARK(W_TRUNCATE); MARK(W_PUNCH);
	MARK(W_PIN_FAST_ANON); MARK(W_PIN_FAST_FILE); MARK(W_PIN_BASIC_FILE);
	MARK(W_WB_UNPINNED); MARK(W_WB_PINNED); MARK(W_WB_UNPINNED_INTEG);
	MARK(W_WB_PINNED_INTEG); MARK(W_MEMCPY_LIBC); MARK(W_MEMCPY_MOVSB);
	MARK(W_MEMCPY_KLOOP); MARK(W_PIN_FAST_FILE_RO);
	MARK(W_PUNCH_MAPPED); MARK(W_SYNC_OTHER); MARK(W_FSYNC_OWNER);
	MARK(W_PIN_LONGTERM_FILE); MARK(W_PIN_REVOCABLE);
	}
}

static double t_start;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void nap(long ms)
{
	struct timespec ts = { .tv_nsec = ms * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

/*
 * A window opens after a nap, so that deferred work of what came before
 * (RCU callbacks, kworkers, I/O completions) does not run in it, and
 * closes after another, so that the deferred work of the workload itself
 * (e.g. the xarray nodes a truncate frees through RCU) is always in it,
 * not in it in one boot and after it in the next. Idle time costs a few
 * timer ticks and, under -icount sleep=off, no host time.
 */
#define NAP_MS	100

static void begin(enum window w)
{
	nap(2 * NAP_MS);
	t_start = now();
	mark(w, 0);
}

/* Ends window @w; returns its guest-clock seconds, without the nap. */
static double end(enum window w)
{
	double t = now() - t_start;

	nap(NAP_MS);
	mark(w, 1);
	return t;
}

static void window(enum window w, const char *name, unsigned long amount,
		   const char *unit)
{
	printf("WINDOW %d %s %lu %s\n", w, name, amount, unit);
}

static void die(const char *what)
{
	fprintf(stderr, "pin_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static long vmstat(const char *name)
{
	return vmstat_value(name);
}

static char buf[MiB];

static void fill(int fd)
{
	size_t off;

	for (off = 0; off < FILE_SIZE; off += sizeof(buf))
		if (pwrite(fd, buf, sizeof(buf), off) != sizeof(buf))
			die("pwrite");
}

/* Punch a hole over the whole of each file. */
static void punch_all(int *fd)
{
	int i;

	for (i = 0; i < NFILES; i++)
		if (fallocate(fd[i], FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      0, FILE_SIZE))
			die("punch");
}

/* Map each file whole and read-fault every page of it. */
static void map_all(int *fd, char **map)
{
	volatile char sum = 0;
	size_t off;
	int i;

	for (i = 0; i < NFILES; i++) {
		map[i] = mmap(NULL, FILE_SIZE, PROT_READ | PROT_WRITE,
			      MAP_SHARED, fd[i], 0);
		if (map[i] == MAP_FAILED)
			die("mmap");
		for (off = 0; off < FILE_SIZE; off += 4096)
			sum += map[i][off];
	}
}

/*
 * write+fsync of new files, then truncate and punch of the cached files,
 * unmapped and mapped.
 */
static void bench_files(const char *dir)
{
	double t[4] = { 0 };
	char path[NFILES][4096], *map[NFILES];
	int fd[NFILES], i, rep;

	memset(buf, 0x5a, sizeof(buf));
	for (i = 0; i < NFILES; i++)
		snprintf(path[i], sizeof(path[i]), "%s/bench.%d", dir, i);
	for (rep = 0; rep < FILE_REPEAT; rep++) {
		sync();
		begin(W_WRITE_FSYNC);
		for (i = 0; i < NFILES; i++) {
			fd[i] = open(path[i], O_RDWR | O_CREAT | O_TRUNC, 0600);
			if (fd[i] < 0)
				die(path[i]);
			fill(fd[i]);
			if (fsync(fd[i]))
				die("fsync");
		}
		t[0] += end(W_WRITE_FSYNC);

		sync();
		begin(W_TRUNCATE);
		for (i = 0; i < NFILES; i++)
			if (ftruncate(fd[i], 0))
				die("ftruncate");
		t[1] += end(W_TRUNCATE);

		for (i = 0; i < NFILES; i++) {
			fill(fd[i]);
			if (fsync(fd[i]))
				die("fsync");
		}
		sync();
		begin(W_PUNCH);
		punch_all(fd);
		t[2] += end(W_PUNCH);

		for (i = 0; i < NFILES; i++) {
			fill(fd[i]);
			if (fsync(fd[i]))
				die("fsync");
		}
		map_all(fd, map);
		sync();
		begin(W_PUNCH_MAPPED);
		punch_all(fd);
		t[3] += end(W_PUNCH_MAPPED);

		for (i = 0; i < NFILES; i++) {
			munmap(map[i], FILE_SIZE);
			close(fd[i]);
			unlink(path[i]);
		}
	}
	window(W_WRITE_FSYNC, "write_fsync", FILE_REPEAT * NFILES * FILE_SIZE,
	       "bytes");
	printf("BENCH write_fsync %.1f MiB/s\n",
	       FILE_REPEAT * NFILES * FILE_SIZE / MiB / t[0]);
	window(W_TRUNCATE, "truncate", FILE_REPEAT * NFILES * FILE_SIZE / 4096,
	       "pages");
	printf("BENCH truncate %.1f MiB/s\n",
	       FILE_REPEAT * NFILES * FILE_SIZE / MiB / t[1]);
	window(W_PUNCH, "punch", FILE_REPEAT * NFILES * FILE_SIZE / 4096,
	       "pages");
	printf("BENCH punch %.1f MiB/s\n",
	       FILE_REPEAT * NFILES * FILE_SIZE / MiB / t[2]);
	window(W_PUNCH_MAPPED, "punch_mapped",
	       FILE_REPEAT * NFILES * FILE_SIZE / 4096, "pages");
	printf("BENCH punch_mapped %.1f MiB/s\n",
	       FILE_REPEAT * NFILES * FILE_SIZE / MiB / t[3]);
	sync();
}

static void pin_loop(int gup_fd, enum window w, const char *name,
		     unsigned long cmd, char *addr, unsigned int gup_flags)
{
	struct gup_test gup = {
		.addr = (uintptr_t)addr, .size = PIN_SIZE,
		.nr_pages_per_call = 1, .gup_flags = gup_flags,
	};
	double t;
	int r;

	/* Warm up: a mapping's first write pin may take a slower path. */
	if (ioctl(gup_fd, cmd, &gup))
		die(name);
	begin(w);
	for (r = 0; r < PIN_LOOPS; r++)
		if (ioctl(gup_fd, cmd, &gup))
			die(name);
	t = end(w);
	window(w, name, PIN_LOOPS * PIN_SIZE / 4096, "pages");
	printf("BENCH %s %.0f ns/page\n", name,
	       t * 1e9 / (PIN_LOOPS * PIN_SIZE / 4096));
}

static int make_file(const char *path, size_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || ftruncate(fd, size) || fallocate(fd, 0, 0, size) ||
	    fsync(fd))
		die(path);
	return fd;
}

static char *map_file(int fd, size_t size)
{
	char *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	size_t off;

	if (map == MAP_FAILED)
		die("mmap");
	for (off = 0; off < size; off += 4096)
		map[off] = 1;
	return map;
}

static void bench_pin(const char *dir, int gup_fd)
{
	char path[4096], *anon, *map;
	int fd;

	anon = mmap(NULL, PIN_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (anon == MAP_FAILED)
		die("mmap");
	memset(anon, 1, PIN_SIZE);
	pin_loop(gup_fd, W_PIN_FAST_ANON, "pin_fast_anon", PIN_FAST_BENCHMARK,
		 anon, FOLL_WRITE);
	munmap(anon, PIN_SIZE);

	snprintf(path, sizeof(path), "%s/bench.pin", dir);
	fd = make_file(path, PIN_SIZE);
	map = map_file(fd, PIN_SIZE);
	if (fsync(fd))
		die("fsync");
	/* Read-only pins first: the file has never been pinned for writing. */
	pin_loop(gup_fd, W_PIN_FAST_FILE_RO, "pin_fast_file_ro",
		 PIN_FAST_BENCHMARK, map, 0);
	pin_loop(gup_fd, W_PIN_FAST_FILE, "pin_fast_file", PIN_FAST_BENCHMARK,
		 map, FOLL_WRITE);
	pin_loop(gup_fd, W_PIN_BASIC_FILE, "pin_basic_file", PIN_BASIC_TEST,
		 map, FOLL_WRITE);
	munmap(map, PIN_SIZE);
	close(fd);
	unlink(path);
	sync();
}

/*
 * fsync of a dirty MAP_SHARED file, dirtied by CPU stores (gup_fd < 0) or
 * by the pinned device emulation; WB_REPEAT windows with the same id.
 */
static void bench_wb(const char *dir, int gup_fd, enum window w,
		     const char *name)
{
	long kept = vmstat("pinned_kept_dirty");
	long bounced = vmstat("pinned_bounced");
	char path[4096], *map;
	double t = 0;
	size_t off;
	int fd, r;

	snprintf(path, sizeof(path), "%s/bench.wb", dir);
	fd = make_file(path, WB_SIZE);
	map = map_file(fd, WB_SIZE);
	if (gup_fd >= 0) {
		struct pin_device_test pin = {
			.addr = (uintptr_t)map, .size = WB_SIZE,
			.flags = PIN_DEVICE_TEST_FLAG_WRITE |
				 PIN_DEVICE_TEST_FLAG_FAST,
		};

		if (ioctl(gup_fd, PIN_DEVICE_TEST_START, &pin))
			die("PIN_DEVICE_TEST_START");
	}
	if (fsync(fd))
		die("fsync");
	if (kept >= 0)
		kept = vmstat("pinned_kept_dirty");
	if (bounced >= 0)
		bounced = vmstat("pinned_bounced");
	for (r = 0; r < WB_REPEAT; r++) {
		if (gup_fd >= 0) {
			struct pin_device_write wr = { .generation = r + 2 };

			if (ioctl(gup_fd, PIN_DEVICE_TEST_WRITE, &wr))
				die("PIN_DEVICE_TEST_WRITE");
		} else {
			for (off = 0; off < WB_SIZE; off += 4096)
				memset(map + off, r + 2, 4096);
		}
		begin(w);
		if (fsync(fd))
			die("fsync");
		t += end(w);
	}
	window(w, name, WB_REPEAT * WB_SIZE / 4096, "pages");
	printf("BENCH %s %.1f MiB/s\n", name, WB_REPEAT * WB_SIZE / MiB / t);
	if (gup_fd >= 0) {
		__u32 flags = 0;

		printf("BENCH %s_kept_dirty %ld pages\n", name,
		       kept < 0 ? -1 : vmstat("pinned_kept_dirty") - kept);
		printf("BENCH %s_bounced %ld pages\n", name,
		       bounced < 0 ? -1 : vmstat("pinned_bounced") - bounced);
		ioctl(gup_fd, PIN_DEVICE_TEST_STOP, &flags);
	}
	munmap(map, WB_SIZE);
	close(fd);
	unlink(path);
	sync();
}

/* Bytes the block device under @dir has written so far (its stat file). */
static long long dev_written(const char *dir)
{
	unsigned long long f[7];
	char path[128];
	struct stat st;
	FILE *fp;
	int n;

	if (stat(dir, &st))
		die(dir);
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/stat",
		 major(st.st_dev), minor(st.st_dev));
	fp = fopen(path, "r");
	if (!fp)
		die(path);
	n = fscanf(fp, "%llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1],
		   &f[2], &f[3], &f[4], &f[5], &f[6]);
	fclose(fp);
	if (n != 7)
		die(path);
	return f[6] * 512;	/* sectors written */
}

/* sync() @n times as uid NOBODY, in a child. */
static void sync_as_nobody(int n)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (!pid) {
		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(1);
		while (n--)
			sync();
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		die("sync as nobody");
}

/*
 * Who makes pinned memory be written: 16 MiB of a file pinned and written
 * by the device, then SYNC_CALLS sync() calls by another user, then one
 * fsync() by the owner, each after a new device write. The block device's
 * own count says how much each call wrote.
 */
static void bench_sync_other(const char *dir, int gup_fd)
{
	struct pin_device_test pin = {
		.size = WB_SIZE,
		.flags = PIN_DEVICE_TEST_FLAG_WRITE,
	};
	struct pin_device_write wr = { .generation = 2 };
	long long before;
	char path[4096], *map;
	__u32 flags = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/bench.sync", dir);
	fd = make_file(path, WB_SIZE);
	map = map_file(fd, WB_SIZE);
	pin.addr = (uintptr_t)map;
	if (ioctl(gup_fd, PIN_DEVICE_TEST_START, &pin))
		die("PIN_DEVICE_TEST_START");
	if (fsync(fd) || ioctl(gup_fd, PIN_DEVICE_TEST_WRITE, &wr))
		die("fsync or PIN_DEVICE_TEST_WRITE");

	before = dev_written(dir);
	begin(W_SYNC_OTHER);
	sync_as_nobody(SYNC_CALLS);
	end(W_SYNC_OTHER);
	window(W_SYNC_OTHER, "sync_by_other", SYNC_CALLS, "calls");
	printf("BENCH sync_by_other %.1f KiB/call\n",
	       (dev_written(dir) - before) / 1024.0 / SYNC_CALLS);

	wr.generation = 3;
	if (ioctl(gup_fd, PIN_DEVICE_TEST_WRITE, &wr))
		die("PIN_DEVICE_TEST_WRITE");
	before = dev_written(dir);
	begin(W_FSYNC_OWNER);
	if (fsync(fd))
		die("fsync");
	end(W_FSYNC_OWNER);
	window(W_FSYNC_OWNER, "fsync_by_owner", 1, "calls");
	printf("BENCH fsync_by_owner %.1f KiB/call\n",
	       (dev_written(dir) - before) / 1024.0);

	ioctl(gup_fd, PIN_DEVICE_TEST_STOP, &flags);
	munmap(map, WB_SIZE);
	close(fd);
	unlink(path);
	sync();
}

/*
 * Long-term write pins of a file through the device emulation, taken and
 * dropped PIN_LOOPS times, with @pin_flags added. Returns 0, or -1 if the
 * kernel refuses them (nothing printed).
 */
static int pin_longterm_loop(int gup_fd, enum window w, const char *name,
			     char *map, unsigned int pin_flags)
{
	struct pin_device_test pin = {
		.addr = (uintptr_t)map, .size = PIN_SIZE,
		.flags = PIN_DEVICE_TEST_FLAG_WRITE |
			 PIN_DEVICE_TEST_FLAG_LONGTERM | pin_flags,
	};
	__u32 flags = 0;
	double t;
	int r;

	if (ioctl(gup_fd, PIN_DEVICE_TEST_START, &pin)) {
		printf("# %s: refused (%s)\n", name, strerror(errno));
		return -1;
	}
	ioctl(gup_fd, PIN_DEVICE_TEST_STOP, &flags);
	begin(w);
	for (r = 0; r < PIN_LOOPS; r++)
		if (ioctl(gup_fd, PIN_DEVICE_TEST_START, &pin) ||
		    ioctl(gup_fd, PIN_DEVICE_TEST_STOP, &flags))
			die(name);
	t = end(w);
	window(w, name, PIN_LOOPS * PIN_SIZE / 4096, "pages");
	printf("BENCH %s %.0f ns/page\n", name,
	       t * 1e9 / (PIN_LOOPS * PIN_SIZE / 4096));
	return 0;
}

/* Long-term file pins, plain (all callers allowed) and revocable. */
static void bench_pin_longterm(const char *dir, int gup_fd)
{
	static const char knob[] = "/proc/sys/vm/longterm_pin_file_mappings";
	char path[4096], saved[16] = "", *map;
	FILE *fp;
	int fd;

	fp = fopen(knob, "r");
	if (fp) {
		if (!fgets(saved, sizeof(saved), fp))
			saved[0] = 0;
		fclose(fp);
	}
	fp = saved[0] ? fopen(knob, "w") : NULL;
	if (fp) {
		fputs("2\n", fp);
		fclose(fp);
	}
	snprintf(path, sizeof(path), "%s/bench.lt", dir);
	fd = make_file(path, PIN_SIZE);
	map = map_file(fd, PIN_SIZE);
	if (!pin_longterm_loop(gup_fd, W_PIN_LONGTERM_FILE,
			       "pin_longterm_file", map, 0))
		pin_longterm_loop(gup_fd, W_PIN_REVOCABLE, "pin_revocable",
				  map, PIN_DEVICE_TEST_FLAG_REVOCABLE);
	fp = saved[0] ? fopen(knob, "w") : NULL;
	if (fp) {
		fputs(saved, fp);
		fclose(fp);
	}
	munmap(map, PIN_SIZE);
	close(fd);
	unlink(path);
	sync();
}

static void copy_movsb(void *dst, const void *src, size_t n)
{
	__asm__ volatile("rep movsb"
			 : "+D" (dst), "+S" (src), "+c" (n) : : "memory");
}

/* The main loop of the kernel's memcpy_orig, for a multiple of 32 bytes. */
static void copy_kloop(void *dst, const void *src, size_t n)
{
	__asm__ volatile("1:\n\t"
			 "subq $0x20, %2\n\t"
			 "movq 0*8(%1), %%r8\n\t"
			 "movq 1*8(%1), %%r9\n\t"
			 "movq 2*8(%1), %%r10\n\t"
			 "movq 3*8(%1), %%r11\n\t"
			 "leaq 4*8(%1), %1\n\t"
			 "movq %%r8, 0*8(%0)\n\t"
			 "movq %%r9, 1*8(%0)\n\t"
			 "movq %%r10, 2*8(%0)\n\t"
			 "movq %%r11, 3*8(%0)\n\t"
			 "leaq 4*8(%0), %0\n\t"
			 "ja 1b"
			 : "+r" (dst), "+r" (src), "+r" (n)
			 : : "r8", "r9", "r10", "r11", "memory", "cc");
}

/* libc's memcpy(), kept from being folded into the caller's loop. */
static void copy_libc(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
	__asm__ volatile("" : : "r" (dst) : "memory");
}

/* Copy COPY_SIZE bytes page by page with @copy inside window @w. */
static void bench_copy(enum window w, const char *name,
		       void (*copy)(void *, const void *, size_t),
		       char *to, const char *from)
{
	size_t off;
	double t;

	begin(w);
	for (off = 0; off < COPY_SIZE; off += 4096)
		copy(to + off, from + off, 4096);
	t = end(w);
	window(w, name, COPY_SIZE / 4096, "pages");
	printf("BENCH %s %.0f ns/page\n", name, t * 1e9 / (COPY_SIZE / 4096));
	if (memcmp(to, from, COPY_SIZE))
		fprintf(stderr, "pin_bench: %s copied wrong\n", name);
}

/* A plain copy of the bytes a bounce copies: the physical floor. */
static void bench_memcpy(void)
{
	static char a[COPY_SIZE], b[COPY_SIZE];

	memset(a, 1, sizeof(a));
	memset(b, 2, sizeof(b));
	bench_copy(W_MEMCPY_LIBC, "memcpy_libc", copy_libc, b, a);
	memset(b, 2, sizeof(b));
	bench_copy(W_MEMCPY_MOVSB, "memcpy_movsb", copy_movsb, b, a);
	memset(b, 2, sizeof(b));
	bench_copy(W_MEMCPY_KLOOP, "memcpy_kloop", copy_kloop, b, a);
}

int main(int argc, char **argv)
{
	int gup_fd, integ;

	if (argc != 3 || (strcmp(argv[1], "ext4") && strcmp(argv[1], "integ"))) {
		fprintf(stderr, "usage: pin_bench ext4|integ DIR\n");
		return 2;
	}
	integ = !strcmp(argv[1], "integ");
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Nothing of this program is read over 9p inside a window. */
	if (mlockall(MCL_CURRENT))
		die("mlockall");
	gup_fd = open("/sys/kernel/debug/gup_test", O_RDWR);
	if (gup_fd < 0)
		die("/sys/kernel/debug/gup_test");
	if (!integ) {
		bench_files(argv[2]);
		bench_pin(argv[2], gup_fd);
		bench_wb(argv[2], -1, W_WB_UNPINNED, "wb_unpinned");
		bench_wb(argv[2], gup_fd, W_WB_PINNED, "wb_pinned");
		bench_sync_other(argv[2], gup_fd);
		bench_pin_longterm(argv[2], gup_fd);
	} else {
		bench_wb(argv[2], -1, W_WB_UNPINNED_INTEG, "wb_unpinned_integ");
		bench_wb(argv[2], gup_fd, W_WB_PINNED_INTEG, "wb_pinned_integ");
		bench_memcpy();
	}
	return 0;
}
