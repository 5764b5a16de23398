// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_2host: a remote host RDMA-WRITEs into a MAP_SHARED file registered
 * on this host, while this host writes the file back.
 *
 * That is how file-backed MRs are used: the device writing into the page
 * cache is driven by another machine, and the owner of the file syncs it
 * whenever it likes. The server registers, for each of ext4 and xfs, a
 * file of NPAGES pages with REMOTE_WRITE and runs fsync(),
 * sync_file_range() and sync() in a loop; the client writes ROUNDS
 * patterns into it, each announced over TCP when its last RDMA WRITE
 * completed; the server checks each pattern in its mapping and, after
 * fsync(), on its block device.
 *
 *   rdma_2host -s [-p PORT]          server; tests per file system:
 *     register_<fs>   ibv_reg_mr() of the file with REMOTE_WRITE
 *     mapping_<fs>    every round's pattern in the mapping
 *     disk_<fs>       every round's pattern on the block device (FIEMAP +
 *                     O_DIRECT) after fsync()
 *     revoke_<fs>     a hole punched over the registered file revokes the
 *                     MR (pinned_revoked) instead of waiting for it
 *                     (pinned_truncate_waits), in bounded time
 *     pins_<fs>       ibv_dereg_mr() drops every pin
 *   rdma_2host -c SERVER [-p PORT]   client; two tests per file system:
 *     write_<n>       every RDMA WRITE completed and the server saw its
 *                     data in the mapping and on disk
 *     revoked_<n>     the next RDMA WRITE after the server's punch
 *                     completes with IBV_WC_REM_ACCESS_ERR
 *
 * The TCP side channel carries the QP number, GID, address, rkey and
 * length of the server's MR, then one line per round. Environment (server):
 * PINSAFE_MNT_{EXT4,XFS}, PINSAFE_DEV_{EXT4,XFS}; -d/-g select the device.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common.h"
#include "ktap.h"

#define NPAGES		256
#define ROUNDS		4
#define CHUNK		(64 * 1024)
#define DEFAULT_PORT	18600
#define CONNECT_WAIT_S	120	/* the other guest may still be booting */
#define REPLY_WAIT_S	300

static const char * const fs_names[] = { "ext4", "xfs" };
static const long fs_magic[] = { EXT4_SUPER_MAGIC, XFS_SUPER_MAGIC };
static const char * const srv_tests[] = {
	"register", "mapping", "disk", "revoke", "pins",
};

enum { S_REGISTER, S_MAPPING, S_DISK, S_REVOKE, S_PINS, S_NR };

/* The punch after the rounds: revoked, not attempted, or failed. */
enum { REVOKE_DONE = 1, REVOKE_SKIPPED = 0, REVOKE_FAILED = -1 };

/* What the server sends first; all fields in host order (same arch). */
struct mr_info {
	uint32_t qpn;
	uint32_t rkey;
	uint64_t addr;
	uint64_t len;
	uint8_t gid[16];
	int32_t status;		/* 0, or the errno of a failed registration */
};

struct qp_info {
	uint32_t qpn;
	uint8_t gid[16];
};

static long page_size;

static int xfer(int sock, void *buf, size_t len, bool out)
{
	struct pollfd p = { .fd = sock, .events = out ? POLLOUT : POLLIN };
	char *b = buf;
	ssize_t n;

	while (len) {
		if (poll(&p, 1, REPLY_WAIT_S * 1000) != 1)
			return -ETIMEDOUT;
		n = out ? send(sock, b, len, MSG_NOSIGNAL) : recv(sock, b, len, 0);
		if (n <= 0)
			return n ? -errno : -ECONNRESET;
		b += n;
		len -= n;
	}
	return 0;
}

/* ---- server ------------------------------------------------------------ */

struct syncer {
	int fd;
	atomic_bool stop;
	unsigned long rounds;
};

