// SPDX-License-Identifier: GPL-2.0
/*
 * Shared helpers of the pinsafe RDMA tests; see common.h.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "ktap.h"
#include "../lib/vmstat.h"

#define MIN(a, b)	((a) < (b) ? (a) : (b))
#define MAX(a, b)	((a) > (b) ? (a) : (b))

/* ---- options ---------------------------------------------------------- */

static void __noreturn usage(const char *prog, int code)
{
	fprintf(stderr,
		"usage: %s [-d device] [-g gid_index]\n"
		"  -d  RDMA device name (default %s)\n"
		"  -g  GID index (default: first non-zero GID, RoCE v2 first)\n",
		prog, RDMA_DEFAULT_DEV);
	exit(code);
}

void rdma_parse_opts(int argc, char **argv, struct rdma_opts *opts)
{
	int c;

	opts->dev = RDMA_DEFAULT_DEV;
	opts->gid_index = -1;
	while ((c = getopt(argc, argv, "d:g:h")) != -1) {
		switch (c) {
		case 'd':
			opts->dev = optarg;
			break;
		case 'g':
			opts->gid_index = atoi(optarg);
			break;
		case 'h':
			usage(argv[0], 0);
		default:
			usage(argv[0], 2);
		}
	}
	if (optind != argc)
		usage(argv[0], 2);
}

/* ---- device, PD, GID -------------------------------------------------- */

static struct ibv_context *open_device_by_name(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list) {
		errno = ENODEV;
		return NULL;
	}
	errno = ENODEV;
	for (i = 0; i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name) == 0) {
			ctx = ibv_open_device(list[i]);
			break;
		}
	}
	ibv_free_device_list(list);
	return ctx;
}

static bool gid_is_zero(const union ibv_gid *gid)
{
	static const union ibv_gid zero;

	return memcmp(gid, &zero, sizeof(zero)) == 0;
}

static const char *gid_type_str(uint32_t type)
{
	switch (type) {
	case IBV_GID_TYPE_IB:
		return "IB";
	case IBV_GID_TYPE_ROCE_V1:
		return "RoCE v1";
	case IBV_GID_TYPE_ROCE_V2:
		return "RoCE v2";
	}
	return "unknown";
}

/* The requested index, else the first non-zero RoCE v2 GID, else any. */
static int pick_gid(struct rdma_ctx *r, int want, int tbl_len)
{
	struct ibv_gid_entry e;
	int first_any = -1, i;

	if (want >= 0) {
		if (ibv_query_gid(r->ctx, RDMA_PORT, want, &r->gid))
			return -errno;
		if (gid_is_zero(&r->gid))
			return -ENOENT;
		r->gid_index = want;
		return 0;
	}
	for (i = 0; i < tbl_len; i++) {
		if (ibv_query_gid_ex(r->ctx, RDMA_PORT, i, &e, 0))
			continue;	/* empty entries report ENODATA */
		if (gid_is_zero(&e.gid))
			continue;
		if (first_any < 0)
			first_any = i;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2) {
			r->gid_index = i;
			r->gid = e.gid;
			return 0;
		}
	}
	if (first_any < 0)
		return -ENOENT;
	r->gid_index = first_any;
	return ibv_query_gid(r->ctx, RDMA_PORT, first_any, &r->gid) ? -errno : 0;
}

int rdma_open(struct rdma_ctx *r, const struct rdma_opts *opts)
{
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	char gidstr[INET6_ADDRSTRLEN];
	struct ibv_gid_entry e;
	int ret;

	memset(r, 0, sizeof(*r));
	r->ctx = open_device_by_name(opts->dev);
	if (!r->ctx)
		return -errno;
	if (ibv_query_device(r->ctx, &dattr) ||
	    ibv_query_port(r->ctx, RDMA_PORT, &pattr)) {
		ret = -errno;
		goto err;
	}
	r->mtu = pattr.active_mtu;
	r->max_rd_atomic = MIN(dattr.max_qp_rd_atom, 16);
	if (r->max_rd_atomic == 0)
		r->max_rd_atomic = 1;

	ret = pick_gid(r, opts->gid_index, pattr.gid_tbl_len);
	if (ret) {
		ktap_print_msg("%s port %d: no usable GID (%s)", opts->dev,
			       RDMA_PORT, strerror(-ret));
		goto err;
	}
	inet_ntop(AF_INET6, r->gid.raw, gidstr, sizeof(gidstr));
	if (ibv_query_gid_ex(r->ctx, RDMA_PORT, r->gid_index, &e, 0))
		e.gid_type = ~0u;
	ktap_print_msg("device %s port %d state %s mtu %d gid[%d] %s (%s)",
		       opts->dev, RDMA_PORT, ibv_port_state_str(pattr.state),
		       128 << r->mtu, r->gid_index, gidstr,
		       gid_type_str(e.gid_type));

	r->pd = ibv_alloc_pd(r->ctx);
	if (!r->pd) {
		ret = -errno;
		goto err;
	}
	return 0;
err:
	ibv_close_device(r->ctx);
	r->ctx = NULL;
	return ret;
}

