// SPDX-License-Identifier: GPL-2.0
/*
 * insn_window: a QEMU (7.2, plugin API version 1) TCG plugin that counts
 * the guest instructions executed between two marker instructions, split
 * into kernel and user mode. make bench decides on these counts, because
 * they do not depend on the host's load.
 *
 * Marker: "nopl disp32(%rax)", bytes 0f 1f 80 d0 d1 d2 d3, a no-op on every
 * x86-64 CPU, whose 32-bit displacement is
 *
 *	INSN_WINDOW_MAGIC << 16 | stop << 15 | id	(id < INSN_WINDOW_IDS)
 *
 * Compilers pad with nopl 0x0(%rax) (displacement 0), never with the magic.
 * tests/bench/insn_window.h emits the markers in the guest.
 *
 * Counting: every instruction gets an inline "add 1" to the kernel or
 * the user counter, chosen at translation time from its virtual address
 * (x86-64: >= 0xffff800000000000 is the kernel). The counters run all the
 * time; only the markers get a callback, which reads them. That is exact
 * (an instruction cut short by a fault still counts once, as it does at
 * each execution) and needs no helper call per instruction. Counters are
 * not per vCPU: run the guest with -smp 1.
 *
 * On a stop marker the plugin writes
 *
 *	insn_window id=<n> kernel=<count> user=<count>
 *
 * counted from the last start marker of the same id, to the file named by
 * the outfile=PATH argument (plain stdio, flushed per line), or with
 * qemu_plugin_outs() to QEMU's log (-d plugin -D FILE) when there is none.
 *
 * usage: qemu-system-x86_64 -plugin PATH/insn_window.so,outfile=FILE ...
 *	[,profile=ID]	(see prof_id)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

#include "../../tests/bench/insn_window.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define KERNEL_START	0xffff800000000000ULL

static uint64_t count_kernel, count_user;
static uint64_t start_kernel[INSN_WINDOW_IDS], start_user[INSN_WINDOW_IDS];
static uint64_t windows;
static FILE *out;

/*
 * profile=ID: also count the kernel instructions of window ID per
 * translation block (a callback per block: slow, for finding out where
 * counts differ between two boots) and print them at its stop marker as
 * "insn_profile id=<n> pc=<hex> insns=<count>".
 */
#define PROF_SLOTS	(1 << 16)
static int prof_id = -1;
static int prof_on;
static struct prof_slot {
	uint64_t pc, insns;
} prof[PROF_SLOTS];

static void emit(const char *line)
{
	if (out) {
		fputs(line, out);
		fflush(out);
	} else {
		qemu_plugin_outs(line);
	}
}

static void marker_exec(unsigned int vcpu_index, void *udata)
{
	uint32_t disp = (uint32_t)(uintptr_t)udata;
	unsigned int id = disp & INSN_WINDOW_ID_MASK;
	char line[128];

	if (!(disp & INSN_WINDOW_STOP)) {
		start_kernel[id] = count_kernel;
		start_user[id] = count_user;
		if ((int)id == prof_id) {
			memset(prof, 0, sizeof(prof));
			prof_on = 1;
		}
		return;
	}
	windows++;
	snprintf(line, sizeof(line),
		 "insn_window id=%u kernel=%" PRIu64 " user=%" PRIu64 "\n", id,
		 count_kernel - start_kernel[id], count_user - start_user[id]);
	emit(line);
	if ((int)id == prof_id && prof_on) {
		size_t i;

		prof_on = 0;
		for (i = 0; i < PROF_SLOTS; i++) {
			if (!prof[i].insns)
				continue;
			snprintf(line, sizeof(line),
				 "insn_profile id=%u pc=ffffffff%08" PRIx64
				 " insns=%" PRIu64 "\n", id, prof[i].pc,
				 prof[i].insns);
			emit(line);
		}
	}
}

/* udata: the low 32 bits of a kernel text address << 16 | insns in the TB */
static void tb_exec(unsigned int vcpu_index, void *udata)
{
	uint64_t v = (uintptr_t)udata;
	size_t h;

	if (!prof_on)
		return;
	h = (v >> 16) * 0x9e3779b97f4a7c15ULL >> 48;
	while (prof[h].insns && prof[h].pc != v >> 16)
		h = (h + 1) % PROF_SLOTS;
	prof[h].pc = v >> 16;
	prof[h].insns += v & 0xffff;
}

/* The displacement of a marker instruction, or 0 if @insn is not one. */
static uint32_t marker_disp(struct qemu_plugin_insn *insn)
{
	const uint8_t *b = qemu_plugin_insn_data(insn);
	uint32_t disp;

	if (qemu_plugin_insn_size(insn) != 7 ||
	    b[0] != 0x0f || b[1] != 0x1f || b[2] != 0x80)
		return 0;
	disp = b[3] | b[4] << 8 | b[5] << 16 | (uint32_t)b[6] << 24;
	if (disp >> 16 != INSN_WINDOW_MAGIC ||
	    (disp & ~(INSN_WINDOW_STOP | INSN_WINDOW_ID_MASK) & 0xffff))
		return 0;
	return disp;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	uint64_t pc = qemu_plugin_tb_vaddr(tb);

	if (prof_id >= 0 && pc >> 32 == 0xffffffff && n < 0x10000)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec,
			QEMU_PLUGIN_CB_NO_REGS,
			(void *)(uintptr_t)((pc & 0xffffffff) << 16 | n));

	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t *ctr = qemu_plugin_insn_vaddr(insn) >= KERNEL_START ?
				&count_kernel : &count_user;
		uint32_t disp = marker_disp(insn);

		if (disp)
			qemu_plugin_register_vcpu_insn_exec_cb(insn,
				marker_exec, QEMU_PLUGIN_CB_NO_REGS,
				(void *)(uintptr_t)disp);
		qemu_plugin_register_vcpu_insn_exec_inline(insn,
			QEMU_PLUGIN_INLINE_ADD_U64, ctr, 1);
	}
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	char line[160];

	snprintf(line, sizeof(line),
		 "insn_window total kernel=%" PRIu64 " user=%" PRIu64
		 " windows=%" PRIu64 "\n", count_kernel, count_user, windows);
	emit(line);
	if (out)
		fclose(out);
	out = NULL;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	if (strcmp(info->target_name, "x86_64")) {
		fprintf(stderr, "insn_window: x86_64 guests only, not %s\n",
			info->target_name);
		return -1;
	}
	if (info->system_emulation && info->system.max_vcpus > 1)
		fprintf(stderr, "insn_window: %d vCPUs: counts are only exact with -smp 1\n",
			info->system.max_vcpus);
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "outfile=", 8)) {
			out = fopen(argv[i] + 8, "w");
			if (!out) {
				perror(argv[i] + 8);
				return -1;
			}
		} else if (!strncmp(argv[i], "profile=", 8)) {
			prof_id = atoi(argv[i] + 8) & INSN_WINDOW_ID_MASK;
		} else {
			fprintf(stderr, "insn_window: unknown argument %s\n",
				argv[i]);
			return -1;
		}
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
