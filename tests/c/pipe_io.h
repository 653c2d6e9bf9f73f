/* Whole-buffer pipe I/O for the fork tests' parent and child (tests/c). */
#ifndef ARC4PY_TESTS_PIPE_IO_H
#define ARC4PY_TESTS_PIPE_IO_H

#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

/* 0 once all n bytes are written, -1 on an error or a closed pipe. */
static inline int write_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;

    while (n) {
        ssize_t w = write(fd, b, n);
        if (w <= 0)
            return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

/* 0 once all n bytes are read, -1 on an error or an early end. */
static inline int read_all(int fd, void *p, size_t n)
{
    uint8_t *b = p;

    while (n) {
        ssize_t r = read(fd, b, n);
        if (r <= 0)
            return -1;
        b += r;
        n -= (size_t)r;
    }
    return 0;
}

#endif