void rdma_open_or_exit(struct rdma_ctx *r, const struct rdma_opts *opts,
		       const char *prog)
{
	int err = rdma_open(r, opts);

	if (err == -ENODEV)
		ktap_exit_skip_all(prog, "no %s device", opts->dev);
	if (err)
		ktap_bail_out("cannot open %s: %s", opts->dev, strerror(-err));
}

void rdma_start(int argc, char **argv, struct rdma_ctx *r, const char *prog)
{
	struct rdma_opts opts;

	rdma_parse_opts(argc, argv, &opts);
	ktap_print_header();
	rdma_open_or_exit(r, &opts, prog);
}

void rdma_close(struct rdma_ctx *r)
{
	rdma_loop_destroy(r);
	if (r->pd)
		ibv_dealloc_pd(r->pd);
	if (r->ctx)
		ibv_close_device(r->ctx);
	r->pd = NULL;
	r->ctx = NULL;
}

/* ---- loopback QP pair ------------------------------------------------- */

static int qp_to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = RDMA_PORT,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static int qp_to_rtr(struct rdma_ctx *r, struct ibv_qp *qp, uint32_t dest_qpn,
		     const union ibv_gid *dgid)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = r->mtu,
		.dest_qp_num = dest_qpn,
		.rq_psn = 0,
		.max_dest_rd_atomic = r->max_rd_atomic,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.grh = {
				.dgid = *dgid,
				.sgid_index = r->gid_index,
				.hop_limit = 64,
			},
			.port_num = RDMA_PORT,
		},
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER);
}

static int qp_to_rts(struct rdma_ctx *r, struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.timeout = 18,	/* ~1 s: rxe under TCG on a loaded host is slow */
		.retry_cnt = 7,
		.rnr_retry = 7,
		.sq_psn = 0,
		.max_rd_atomic = r->max_rd_atomic,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

int rdma_loop_connect(struct rdma_ctx *r)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = 4,
			.max_recv_wr = 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.sq_sig_all = 0,
	};
	const char *step = "ibv_create_cq";
	int i, ret = 0;

	r->cq = ibv_create_cq(r->ctx, 16, NULL, NULL, 0);
	if (!r->cq) {
		ret = errno;
		goto err;
	}
	init.send_cq = r->cq;
	init.recv_cq = r->cq;
	step = "ibv_create_qp";
	for (i = 0; i < 2; i++) {
		r->qp[i] = ibv_create_qp(r->pd, &init);
		if (!r->qp[i]) {
			ret = errno;
			goto err;
		}
	}
	/* ibv_modify_qp() returns an error number, errno is not reliable. */
	for (i = 0; i < 2; i++) {
		step = "modify QP to INIT";
		ret = qp_to_init(r->qp[i]);
		if (ret)
			goto err;
		step = "modify QP to RTR";
		ret = qp_to_rtr(r, r->qp[i], r->qp[!i]->qp_num, &r->gid);
		if (ret)
			goto err;
		step = "modify QP to RTS";
		ret = qp_to_rts(r, r->qp[i]);
		if (ret)
			goto err;
	}
	return 0;
err:
	if (ret <= 0)
		ret = EIO;
	ktap_print_msg("loopback QP setup: %s failed: %s", step, strerror(ret));
	rdma_loop_destroy(r);
	return -ret;
}

void rdma_loop_destroy(struct rdma_ctx *r)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (r->qp[i])
			ibv_destroy_qp(r->qp[i]);
		r->qp[i] = NULL;
	}
	if (r->cq)
		ibv_destroy_cq(r->cq);
	r->cq = NULL;
}

/* ---- one QP to a remote peer ------------------------------------------ */

