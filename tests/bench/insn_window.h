/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Markers for the insn_window QEMU plugin (scripts/qemu-plugin/): the guest
 * executes insn_window_start(id) and insn_window_stop(id) around a workload;
 * the plugin prints the kernel and user instructions executed in between.
 *
 * A marker is "nopl disp32(%rax)" (0f 1f 80 + 4 bytes), a no-op on any
 * x86-64 CPU with or without the plugin; the displacement carries
 * INSN_WINDOW_MAGIC, the stop bit and the window id.
 */
#ifndef INSN_WINDOW_H
#define INSN_WINDOW_H

#define INSN_WINDOW_MAGIC	0x51a7U
#define INSN_WINDOW_STOP	0x8000U
#define INSN_WINDOW_IDS		256
#define INSN_WINDOW_ID_MASK	(INSN_WINDOW_IDS - 1)

#define INSN_WINDOW_DISP(id, stop) \
	(INSN_WINDOW_MAGIC << 16 | ((stop) ? INSN_WINDOW_STOP : 0) | \
	 ((id) & INSN_WINDOW_ID_MASK))

#ifndef INSN_WINDOW_NO_ASM
/* @id must be a compile-time constant. */
#define insn_window_marker(id, stop) \
	__asm__ volatile(".byte 0x0f, 0x1f, 0x80\n\t.long %c0" \
			 : : "i" (INSN_WINDOW_DISP(id, stop)) : "memory")
#define insn_window_start(id)	insn_window_marker(id, 0)
#define insn_window_stop(id)	insn_window_marker(id, 1)
#endif

#endif
