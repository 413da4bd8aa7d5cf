#define _GNU_SOURCE
#include "CResidentMemory.h"
#include <errno.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

struct release_state {
    size_t advised;
    int error;
    int seen_program;
};

/* dl_iterate_phdr visits the main program first (its dlpi_name is ""); only it is released. */
static int release_segments(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct release_state *state = data;
    if (state->seen_program) return 1;
    state->seen_program = 1;
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) page = 4096;
    for (ElfW(Half) index = 0; index < info->dlpi_phnum; index++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[index];
        if (header->p_type != PT_LOAD || (header->p_flags & PF_W) || header->p_memsz == 0) continue;
        uintptr_t start = (uintptr_t)(info->dlpi_addr + header->p_vaddr);
        uintptr_t end = start + header->p_memsz;
        start &= ~(uintptr_t)(page - 1);
        end = (end + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
        if (madvise((void *)start, end - start, MADV_PAGEOUT) != 0) {
            state->error = errno;
            return 1;
        }
        state->advised += end - start;
    }
    return 1;
}

int cresident_release_executable_pages(size_t *advised) {
    struct release_state state = {0, 0, 0};
    dl_iterate_phdr(release_segments, &state);
    if (advised) *advised = state.advised;
    if (state.error) return state.error;
    return state.seen_program && state.advised > 0 ? 0 : ENOENT;
}