int rdma_qp_create(struct rdma_ctx *r)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = 16,
			.max_recv_wr = 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	int ret;

	r->cq = ibv_create_cq(r->ctx, 32, NULL, NULL, 0);
	if (!r->cq)
		return -errno;
	init.send_cq = r->cq;
	init.recv_cq = r->cq;
	r->qp[0] = ibv_create_qp(r->pd, &init);
	if (!r->qp[0]) {
		ret = -errno;
		rdma_loop_destroy(r);
		return ret;
	}
	ret = qp_to_init(r->qp[0]);
	if (ret) {
		rdma_loop_destroy(r);
		return -ret;
	}
	return 0;
}

int rdma_qp_connect(struct rdma_ctx *r, uint32_t qpn, const uint8_t gid[16])
{
	union ibv_gid dgid;
	int ret;

	memcpy(dgid.raw, gid, sizeof(dgid.raw));
	ret = qp_to_rtr(r, r->qp[0], qpn, &dgid);
	if (!ret)
		ret = qp_to_rts(r, r->qp[0]);
	if (ret)
		ktap_print_msg("connect QP 0x%x to peer QP 0x%x: %s",
			       r->qp[0]->qp_num, qpn, strerror(ret));
	return -ret;
}

/* ---- memory registration and RDMA operations -------------------------- */

const char *rdma_access_str(int access)
{
	static char buf[96];

	snprintf(buf, sizeof(buf), "%s%s%s",
		 access & IBV_ACCESS_LOCAL_WRITE ? "|LOCAL_WRITE" : "",
		 access & IBV_ACCESS_REMOTE_WRITE ? "|REMOTE_WRITE" : "",
		 access & IBV_ACCESS_REMOTE_READ ? "|REMOTE_READ" : "");
	return buf[0] ? buf + 1 : "0";
}

struct ibv_mr *rdma_reg(struct rdma_ctx *r, void *addr, size_t len,
			int access, int *err)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(r->pd, addr, len, access);
	*err = mr ? 0 : (errno ? errno : EIO);
	if (mr)
		ktap_print_msg("ibv_reg_mr(%p, %zu, %s): ok lkey 0x%x rkey 0x%x",
			       addr, len, rdma_access_str(access), mr->lkey,
			       mr->rkey);
	else
		ktap_print_msg("ibv_reg_mr(%p, %zu, %s): failed: errno %d (%s)",
			       addr, len, rdma_access_str(access), *err,
			       strerror(*err));
	return mr;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Poll for one completion; sleep briefly so rxe's workers get the CPU. */
static int wait_completion(struct rdma_ctx *r, struct ibv_wc *wc)
{
	const struct timespec pause = { .tv_nsec = 200 * 1000 };
	long long deadline = now_ms() + RDMA_OP_TIMEOUT_MS;
	int n;

	for (;;) {
		n = ibv_poll_cq(r->cq, 1, wc);
		if (n < 0)
			return -EIO;
		if (n == 1)
			return 0;
		if (now_ms() > deadline)
			return -ETIMEDOUT;
		nanosleep(&pause, NULL);
	}
}

static const char *opcode_str(enum ibv_wr_opcode op)
{
	return op == IBV_WR_RDMA_WRITE ? "RDMA WRITE" :
	       op == IBV_WR_RDMA_READ ? "RDMA READ" : "RDMA op";
}

int rdma_op(struct rdma_ctx *r, enum ibv_wr_opcode op, struct ibv_mr *lmr,
	    void *laddr, size_t len, uint32_t rkey, uint64_t raddr, bool quiet)
{
	int status = rdma_op_status(r, op, lmr, laddr, len, rkey, raddr);

	if (status < 0)
		return -1;
	if (status != IBV_WC_SUCCESS) {
		ktap_print_msg("%s of %zu bytes: completion status %s (%d)",
			       opcode_str(op), len, ibv_wc_status_str(status),
			       status);
		return -1;
	}
	if (!quiet)
		ktap_print_msg("%s of %zu bytes: completed", opcode_str(op),
			       len);
	return 0;
}

