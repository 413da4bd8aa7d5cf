#ifndef CPROCESS_ARGUMENTS_H
#define CPROCESS_ARGUMENTS_H
/* The process's argc and argv as the C library handed them to the program's initializers (an
 * .init_array function), so the command line is known without /proc (Swift's CommandLine reads
 * /proc/self/cmdline on Linux: in a chroot or container without /proc it is empty). */

/* The captured argv (NULL-terminated) and its count in `count`; NULL and 0 when not captured. */
char *const *cprocess_arguments(int *count);
#endif
