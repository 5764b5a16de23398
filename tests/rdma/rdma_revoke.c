// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_revoke: a file MR gives its pages back when the file system needs
 * them.
 *
 * An RC QP writes into a writable registration of a MAP_SHARED ext4 or
 * xfs file (rxe0). Another process then punches a hole in the registered
 * range, or truncates it, with vm.dma_pin_truncate_wait_ms=5000 and
 * vm.dma_pin_truncate_policy=1 (a pin that is waited for makes the
 * operation fail after 5 s). With revocable pins (ib_umem_revocable(), rxe)
 * the operation succeeds at once, the MR is invalid from then on (the next
 * RDMA WRITE to it completes with IBV_WC_REM_ACCESS_ERR), what the QP
 * wrote before is on the disk after fsync (read through the block device),
 * and deregistering and registering the mapping again works. For ext4 and
 * xfs, cases punch_<fs> and truncate_<fs>.
 *
 * shutdown_<fs>: a file system of its own (an image on /tmp, a loop device)
 * is shut down (EXT4_IOC_SHUTDOWN, XFS_IOC_GOINGDOWN) under a file MR the
 * QP wrote into: the MR is revoked at once (pinned_revoked), the next RDMA
 * WRITE to it completes with IBV_WC_REM_ACCESS_ERR, deregistering works,
 * and the file system can be unmounted.
 *
 * The base kernel refuses the registration (long-term pins of such files),
 * which is reported as a failure: the application cannot use the file.
 *
 * Environment: PINSAFE_MNT_{EXT4,XFS}, PINSAFE_DEV_{EXT4,XFS}.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "ktap.h"

#define NPAGES		64
#define WRITTEN		32	/* pages the QP writes before the cut */

static const char * const fs_names[] = { "ext4", "xfs" };
static const long fs_magic[] = { EXT4_SUPER_MAGIC, XFS_SUPER_MAGIC };
static const char * const ops[] = { "punch", "truncate" };

#define NTESTS		(ARRAY_SIZE(fs_names) * (ARRAY_SIZE(ops) + 1))

/* EXT4_IOC_SHUTDOWN and XFS_IOC_GOINGDOWN, without flushing the log */
#define FS_GOINGDOWN		_IOR('X', 125, __u32)
#define FS_GOINGDOWN_NOLOGFLUSH	2

static struct knob knobs[] = {
	{ .path = "/proc/sys/vm/dma_pin_truncate_wait_ms", .val = "5000" },
	{ .path = "/proc/sys/vm/dma_pin_truncate_policy", .val = "1" },
	{ .path = "/proc/sys/vm/dma_pin_revoke", .val = "1" },
};
static long page_size;

/* Punch pages [WRITTEN, WRITTEN + 16) or truncate to WRITTEN pages. */
static int cut(int fd, bool punch)
{
	if (punch)
		return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				 WRITTEN * page_size, 16 * page_size);
	return ftruncate(fd, WRITTEN * page_size);
}

/* Run cut() in another process; its errno, or 0. Sets *secs. */
static int cut_elsewhere(int fd, bool punch, double *secs)
{
	double t = now_s();
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return errno;
	if (!pid)
		_exit(cut(fd, punch) ? errno : 0);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return ECHILD;
	*secs = now_s() - t;
	return WEXITSTATUS(status);
}

