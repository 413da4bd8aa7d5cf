#ifndef CRESIDENT_MEMORY_H
#define CRESIDENT_MEMORY_H
#include <stddef.h>
/* Hands the kernel back the pages of the program's own read-only segments (code, read-only data)
 * that are resident now: madvise(MADV_PAGEOUT) on every PT_LOAD segment of the main executable
 * without PF_W. Nothing is lost: a page touched again is read back from the file. Writable
 * segments (data, RELRO) are left alone.
 * Returns 0 and the bytes advised in `advised`, or an errno (EINVAL: a kernel before 5.4 without
 * MADV_PAGEOUT; ENOENT: no program headers found). */
int cresident_release_executable_pages(size_t *advised);
#endif