static void *sync_loop(void *arg)
{
	struct syncer *s = arg;

	while (!atomic_load(&s->stop)) {
		fsync(s->fd);
		sync_file_range(s->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
		if (!(s->rounds++ % 8))
			sync();
		usleep(20000);
	}
	return NULL;
}

/*
 * Punch the whole registered file while the client still holds its rkey:
 * the MR is revoked (rxe registers file MRs as revocable), the punch does
 * not wait for the pin, and the client's next RDMA WRITE fails. The client
 * answers once it has tried.
 */
static void serve_revoke(int sock, int fd, size_t len, bool io_ok,
			 const char *name)
{
	long waits = vmstat_read("pinned_truncate_waits");
	long revoked = vmstat_read("pinned_revoked");
	int32_t state = REVOKE_SKIPPED, answer;
	double t = now_s();
	bool ok = false;

	if (io_ok && revoked >= 0) {
		ok = !fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				0, len);
		t = now_s() - t;
		if (!ok)
			ktap_print_msg("%s: punch: %s", name, strerror(errno));
		ktap_print_msg("%s: punch in %.3f s, pinned_revoked +%ld, pinned_truncate_waits +%ld",
			       name, t, vmstat_read("pinned_revoked") - revoked,
			       vmstat_read("pinned_truncate_waits") - waits);
		ok = ok && vmstat_read("pinned_revoked") > revoked &&
		     vmstat_read("pinned_truncate_waits") == waits;
		state = ok ? REVOKE_DONE : REVOKE_FAILED;
	}
	if (xfer(sock, &state, sizeof(state), true) ||
	    xfer(sock, &answer, sizeof(answer), false))
		ktap_bail_out("side channel to the client broke");
	if (state == REVOKE_SKIPPED)
		ktap_test_skip(name, io_ok ? "no pinned_revoked in /proc/vmstat" :
			       "the RDMA WRITEs failed before");
	else
		ktap_test_result(ok, name);
}

static void serve_fs(struct rdma_ctx *r, int lsock, unsigned int i)
{
	char path[PATH_MAX], names[S_NR][64], why[PATH_MAX + 64] = "";
	size_t len = NPAGES * page_size;
	bool map_ok = true, disk_ok = true, io_ok = true;
	struct mr_info info = { 0 };
	struct syncer syncer = { .fd = -1 };
	struct qp_info peer;
	const char *mnt, *blkdev = NULL;
	struct ibv_mr *mr = NULL;
	void *addr = MAP_FAILED;
	pthread_t thr;
	bool syncing = false;
	int fd = -1, sock, err = 0, round;
	long pins_before = pins_held();
	unsigned int t;

	for (t = 0; t < S_NR; t++)
		snprintf(names[t], sizeof(names[t]), "%s_%s", srv_tests[t],
			 fs_names[i]);
	sock = accept(lsock, NULL, NULL);
	if (sock < 0)
		ktap_bail_out("accept: %s", strerror(errno));
	mnt = fs_target(fs_names[i], fs_magic[i], &blkdev, why, sizeof(why));
	if (mnt) {
		snprintf(path, sizeof(path), "%s/rdma_2host", mnt);
		fd = file_create_filled(path, len, 1);
		if (fd < 0)
			snprintf(why, sizeof(why), "create %s: %s", path,
				 strerror(-fd));
	}
	if (!why[0]) {
		addr = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (addr == MAP_FAILED)
			snprintf(why, sizeof(why), "mmap: %s", strerror(errno));
	}
	if (!why[0]) {
		mr = rdma_reg(r, addr, len, RDMA_ACCESS_RW, &err);
		err = err ? err : -rdma_qp_create(r);
		if (err)
			snprintf(why, sizeof(why), "%s: %s",
				 mr ? "QP" : "ibv_reg_mr() of the file",
				 strerror(err));
	}
	info.status = why[0] ? (err ? err : EINVAL) : 0;
	if (!info.status) {
		info.qpn = r->qp[0]->qp_num;
		info.rkey = mr->rkey;
		info.addr = (uintptr_t)addr;
		info.len = len;
		memcpy(info.gid, r->gid.raw, sizeof(info.gid));
	}
	if (xfer(sock, &info, sizeof(info), true) ||
	    (!info.status && xfer(sock, &peer, sizeof(peer), false)))
		ktap_bail_out("side channel to the client broke");
	if (info.status) {
		if (mr || addr == MAP_FAILED) {
			for (t = 0; t < S_NR; t++)
				ktap_test_skip(names[t], "%s", why);
		} else {
			ktap_print_msg("%s: %s", names[S_REGISTER], why);
			ktap_test_fail(names[S_REGISTER]);
			for (t = S_MAPPING; t < S_NR; t++)
				ktap_test_skip(names[t], "not registered");
		}
		goto out;
	}
	ktap_test_pass(names[S_REGISTER]);
	if (rdma_qp_connect(r, peer.qpn, peer.gid))
		io_ok = false;
	/* Ready: the client may write. */
	if (xfer(sock, &io_ok, sizeof(io_ok), true))
		ktap_bail_out("side channel to the client broke");
	syncer.fd = fd;
	syncing = !pthread_create(&thr, NULL, sync_loop, &syncer);
	for (round = 0; io_ok && round < ROUNDS; round++) {
		int32_t seed, verdict;
		bool m, d = true;

		if (xfer(sock, &seed, sizeof(seed), false))
			ktap_bail_out("no word from the client in round %d",
				      round);
		if (seed < 0) {
			ktap_print_msg("round %d: the client's RDMA WRITEs failed",
				       round);
			io_ok = false;
			break;
		}
		m = pattern_check(addr, len, seed, names[S_MAPPING]);
		if (!blkdev)
			d = false;
		else if (fsync(fd))
			d = false;
		else
			d = disk_check(fd, blkdev, len, seed) == 0;
		ktap_print_msg("round %d (seed %d): mapping %s, disk %s", round,
			       seed, m ? "ok" : "WRONG", d ? "ok" : "WRONG");
		map_ok &= m;
		disk_ok &= d;
		verdict = m && d;
		if (xfer(sock, &verdict, sizeof(verdict), true))
			ktap_bail_out("side channel to the client broke");
	}
	if (syncing) {
		atomic_store(&syncer.stop, true);
		pthread_join(thr, NULL);
		ktap_print_msg("%lu rounds of fsync/sync_file_range beside the writes",
			       syncer.rounds);
	}
	ktap_test_result(io_ok && map_ok, names[S_MAPPING]);
	if (!blkdev)
		ktap_test_skip(names[S_DISK], "no block device to check");
	else
		ktap_test_result(io_ok && disk_ok, names[S_DISK]);
	serve_revoke(sock, fd, len, io_ok, names[S_REVOKE]);
	rdma_loop_destroy(r);
	if (ibv_dereg_mr(mr))
		ktap_print_msg("ibv_dereg_mr: %s", strerror(errno));
	mr = NULL;
	if (pins_held() != pins_before)
		ktap_print_msg("%s: %ld pins held, %ld before", names[S_PINS],
			       pins_held(), pins_before);
	ktap_test_result(pins_held() == pins_before, names[S_PINS]);
out:
	rdma_loop_destroy(r);
	if (mr)
		ibv_dereg_mr(mr);
	if (addr != MAP_FAILED)
		munmap(addr, len);
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	close(sock);
}