/* What the file must hold on the disk after the cut. */
static bool disk_as_expected(int fd, const char *blkdev, bool punch,
			     const char *name)
{
	size_t size = (punch ? NPAGES : WRITTEN) * page_size;
	uint8_t *buf = NULL;
	bool ok;
	int ret;

	if (posix_memalign((void **)&buf, 4096, size))
		return false;
	ret = disk_read(fd, blkdev, buf, size, true, false);
	ok = !ret && pattern_check(buf, WRITTEN * page_size, 2,
				   "pages the QP wrote before the cut");
	if (ok && punch) {
		size_t i, hole = 16 * page_size;

		for (i = 0; i < hole; i++)
			if (buf[WRITTEN * page_size + i])
				break;
		if (i < hole) {
			ktap_print_msg("%s: the punched range holds data on disk",
				       name);
			ok = false;
		}
		/* The rest of the file keeps its first content, seed 1. */
		for (i = (WRITTEN + 16) * page_size; ok && i < size; i++)
			if (buf[i] != pattern_byte(i, 1)) {
				ktap_print_msg("%s: byte %zu past the hole changed",
					       name, i);
				ok = false;
			}
	}
	if (ret)
		ktap_print_msg("%s: cannot read the file from %s: %s", name,
			       blkdev, ret > 0 ? "holes" : strerror(-ret));
	else if (ok)
		ktap_print_msg("%s: on %s after fsync: the QP's data, then %s",
			       name, blkdev,
			       punch ? "the hole and the old data" : "EOF");
	free(buf);
	return ok;
}

/*
 * After the @what, pinned_revoked moved by one since @revoked, and the MR
 * is gone: a remote write to it fails, bounded. Rebuilds the QP pair the
 * failed write broke.
 */
static bool mr_was_revoked(struct rdma_ctx *r, struct ibv_mr *smr, void *src,
			   struct ibv_mr *fmr, void *addr, long revoked,
			   const char *name, const char *what)
{
	bool ok = true;
	int status;

	if (revoked >= 0 && vmstat_read("pinned_revoked") != revoked + 1) {
		ktap_print_msg("%s: pinned_revoked moved by %ld at the %s, not 1",
			       name, vmstat_read("pinned_revoked") - revoked,
			       what);
		ok = false;
	}
	status = rdma_op_status(r, IBV_WR_RDMA_WRITE, smr, src, page_size,
				fmr->rkey, (uintptr_t)addr);
	ktap_print_msg("%s: RDMA WRITE to the MR after the %s: %s", name, what,
		       status < 0 ? "no completion" : ibv_wc_status_str(status));
	if (status != IBV_WC_REM_ACCESS_ERR)
		ok = false;
	rdma_loop_destroy(r);
	if (rdma_loop_connect(r))
		ktap_bail_out("cannot rebuild the loopback QP pair");
	return ok;
}

static bool revoke_case(struct rdma_ctx *r, int fd, void *addr,
			const char *blkdev, bool punch, const char *name)
{
	size_t size = NPAGES * page_size;
	long revoked = vmstat_read("pinned_revoked");
	long waits = vmstat_read("pinned_truncate_waits");
	struct ibv_mr *fmr, *smr;
	void *src = NULL;
	bool ok = true;
	double secs = 0;
	int err;

	fmr = rdma_reg(r, addr, size, RDMA_ACCESS_RW, &err);
	if (!fmr) {
		ktap_print_msg("%s: writable ibv_reg_mr() of the file: %s",
			       name, strerror(err));
		return false;
	}
	if (posix_memalign(&src, 4096, size))
		return false;
	pattern_fill(src, size, 2);
	smr = rdma_reg(r, src, size, RDMA_ACCESS_RW, &err);
	if (!smr) {
		free(src);
		return false;
	}
	if (rdma_op(r, IBV_WR_RDMA_WRITE, smr, src, WRITTEN * page_size,
		    fmr->rkey, (uintptr_t)addr, false)) {
		ok = false;
		goto out;
	}

	err = cut_elsewhere(fd, punch, &secs);
	ktap_print_msg("%s: %s by another process in %.3f s: %s", name,
		       punch ? "hole punch" : "truncate", secs,
		       err ? strerror(err) : "ok");
	if (err)
		ok = false;
	/* Revoked, not waited for: the wait count decides, not the clock. */
	if (waits >= 0 && vmstat_read("pinned_truncate_waits") != waits) {
		ktap_print_msg("%s: the cut waited for the pin", name);
		ok = false;
	}
	if (!mr_was_revoked(r, smr, src, fmr, addr, revoked, name, "cut"))
		ok = false;

	if (fsync(fd)) {
		ktap_print_msg("%s: fsync: %s", name, strerror(errno));
		ok = false;
	}
	if (blkdev && !disk_as_expected(fd, blkdev, punch, name))
		ok = false;

	/* The application deregisters and registers again. */
	if (ibv_dereg_mr(fmr)) {
		ktap_print_msg("%s: ibv_dereg_mr of the revoked MR: %s", name,
			       strerror(errno));
		ok = false;
	}
	fmr = rdma_reg(r, addr, WRITTEN * page_size, RDMA_ACCESS_RW, &err);
	if (!fmr) {
		ktap_print_msg("%s: registering again: %s", name,
			       strerror(err));
		ok = false;
	} else if (rdma_op(r, IBV_WR_RDMA_WRITE, smr, src, page_size,
			   fmr->rkey, (uintptr_t)addr, false)) {
		ok = false;
	}
out:
	if (fmr)
		ibv_dereg_mr(fmr);
	ibv_dereg_mr(smr);
	free(src);
	return ok;
}

