/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the pinsafe RDMA tests: verbs setup on a named device
 * (rxe0 by default), a loopback RC QP pair, RDMA WRITE/READ with a bounded
 * wait, byte patterns, and on-disk verification of a file through FIEMAP
 * and O_DIRECT reads of the block device underneath.
 */
#ifndef PINSAFE_RDMA_COMMON_H
#define PINSAFE_RDMA_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define RDMA_DEFAULT_DEV	"rxe0"
#define RDMA_PORT		1
/* A single operation must complete within this time (QEMU TCG is slow). */
#define RDMA_OP_TIMEOUT_MS	60000

#define RDMA_ACCESS_RW	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)

struct rdma_opts {
	const char *dev;	/* -d, default rxe0 */
	int gid_index;		/* -g, default -1: first non-zero, RoCE v2 first */
};

struct rdma_ctx {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int gid_index;
	union ibv_gid gid;
	enum ibv_mtu mtu;
	uint8_t max_rd_atomic;
	/* The loopback pair: qp[0] issues requests, qp[1] responds. */
	struct ibv_cq *cq;
	struct ibv_qp *qp[2];
};

void rdma_parse_opts(int argc, char **argv, struct rdma_opts *opts);

/*
 * Open the device, allocate a PD and pick the GID. Returns 0, -ENODEV if
 * the device does not exist (the caller skips), or another -errno.
 */
int rdma_open(struct rdma_ctx *r, const struct rdma_opts *opts);
/* rdma_open(), or end the KTAP document: skip without the device, else bail out. */
void rdma_open_or_exit(struct rdma_ctx *r, const struct rdma_opts *opts,
		       const char *prog);
/* The start of a test program: options, KTAP header, the device open. */
void rdma_start(int argc, char **argv, struct rdma_ctx *r, const char *prog);
void rdma_close(struct rdma_ctx *r);

/* Create a CQ and two RC QPs connected to each other (INIT/RTR/RTS). */
int rdma_loop_connect(struct rdma_ctx *r);
void rdma_loop_destroy(struct rdma_ctx *r);

/*
 * One RC QP to a peer on another host: rdma_qp_create() makes the CQ and
 * r->qp[0] (INIT); rdma_qp_connect() takes it to RTR and RTS towards the
 * peer's QP number and GID, exchanged over any side channel. Torn down by
 * rdma_loop_destroy()/rdma_close(). Return 0 or -errno.
 */
int rdma_qp_create(struct rdma_ctx *r);
int rdma_qp_connect(struct rdma_ctx *r, uint32_t qpn, const uint8_t gid[16]);

/*
 * ibv_reg_mr() that returns the errno of a failure in *err (0 on success)
 * and prints it as a diagnostic line.
 */
struct ibv_mr *rdma_reg(struct rdma_ctx *r, void *addr, size_t len,
			int access, int *err);
const char *rdma_access_str(int access);

/*
 * One signalled RDMA WRITE (local -> remote) or READ (remote -> local) on
 * qp[0], waited for with RDMA_OP_TIMEOUT_MS. On any failure the QP pair is
 * rebuilt so that later tests start from a working pair. Returns 0 or -1.
 */
int rdma_rw(struct rdma_ctx *r, enum ibv_wr_opcode op,
	    struct ibv_mr *lmr, void *laddr, size_t len,
	    struct ibv_mr *rmr, void *raddr);

/*
 * The same on r->qp[0] to any peer, without rebuilding anything on failure
 * (quiet: no line on success). Returns 0 or -1.
 */
int rdma_op(struct rdma_ctx *r, enum ibv_wr_opcode op, struct ibv_mr *lmr,
	    void *laddr, size_t len, uint32_t rkey, uint64_t raddr, bool quiet);
/*
 * The same, quiet, returning the completion's status (enum ibv_wc_status),
 * or -1 if the request could not be posted or did not complete in time.
 */
int rdma_op_status(struct rdma_ctx *r, enum ibv_wr_opcode op,
		   struct ibv_mr *lmr, void *laddr, size_t len, uint32_t rkey,
		   uint64_t raddr);

/* Deterministic, position-dependent byte patterns; seed tells them apart. */
uint8_t pattern_byte(size_t off, unsigned int seed);
void pattern_fill(void *buf, size_t len, unsigned int seed);
/* Compare; on mismatch print the first bad offset and the count. */
bool pattern_check(const void *buf, size_t len, unsigned int seed,
		   const char *what);

/* Fill fd's [0, len) with write(2) and fsync it. Returns 0 or -errno. */
int fd_fill(int fd, size_t len, unsigned int seed);
/* Create (truncate) path, size it to len, fill it. Returns fd or -errno. */
int file_create_filled(const char *path, size_t len, unsigned int seed);
/* fsync, drop the file's page cache (fadvise + drop_caches), best effort. */
void file_drop_cache(int fd);
/* pread [0, len) and compare. */
bool file_check(int fd, size_t len, unsigned int seed, const char *what);

/*
 * Prove what is on disk: map fd's [0, len) to device extents with
 * FS_IOC_FIEMAP (FIEMAP_FLAG_SYNC) and read them from blkdev with O_DIRECT.
 * Returns 0 if every byte matches the pattern, 1 on a mismatch (including
 * holes, unwritten or delalloc extents), -errno if it could not check.
 */
int disk_check(int fd, const char *blkdev, size_t len, unsigned int seed);
/*
 * The same mapping, into dst: fd's [0, len) as the block device holds it.
 * With holes, holes and unwritten extents read as zeroes; without, they
 * are a mismatch (1). verbose prints each extent. 0, 1 or -errno.
 */
int disk_read(int fd, const char *blkdev, void *dst, size_t len, bool holes,
	      bool verbose);

long vmstat_read(const char *name);
/* nr_foll_pin_acquired - nr_foll_pin_released, or -1 without them. */
long pins_held(void);

/* CLOCK_MONOTONIC in seconds. */
double now_s(void);

/*
 * A sysctl (or any one-line file) a test sets and restores at exit. Set
 * knobs in array order; knobs_set() stops at the first that cannot be read
 * or written and returns how many were set (later ones may not exist on
 * the base kernel). knobs_restore() puts back what was saved.
 */
struct knob {
	const char *path;
	const char *val;
	char saved[32];
};

unsigned int knobs_set(struct knob *k, unsigned int n);
void knobs_restore(struct knob *k, unsigned int n);

/*
 * The scratch file system of the guest runner: PINSAFE_MNT_<FS> must be
 * mounted with @magic; *blkdev is the block device /proc/mounts says it is
 * mounted from, else PINSAFE_DEV_<FS>, else NULL.
 * Returns the mount point, or NULL with the reason in @why.
 */
const char *fs_target(const char *fs, long magic, const char **blkdev,
		      char *why, size_t whylen);

#endif /* PINSAFE_RDMA_COMMON_H */
