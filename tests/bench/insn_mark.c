// SPDX-License-Identifier: GPL-2.0
/*
 * insn_mark start|stop ID: execute one insn_window marker (insn_window.h),
 * for windows around shell commands. The instructions of this program's
 * own exit and of the shell are inside such a window: pin_bench puts its
 * markers around the workload itself.
 *
 * The id is known only at run time, so the marker is written into an
 * executable page and called.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define INSN_WINDOW_NO_ASM
#include "insn_window.h"

int main(int argc, char **argv)
{
	uint32_t disp;
	uint8_t *code;
	char *end;
	long id;

	if (argc != 3 || (strcmp(argv[1], "start") && strcmp(argv[1], "stop"))) {
		fprintf(stderr, "usage: insn_mark start|stop ID (0-%d)\n",
			INSN_WINDOW_IDS - 1);
		return 2;
	}
	id = strtol(argv[2], &end, 0);
	if (*end || id < 0 || id >= INSN_WINDOW_IDS) {
		fprintf(stderr, "insn_mark: bad id %s\n", argv[2]);
		return 2;
	}
	disp = INSN_WINDOW_DISP(id, !strcmp(argv[1], "stop"));
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("insn_mark: mmap");
		return 1;
	}
	/* nopl disp32(%rax); ret */
	code[0] = 0x0f;
	code[1] = 0x1f;
	code[2] = 0x80;
	memcpy(code + 3, &disp, 4);
	code[7] = 0xc3;
	((void (*)(void))code)();
	return 0;
}