int rdma_op_status(struct rdma_ctx *r, enum ibv_wr_opcode op,
		   struct ibv_mr *lmr, void *laddr, size_t len, uint32_t rkey,
		   uint64_t raddr)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)laddr,
		.length = (uint32_t)len,
		.lkey = lmr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = {
			.remote_addr = raddr,
			.rkey = rkey,
		},
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	long long start = now_ms();
	int ret;

	ret = ibv_post_send(r->qp[0], &wr, &bad);
	if (ret) {
		ktap_print_msg("%s: ibv_post_send: %s", opcode_str(op),
			       strerror(ret));
		return -1;
	}
	ret = wait_completion(r, &wc);
	if (ret) {
		ktap_print_msg("%s of %zu bytes: %s", opcode_str(op), len,
			       ret == -ETIMEDOUT ? "timed out" : "poll failed");
		return -1;
	}
	if (wc.status == IBV_WC_SUCCESS && now_ms() - start > 1000)
		ktap_print_msg("%s of %zu bytes: completed in %lld ms",
			       opcode_str(op), len, now_ms() - start);
	return wc.status;
}

int rdma_rw(struct rdma_ctx *r, enum ibv_wr_opcode op,
	    struct ibv_mr *lmr, void *laddr, size_t len,
	    struct ibv_mr *rmr, void *raddr)
{
	if (!rdma_op(r, op, lmr, laddr, len, rmr->rkey, (uintptr_t)raddr,
		     false))
		return 0;
	/* An RC QP in error state stays there: rebuild the pair. */
	rdma_loop_destroy(r);
	if (rdma_loop_connect(r))
		ktap_bail_out("cannot rebuild the loopback QP pair");
	return -1;
}

/* ---- patterns --------------------------------------------------------- */

uint8_t pattern_byte(size_t off, unsigned int seed)
{
	uint32_t x = (uint32_t)off * 2654435761u;

	/* Differs between neighbouring bytes, pages and seeds. */
	return (uint8_t)((x >> 13) ^ (off >> 12) ^ (seed * 0x9du));
}

void pattern_fill(void *buf, size_t len, unsigned int seed)
{
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern_byte(i, seed);
}

static bool pattern_check_at(const uint8_t *p, size_t n, size_t off,
			     unsigned int seed, const char *what)
{
	size_t i, bad = 0, first = 0;

	for (i = 0; i < n; i++) {
		if (p[i] != pattern_byte(off + i, seed)) {
			if (!bad++)
				first = i;
		}
	}
	if (bad)
		ktap_print_msg("%s: %zu bytes differ in [%zu, %zu), first at offset %zu: 0x%02x, expected 0x%02x",
			       what, bad, off, off + n, off + first, p[first],
			       pattern_byte(off + first, seed));
	return bad == 0;
}

bool pattern_check(const void *buf, size_t len, unsigned int seed,
		   const char *what)
{
	return pattern_check_at(buf, len, 0, seed, what);
}

/* ---- files ------------------------------------------------------------ */

int fd_fill(int fd, size_t len, unsigned int seed)
{
	static uint8_t chunk[65536];
	size_t off = 0, n, i;
	ssize_t w;

	while (off < len) {
		n = MIN(len - off, sizeof(chunk));
		for (i = 0; i < n; i++)
			chunk[i] = pattern_byte(off + i, seed);
		w = pwrite(fd, chunk, n, off);
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		off += w;
	}
	return fsync(fd) ? -errno : 0;
}

int file_create_filled(const char *path, size_t len, unsigned int seed)
{
	int fd, ret;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, len)) {
		ret = -errno;
		goto err;
	}
	ret = fd_fill(fd, len, seed);
	if (ret)
		goto err;
	return fd;
err:
	close(fd);
	return ret;
}

void file_drop_cache(int fd)
{
	int pfd;

	if (fsync(fd))
		ktap_print_msg("fsync: %s", strerror(errno));
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	sync();
	pfd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (pfd < 0 || write(pfd, "3", 1) != 1)
		ktap_print_msg("drop_caches: %s (page cache may still be warm)",
			       strerror(errno));
	if (pfd >= 0)
		close(pfd);
}

bool file_check(int fd, size_t len, unsigned int seed, const char *what)
{
	static uint8_t chunk[65536];
	size_t off = 0, n;
	ssize_t got;

	while (off < len) {
		n = MIN(len - off, sizeof(chunk));
		got = pread(fd, chunk, n, off);
		if (got <= 0) {
			ktap_print_msg("%s: pread at %zu: %s", what, off,
				       got ? strerror(errno) : "end of file");
			return false;
		}
		if (!pattern_check_at(chunk, got, off, seed, what))
			return false;
		off += got;
	}
	return true;
}

/* ---- on-disk verification --------------------------------------------- */

#define FIEMAP_BATCH	32
#define DIO_ALIGN	512		/* logical block size of virtio-blk */
#define DIO_CHUNK	(256 << 10)

