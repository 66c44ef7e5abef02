/*
 * registry/peek.c - reading a module's memory without trusting it.
 *
 * What a module hands over (its descriptor, its array of creators, each
 * creator, field schemas, strings) is data the host did not write: a
 * descriptor may claim more creators than its array holds, a pointer may
 * lead nowhere (issue 15).  Before the host uses such a pointer it copies
 * what it will read with process_vm_readv on its own process, which fails
 * with EFAULT where a plain read would fault, and which the sanitizers do
 * not watch on the module's side: an array read past its end yields an
 * error or garbage that the checks refuse, never a crash.  Where the
 * system refuses process_vm_readv (seccomp), the copy is a plain memcpy
 * and the crash-isolating scanner (registry/scan.c) is the only guard.
 */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "registry.h"

/* 1 while process_vm_readv works here, 0 once it was refused. */
static int use_syscall = 1;

int mica__peek(void *dst, const void *src, size_t n)
{
    struct iovec local, remote;
    ssize_t got;

    if (n == 0)
        return 0;
    if (!src || (uintptr_t)src + n < (uintptr_t)src)
        return -1;
    if (use_syscall) {
        local.iov_base = dst;
        local.iov_len = n;
        remote.iov_base = (void *)(uintptr_t)src;
        remote.iov_len = n;
        got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
        if (got == (ssize_t)n)
            return 0;
        if (got >= 0 || errno == EFAULT)
            return -1;
        use_syscall = 0; /* ENOSYS, EPERM: not available here */
    }
    memcpy(dst, src, n);
    return 0;
}

int mica__peek_str(const char *s, char *buf, size_t len)
{
    size_t n = 0;

    if (!s || len == 0)
        return -1;
    /* page by page: a string that ends before an unmapped page is fine */
    while (n < len) {
        size_t page = 4096 - ((uintptr_t)(s + n) & 4095);
        size_t chunk = page < len - n ? page : len - n;
        if (mica__peek(buf + n, s + n, chunk) != 0)
            return -1;
        if (memchr(buf + n, '\0', chunk))
            return 0;
        n += chunk;
    }
    buf[len - 1] = '\0';
    return -1;
}