static void server(struct rdma_ctx *r, int port)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	int one = 1, lsock;
	unsigned int i;

	lsock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lsock < 0 ||
	    setsockopt(lsock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lsock, (struct sockaddr *)&sa, sizeof(sa)) || listen(lsock, 1))
		ktap_bail_out("listen on port %d: %s", port, strerror(errno));
	ktap_set_plan(ARRAY_SIZE(fs_names) * S_NR);
	for (i = 0; i < ARRAY_SIZE(fs_names); i++)
		serve_fs(r, lsock, i);
	close(lsock);
}

/* ---- client ------------------------------------------------------------ */

static int connect_server(const char *host, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	double end = now_s() + CONNECT_WAIT_S;
	int sock, one = 1;

	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		ktap_bail_out("bad server address '%s' (IPv4 only)", host);
	for (;;) {
		sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (sock < 0)
			return -errno;
		if (!connect(sock, (struct sockaddr *)&sa, sizeof(sa))) {
			setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one,
				   sizeof(one));
			return sock;
		}
		close(sock);
		if (now_s() > end)
			return -ETIMEDOUT;
		usleep(500000);
	}
}

/* Write the whole remote MR with @seed in CHUNK pieces. */
static bool write_round(struct rdma_ctx *r, struct ibv_mr *lmr, void *buf,
			const struct mr_info *info, int seed)
{
	size_t off;

	pattern_fill(buf, info->len, seed);
	for (off = 0; off < info->len; off += CHUNK) {
		size_t n = info->len - off < CHUNK ? info->len - off : CHUNK;

		if (rdma_op(r, IBV_WR_RDMA_WRITE, lmr, (char *)buf + off, n,
			    info->rkey, info->addr + off, true))
			return false;
	}
	return true;
}

/* After the server's punch: one more RDMA WRITE must be refused. */
static void client_revoked(struct rdma_ctx *r, int sock, struct ibv_mr *lmr,
			   void *buf, const struct mr_info *info, bool ok,
			   unsigned int n)
{
	int32_t state, status = -1;
	char name[32];

	snprintf(name, sizeof(name), "revoked_%u", n);
	if (xfer(sock, &state, sizeof(state), false))
		ktap_bail_out("side channel to the server broke");
	if (ok && state == REVOKE_DONE) {
		status = rdma_op_status(r, IBV_WR_RDMA_WRITE, lmr, buf,
					page_size, info->rkey, info->addr);
		ktap_print_msg("%s: RDMA WRITE after the punch: %s", name,
			       status < 0 ? "no completion" :
			       ibv_wc_status_str(status));
	}
	if (xfer(sock, &status, sizeof(status), true))
		ktap_bail_out("side channel to the server broke");
	if (!ok || state == REVOKE_SKIPPED)
		ktap_test_skip(name, "no revoke by the server");
	else
		ktap_test_result(state == REVOKE_DONE &&
				 status == IBV_WC_REM_ACCESS_ERR, name);
}