/* Flags that make fe_physical meaningless or the data not (yet) on disk. */
#define FIEMAP_BAD_FLAGS (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC | \
			  FIEMAP_EXTENT_ENCODED | FIEMAP_EXTENT_DATA_ENCRYPTED | \
			  FIEMAP_EXTENT_NOT_ALIGNED | FIEMAP_EXTENT_DATA_INLINE | \
			  FIEMAP_EXTENT_DATA_TAIL | FIEMAP_EXTENT_UNWRITTEN)

/* Compare file bytes [off, off + n) stored at device offset phys. */
/* Read [phys, phys + n) of the device into dst, through an aligned bounce. */
static int disk_pread(int devfd, uint8_t *buf, uint8_t *dst, uint64_t phys,
		      size_t n)
{
	size_t done = 0, skip, want, got;
	uint64_t start;
	ssize_t r;

	while (done < n) {
		start = (phys + done) & ~(uint64_t)(DIO_ALIGN - 1);
		skip = phys + done - start;
		want = MIN(n - done, DIO_CHUNK - skip);
		got = (skip + want + DIO_ALIGN - 1) & ~(size_t)(DIO_ALIGN - 1);
		r = pread(devfd, buf, got, start);
		if (r < 0)
			return -errno;
		if ((size_t)r < skip + want)
			return -EIO;
		memcpy(dst + done, buf + skip, want);
		done += want;
	}
	return 0;
}

int disk_read(int fd, const char *blkdev, void *dst, size_t len, bool holes,
	      bool verbose)
{
	size_t fmsize = sizeof(struct fiemap) +
			FIEMAP_BATCH * sizeof(struct fiemap_extent);
	struct fiemap *fm = NULL;
	uint8_t *buf = NULL;
	size_t pos = 0;
	int devfd, ret = 0;
	unsigned int i;

	devfd = open(blkdev, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (devfd < 0)
		return -errno;
	fm = calloc(1, fmsize);
	if (!fm || posix_memalign((void **)&buf, 4096, DIO_CHUNK)) {
		ret = -ENOMEM;
		goto out;
	}
	memset(dst, 0, len);

	while (pos < len && ret == 0) {
		memset(fm, 0, fmsize);
		fm->fm_start = pos;
		fm->fm_length = len - pos;
		fm->fm_flags = FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = FIEMAP_BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm)) {
			ret = -errno;
			ktap_print_msg("FS_IOC_FIEMAP: %s", strerror(errno));
			break;
		}
		if (fm->fm_mapped_extents == 0) {
			if (holes)
				break;
			ktap_print_msg("fiemap: hole from %zu to %zu: data not on disk",
				       pos, len);
			ret = 1;
			break;
		}
		for (i = 0; i < fm->fm_mapped_extents && ret == 0 &&
			    pos < len; i++) {
			struct fiemap_extent *e = &fm->fm_extents[i];
			size_t end = MIN(len, e->fe_logical + e->fe_length);
			size_t from = MAX(pos, e->fe_logical);

			if (verbose)
				ktap_print_msg("fiemap: logical %llu physical %llu length %llu flags 0x%x",
					       (unsigned long long)e->fe_logical,
					       (unsigned long long)e->fe_physical,
					       (unsigned long long)e->fe_length,
					       e->fe_flags);
			if (e->fe_logical > pos && !holes) {
				ktap_print_msg("fiemap: hole at %zu: data not on disk",
					       pos);
				ret = 1;
			} else if (e->fe_flags & FIEMAP_EXTENT_UNWRITTEN && holes) {
				/* reads as zeroes */
			} else if (e->fe_flags & FIEMAP_BAD_FLAGS) {
				ktap_print_msg("fiemap: extent at %llu flags 0x%x: data not (verifiably) on disk",
					       (unsigned long long)e->fe_logical,
					       e->fe_flags);
				ret = 1;
			} else if (end > from) {
				ret = disk_pread(devfd, buf, (uint8_t *)dst + from,
						 e->fe_physical +
						 (from - e->fe_logical),
						 end - from);
			}
			if (end <= pos && ret == 0) {
				ktap_print_msg("fiemap: no progress at %zu", pos);
				ret = -EIO;
			}
			pos = MAX(pos, end);
			if (e->fe_flags & FIEMAP_EXTENT_LAST)
				break;
		}
		if (ret == 0 && pos < len && !holes &&
		    (fm->fm_extents[fm->fm_mapped_extents - 1].fe_flags &
		     FIEMAP_EXTENT_LAST)) {
			ktap_print_msg("fiemap: file ends at %zu, expected %zu",
				       pos, len);
			ret = 1;
		}
	}
	if (ret < 0)
		ktap_print_msg("disk read on %s: %s", blkdev, strerror(-ret));
