#include "include/CProcessArguments.h"
#include <stddef.h>

static int captured_count;
static char *const *captured_arguments;

/* glibc calls .init_array functions with (argc, argv, envp). */
static void capture(int argc, char **argv, char **envp) {
    (void)envp;
    captured_count = argc;
    captured_arguments = argv;
}
__attribute__((section(".init_array"), used)) static void (*const capture_entry)(int, char **, char **) = capture;

char *const *cprocess_arguments(int *count) {
    *count = captured_arguments == NULL ? 0 : captured_count;
    return captured_arguments;
}
