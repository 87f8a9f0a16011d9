/* LD_PRELOAD shim for the kernel suite: socket(AF_INET6, ...) fails with EAFNOSUPPORT, as on a kernel booted with
   ipv6.disable=1. Built on the host by scripts/kernel-suite (tools/no_ipv6_socket.so). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sys/socket.h>
int socket(int domain, int type, int protocol) {
    static int (*real)(int, int, int);
    if (!real) real = dlsym(RTLD_NEXT, "socket");
    if (domain == AF_INET6) { errno = EAFNOSUPPORT; return -1; }
    return real(domain, type, protocol);
}
