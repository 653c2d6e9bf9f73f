/*
 * How every C test program in tests/c reports, and the byte helpers they
 * share.  The tests read the report with helpers.c_verdict().
 *
 * The last line a program writes to stdout is its verdict, one JSON object:
 *
 *   {"verdict": "ok" | "fail" | "skip", "reason": "...", "passed": N,
 *    "failed": N, FACTS}
 *
 *   ok    every check held (reason is empty);
 *   fail  a check did not hold: reason is the first failure's message (each
 *         failure also has a line of its own above, "FAIL ...");
 *   skip  the run could check nothing (the event it waits for did not come,
 *         or what it needs is missing here): reason says why;
 *   FACTS the program's own counts and names ("nested": 5120, "core":
 *         "avx2"), which a test may hold to expected values.
 *
 * The exit status goes with it: 0 for ok and skip, 1 for fail.  A program
 * that cannot start its checks at all (a bad command line, no memory)
 * exits 2 without a verdict.  Lines above the verdict are free: "PASS ..."
 * or "FAIL ..." a check (verdict_check), details indented under a failure
 * (verdict_detail), "INFO ..." facts that are not checks.
 *
 * Sizes are printed with %lu and a cast: older Windows C runtimes (the
 * platform builds) do not know %zu.  Nothing here is thread-safe: a
 * program whose threads report serialises its calls.
 */
#ifndef ARC4PY_TESTS_VERDICT_H
#define ARC4PY_TESTS_VERDICT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#if defined(__GNUC__) || defined(__clang__)
#define VERDICT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define VERDICT_PRINTF(f, a)
#endif

#define LU(x) ((unsigned long)(x))

/* Failure lines printed in all: a broken core must not flood the log. */
#define VERDICT_MAX_FAIL_LINES 40

static unsigned long verdict_passed, verdict_failed;
static int verdict_details; /* detail lines under the current check */
static char verdict_reason[240];

/* An indented detail line under the check being made (at most 8 a check). */
static inline VERDICT_PRINTF(1, 2) void verdict_detail(const char *fmt, ...)
{
    va_list ap;

    if (verdict_details++ >= 8)
        return;
    fputs("    ", stdout);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
}

static inline void verdict_vcheck(int ok, const char *fmt, va_list ap)
{
    va_list copy;

    if (ok)
        verdict_passed++;
    else if (verdict_failed++ == 0) {
        va_copy(copy, ap);
        vsnprintf(verdict_reason, sizeof verdict_reason, fmt, copy);
        va_end(copy);
    }
    if (ok || verdict_failed <= VERDICT_MAX_FAIL_LINES) {
        fputs(ok ? "PASS " : "FAIL ", stdout);
        vprintf(fmt, ap);
        fputc('\n', stdout);
        fflush(stdout);
    }
    verdict_details = 0;
}

/* Record one check, a "PASS what" or "FAIL what" line: ok is nonzero when
 * it held. */
static inline VERDICT_PRINTF(2, 3) void verdict_check(int ok, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    verdict_vcheck(ok, fmt, ap);
    va_end(ap);
}

/* A check that did not hold, for programs that report only failures. */
static inline VERDICT_PRINTF(1, 2) void verdict_fail(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    verdict_vcheck(0, fmt, ap);
    va_end(ap);
}

/* s as a JSON string: quotes and backslashes escaped, controls dropped. */
static inline void verdict_put_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            putchar('\\');
        if ((unsigned char)*s >= 0x20)
            putchar(*s);
    }
    putchar('"');
}

static inline int verdict_vprint(const char *verdict, const char *reason,
                                 const char *facts_fmt, va_list ap)
{
    printf("{\"verdict\": \"%s\", \"reason\": ", verdict);
    verdict_put_string(reason);
    printf(", \"passed\": %lu, \"failed\": %lu", verdict_passed, verdict_failed);
    if (facts_fmt[0] != '\0') {
        fputs(", ", stdout);
        vprintf(facts_fmt, ap);
    }
    fputs("}\n", stdout);
    fflush(stdout);
    return verdict_failed == 0 ? 0 : 1;
}

/* Print the verdict, ok or fail from the checks made, with the facts
 * (printf's facts_fmt: JSON members without braces, or "") and return the
 * exit status: return verdict_end(...) from main. */
static inline VERDICT_PRINTF(1, 2) int verdict_end(const char *facts_fmt, ...)
{
    va_list ap;
    int status;

    va_start(ap, facts_fmt);
    status = verdict_vprint(verdict_failed == 0 ? "ok" : "fail",
                            verdict_failed == 0 ? "" : verdict_reason,
                            facts_fmt, ap);
    va_end(ap);
    return status;
}

/* Print a skip verdict (unless a check failed already: then fail) with
 * the reason and the facts; the exit status, as verdict_end. */
static inline VERDICT_PRINTF(2, 3) int verdict_skip(const char *reason,
                                                    const char *facts_fmt, ...)
{
    va_list ap;
    int status;

    va_start(ap, facts_fmt);
    status = verdict_vprint(verdict_failed == 0 ? "skip" : "fail",
                            verdict_failed == 0 ? reason : verdict_reason,
                            facts_fmt, ap);
    va_end(ap);
    return status;
}

/* ---- byte helpers -------------------------------------------------------- */

static inline int all_equal(const uint8_t *p, size_t n, uint8_t v)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

/* The first index where a and b differ, or n. */
static inline size_t first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (a[i] != b[i])
            return i;
    return n;
}

#endif
