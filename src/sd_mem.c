/* sd_mem.c — the memory budget (sd_mem.h). */
#include "sd_mem.h"

#include <stdio.h>
#include <unistd.h>

size_t sd_mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        unsigned long long kb;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
                fclose(f);
                return (size_t)kb * 1024u;
            }
        fclose(f);
    }
#ifdef _SC_AVPHYS_PAGES
    long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages > 0 && size > 0)
        return (size_t)pages * (size_t)size;
#endif
    return 0;
}

size_t sd_mem_budget(size_t requested)
{
    if (requested)
        return requested;
    size_t avail = sd_mem_available();
    return avail ? (size_t)((double)avail * SD_MEM_FRACTION) : SD_MEM_FALLBACK;
}
