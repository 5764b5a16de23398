/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One /proc/vmstat value, for the userspace tests (tests/rdma) and the
 * benchmark (tests/bench), which are built apart.
 */
#ifndef PINSAFE_VMSTAT_H
#define PINSAFE_VMSTAT_H

#include <stdio.h>
#include <string.h>

/* The value of @name in /proc/vmstat, or -1. */
static inline long vmstat_value(const char *name)
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

#endif /* PINSAFE_VMSTAT_H */