static void client_one(struct rdma_ctx *r, const char *host, int port,
		       unsigned int n)
{
	struct mr_info info;
	struct qp_info me = { 0 };
	struct ibv_mr *lmr = NULL;
	char name[32];
	void *buf = NULL;
	bool ok = true, ready = false;
	int sock, err, round;

	snprintf(name, sizeof(name), "write_%u", n);
	sock = connect_server(host, port);
	if (sock < 0)
		ktap_bail_out("connect to %s:%d: %s", host, port,
			      strerror(-sock));
	if (xfer(sock, &info, sizeof(info), false))
		ktap_bail_out("side channel to the server broke");
	if (info.status) {
		ktap_test_skip(name, "the server could not register its file: %s",
			       strerror(info.status));
		snprintf(name, sizeof(name), "revoked_%u", n);
		ktap_test_skip(name, "the server could not register its file");
		goto out;
	}
	err = rdma_qp_create(r);
	if (err)
		ktap_bail_out("QP: %s", strerror(-err));
	me.qpn = r->qp[0]->qp_num;
	memcpy(me.gid, r->gid.raw, sizeof(me.gid));
	if (xfer(sock, &me, sizeof(me), true) ||
	    xfer(sock, &ready, sizeof(ready), false))
		ktap_bail_out("side channel to the server broke");
	buf = mmap(NULL, info.len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		ktap_bail_out("mmap: %s", strerror(errno));
	lmr = rdma_reg(r, buf, info.len, IBV_ACCESS_LOCAL_WRITE, &err);
	if (!lmr || rdma_qp_connect(r, info.qpn, info.gid) || !ready)
		ok = false;
	for (round = 0; round < ROUNDS; round++) {
		int32_t seed = ok ? (int32_t)(10 * n + round + 2) : -1;
		int32_t verdict = 0;
		double t = now_s();

		if (ok && !write_round(r, lmr, buf, &info, seed))
			seed = -1;
		if (xfer(sock, &seed, sizeof(seed), true))
			ktap_bail_out("side channel to the server broke");
		if (seed < 0) {
			ok = false;
			break;
		}
		if (xfer(sock, &verdict, sizeof(verdict), false))
			ktap_bail_out("no verdict from the server");
		ktap_print_msg("%s round %d: %zu bytes written in %.2f s, server: %s",
			       name, round, (size_t)info.len, now_s() - t,
			       verdict ? "data in mapping and on disk" : "WRONG");
		ok &= verdict;
	}
	ktap_test_result(ok, name);
	client_revoked(r, sock, lmr, buf, &info, ok, n);
out:
	rdma_loop_destroy(r);
	if (lmr)
		ibv_dereg_mr(lmr);
	if (buf && buf != MAP_FAILED)
		munmap(buf, info.len);
	close(sock);
}

int main(int argc, char **argv)
{
	const char *host = NULL;
	struct rdma_opts opts = { .dev = RDMA_DEFAULT_DEV, .gid_index = -1 };
	struct rdma_ctx r;
	bool srv = false;
	int port = DEFAULT_PORT, c;
	unsigned int i;

	while ((c = getopt(argc, argv, "sc:p:d:g:")) != -1) {
		switch (c) {
		case 's': srv = true; break;
		case 'c': host = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'd': opts.dev = optarg; break;
		case 'g': opts.gid_index = atoi(optarg); break;
		default: goto usage;
		}
	}
	if (srv == !!host || port <= 0 || port > 65535 || optind != argc)
		goto usage;
	page_size = sysconf(_SC_PAGESIZE);
	ktap_print_header();
	rdma_open_or_exit(&r, &opts, "rdma_2host");
	if (srv) {
		server(&r, port);
	} else {
		ktap_set_plan(2 * ARRAY_SIZE(fs_names));
		for (i = 0; i < ARRAY_SIZE(fs_names); i++)
			client_one(&r, host, port, i);
	}
	rdma_close(&r);
	ktap_finished();
usage:
	fprintf(stderr, "usage: %s -s [-p port] | -c SERVER_IPV4 [-p port]"
		" [-d device] [-g gid_index]\n", argv[0]);
	return 2;
}
