/* sd_mem.h — how much memory models and kernel tables may take.
 *
 * The budget is a fraction (SD_MEM_FRACTION = 1/2) of the memory the system
 * reports available when asked — MemAvailable in /proc/meminfo (Linux),
 * else sysconf(_SC_AVPHYS_PAGES) pages — so that a run leaves room for the
 * rest of the machine; the user can set it (`--max-memory`). */
#ifndef SD_MEM_H
#define SD_MEM_H

#include <stddef.h>

#define SD_MEM_FRACTION 0.5
/* The budget when the system does not say: 1 GiB. */
#define SD_MEM_FALLBACK ((size_t)1 << 30)

/* Bytes the system reports available now, or 0 when it does not say. */
size_t sd_mem_available(void);

/* `requested` when > 0, else SD_MEM_FRACTION of sd_mem_available() (or
 * SD_MEM_FALLBACK). */
size_t sd_mem_budget(size_t requested);

#endif