/*
 * A file system of @fs's own, on a loop device over a sparse image in
 * /tmp, mounted on @mnt; @loop gets the device. Returns false if it cannot
 * be made (the reason is printed).
 */
static bool private_fs(const char *fs, char *mnt, size_t mlen, char *loop,
		       size_t llen)
{
	char cmd[512];
	FILE *p;

	snprintf(mnt, mlen, "/tmp/rdma_revoke_%s", fs);
	snprintf(cmd, sizeof(cmd),
		 "truncate -s 300M %s.img && losetup -f --show %s.img", mnt,
		 mnt);
	p = popen(cmd, "r");
	if (!p || !fgets(loop, llen, p)) {
		if (p)
			pclose(p);
		ktap_print_msg("%s: no loop device for %s.img", fs, mnt);
		return false;
	}
	pclose(p);
	loop[strcspn(loop, "\n")] = '\0';
	snprintf(cmd, sizeof(cmd),
		 "mkfs.%s -q %s %s >/dev/null 2>&1 && mkdir -p %s && mount %s %s",
		 fs, strcmp(fs, "xfs") ? "-F" : "-f", loop, mnt, loop, mnt);
	if (system(cmd)) {
		ktap_print_msg("%s: cannot make and mount it on %s", fs, loop);
		return false;
	}
	return true;
}

/* Unmount and remove it; false if the unmount fails. */
static bool private_fs_remove(const char *mnt, const char *loop)
{
	char cmd[512];
	bool ok;

	snprintf(cmd, sizeof(cmd), "umount %s", mnt);
	ok = !system(cmd);
	snprintf(cmd, sizeof(cmd),
		 "umount -l %s 2>/dev/null; losetup -d %s; rm -f %s.img; rmdir %s",
		 mnt, loop, mnt, mnt);
	if (system(cmd))
		ktap_print_msg("cleaning up %s: failed", mnt);
	return ok;
}

