#ifndef ROSTER_FLOOR_H
#define ROSTER_FLOOR_H

#include <stddef.h>

/* The benchmark's floor: the least a line server on a Unix socket can do, in plain C. */

/* Listens on `path` and echoes every newline-terminated line back on its connection until killed.
   Returns only on a setup failure (-1, errno set). */
int roster_floor_serve(const char *path);

/* Pins the task `tid` (0 = the caller) to one CPU; 0 on success, -1 with errno otherwise. */
int roster_pin_to_cpu(int tid, int cpu);

/* CPUs the caller may run on. */
int roster_allowed_cpu_count(void);

/* Lets `tid` run on every CPU the system has (a child must not inherit the client's pin). */
int roster_allow_every_cpu(int tid);

/* memmem, which Swift's Glibc module does not export without _GNU_SOURCE. */
const void *roster_find(const void *haystack, size_t haystack_len, const void *needle, size_t needle_len);

#endif