out:
	free(buf);
	free(fm);
	close(devfd);
	return ret;
}

int disk_check(int fd, const char *blkdev, size_t len, unsigned int seed)
{
	uint8_t *data = malloc(len);
	char what[96];
	int ret;

	if (!data)
		return -ENOMEM;
	ret = disk_read(fd, blkdev, data, len, false, true);
	snprintf(what, sizeof(what), "file data on %s", blkdev);
	if (!ret && !pattern_check(data, len, seed, what))
		ret = 1;
	free(data);
	return ret;
}

/* ---- /proc/vmstat ------------------------------------------------------ */

/* A /proc/vmstat value after folding the per-cpu deltas, or -1. */
long vmstat_read(const char *name)
{
	int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY);

	if (fd >= 0) {
		if (write(fd, "1", 1) != 1)
			ktap_print_msg("vm.stat_refresh: %s", strerror(errno));
		close(fd);
	}
	return vmstat_value(name);
}

/* Pins held system-wide: nr_foll_pin_acquired - nr_foll_pin_released, or -1. */
long pins_held(void)
{
	long acq = vmstat_read("nr_foll_pin_acquired");
	long rel = vmstat_read("nr_foll_pin_released");

	return acq < 0 || rel < 0 ? -1 : acq - rel;
}

/* ---- time, knobs, scratch file systems ---------------------------------- */

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int knob_rw(const char *path, char *val, size_t len, bool write)
{
	int fd = open(path, write ? O_WRONLY : O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write ? pwrite(fd, val, strlen(val), 0) : pread(fd, val, len - 1, 0);
	close(fd);
	if (n < 0)
		return -EIO;
	if (!write)
		val[n] = '\0';
	return 0;
}

unsigned int knobs_set(struct knob *k, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (knob_rw(k[i].path, k[i].saved, sizeof(k[i].saved), false))
			break;
		if (knob_rw(k[i].path, (char *)k[i].val, 0, true)) {
			k[i].saved[0] = '\0';
			break;
		}
	}
	return i;
}

void knobs_restore(struct knob *k, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (k[i].saved[0])
			knob_rw(k[i].path, k[i].saved, 0, true);
}

/* Set *dev to the block device mounted at @mnt, if /proc/mounts names one. */
static void mounted_dev(const char *mnt, const char **dev)
{
	static char found[4][PATH_MAX];
	static unsigned int next;
	char src[PATH_MAX], dir[PATH_MAX];
	FILE *f = fopen("/proc/self/mounts", "r");

	if (!f)
		return;
	while (fscanf(f, "%4095s %4095s %*[^\n]", src, dir) == 2) {
		if (strcmp(dir, mnt) || strncmp(src, "/dev/", 5))
			continue;
		next = (next + 1) % 4;
		snprintf(found[next], sizeof(found[next]), "%s", src);
		*dev = found[next];
	}
	fclose(f);
}

const char *fs_target(const char *fs, long magic, const char **blkdev,
		      char *why, size_t whylen)
{
	char env[64], up[16];
	const char *mnt;
	struct statfs st;
	size_t i;

	for (i = 0; fs[i] && i < sizeof(up) - 1; i++)
		up[i] = fs[i] >= 'a' && fs[i] <= 'z' ? fs[i] - 'a' + 'A' : fs[i];
	up[i] = '\0';
	snprintf(env, sizeof(env), "PINSAFE_DEV_%s", up);
	*blkdev = getenv(env);
	if (*blkdev && !**blkdev)
		*blkdev = NULL;
	snprintf(env, sizeof(env), "PINSAFE_MNT_%s", up);
	mnt = getenv(env);
	if (!mnt || !*mnt) {
		snprintf(why, whylen, "no %s mount", fs);
		return NULL;
	}
	if (statfs(mnt, &st) || st.f_type != magic) {
		snprintf(why, whylen, "%s is not %s", mnt, fs);
		return NULL;
	}
	/*
	 * The device the file system is mounted from, where FIEMAP's offsets
	 * point (PINSAFE_DEV_INTEG is the disk under dm-integrity, whose
	 * sectors are not the file system's).
	 */
	mounted_dev(mnt, blkdev);
	return mnt;
}