/* The file system under a file MR the QP wrote into is shut down. */
static bool shutdown_case(struct rdma_ctx *r, const char *fs, const char *name)
{
	size_t size = NPAGES * page_size;
	char mnt[128], loop[64] = "", path[160];
	struct ibv_mr *fmr = NULL, *smr = NULL;
	__u32 how = FS_GOINGDOWN_NOLOGFLUSH;
	void *src = NULL, *addr = MAP_FAILED;
	long revoked;
	int fd = -1, err;
	bool ok = false;

	if (!private_fs(fs, mnt, sizeof(mnt), loop, sizeof(loop)))
		goto remove;
	snprintf(path, sizeof(path), "%s/rdma_revoke", mnt);
	fd = file_create_filled(path, size, 1);
	if (fd >= 0)
		addr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			    fd, 0);
	if (addr == MAP_FAILED || posix_memalign(&src, 4096, size)) {
		ktap_print_msg("%s: cannot create and map %s", name, path);
		goto out;
	}
	pattern_fill(src, size, 2);
	fmr = rdma_reg(r, addr, size, RDMA_ACCESS_RW, &err);
	if (!fmr) {
		ktap_print_msg("%s: writable ibv_reg_mr() of the file: %s",
			       name, strerror(err));
		goto out;
	}
	smr = rdma_reg(r, src, size, RDMA_ACCESS_RW, &err);
	if (!smr || rdma_op(r, IBV_WR_RDMA_WRITE, smr, src,
			    WRITTEN * page_size, fmr->rkey, (uintptr_t)addr,
			    false))
		goto out;

	revoked = vmstat_read("pinned_revoked");
	if (ioctl(fd, FS_GOINGDOWN, &how)) {
		ktap_print_msg("%s: shutdown: %s", name, strerror(errno));
		goto out;
	}
	ok = mr_was_revoked(r, smr, src, fmr, addr, revoked, name, "shutdown");
	if (ibv_dereg_mr(fmr)) {
		ktap_print_msg("%s: ibv_dereg_mr of the revoked MR: %s", name,
			       strerror(errno));
		ok = false;
	}
	fmr = NULL;
out:
	if (fmr)
		ibv_dereg_mr(fmr);
	if (smr)
		ibv_dereg_mr(smr);
	free(src);
	if (addr != MAP_FAILED)
		munmap(addr, size);
	if (fd >= 0)
		close(fd);
remove:
	if (loop[0] && !private_fs_remove(mnt, loop)) {
		ktap_print_msg("%s: umount after the shutdown failed", name);
		ok = false;
	}
	return ok;
}

static void run_fs(struct rdma_ctx *r, unsigned int i)
{
	size_t size = NPAGES * page_size;
	char why[PATH_MAX + 64] = "";
	char path[PATH_MAX], name[64];
	const char *mnt, *blkdev;
	unsigned int o;

	mnt = fs_target(fs_names[i], fs_magic[i], &blkdev, why, sizeof(why));
	snprintf(name, sizeof(name), "shutdown_%s", fs_names[i]);
	if (mnt)
		ktap_test_result(shutdown_case(r, fs_names[i], name), name);
	else
		ktap_test_skip(name, "%s", why);
	for (o = 0; o < ARRAY_SIZE(ops); o++) {
		void *addr = MAP_FAILED;
		int fd = -1;

		snprintf(name, sizeof(name), "%s_%s", ops[o], fs_names[i]);
		if (!mnt) {
			ktap_test_skip(name, "%s", why);
			continue;
		}
		snprintf(path, sizeof(path), "%s/rdma_revoke", mnt);
		fd = file_create_filled(path, size, 1);
		if (fd >= 0)
			addr = mmap(NULL, size, PROT_READ | PROT_WRITE,
				    MAP_SHARED, fd, 0);
		if (addr == MAP_FAILED) {
			ktap_print_msg("%s: cannot create and map %s", name,
				       path);
			ktap_test_fail(name);
		} else {
			ktap_test_result(revoke_case(r, fd, addr, blkdev,
						     o == 0, name), name);
			munmap(addr, size);
		}
		if (fd >= 0)
			close(fd);
		unlink(path);
	}
}

int main(int argc, char **argv)
{
	struct rdma_ctx r;
	unsigned int i, set;

	page_size = sysconf(_SC_PAGESIZE);
	rdma_start(argc, argv, &r, "rdma_revoke");
	if (rdma_loop_connect(&r))
		ktap_bail_out("cannot connect the loopback QP pair");
	ktap_set_plan(NTESTS);
	set = knobs_set(knobs, ARRAY_SIZE(knobs));
	if (set < ARRAY_SIZE(knobs))
		ktap_print_msg("no %s: this kernel has no revocable pins",
			       knobs[set].path);
	for (i = 0; i < ARRAY_SIZE(fs_names); i++)
		run_fs(&r, i);
	knobs_restore(knobs, ARRAY_SIZE(knobs));
	rdma_loop_destroy(&r);
	rdma_close(&r);
	ktap_finished();
}
