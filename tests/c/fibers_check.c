/*
 * Windows fibers and the generator's per-thread state: the state belongs to
 * the OS thread whatever fiber made it.  Windows only: built from arc4py's
 * C sources and run under Wine by tests/platforms/test_platforms.py.  A check a line, then the verdict
 * (tests/c/verdict.h):
 *
 *   plain      a plain thread's state pages are released at its exit
 *   on fiber   a thread whose state was first made on a fiber it created
 *              (not deleted) exits: its state pages are released all the same
 *   deleted    another thread deletes the fiber that made a thread's state
 *              while that thread lives: the state stays committed, and the
 *              thread's next draw works and differs from its first
 *   converted  a thread that draws, becomes a fiber, draws on a second fiber
 *              and turns back into a thread keeps one state, released at exit
 *
 * The state's address is read from rng_tls_state (rng_hot_path.h) and
 * looked up with VirtualQuery after the thread's handle is signalled (every
 * thread-exit callback has run by then); freed pages are never read.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifndef _WIN32
#error "fibers_check.c: fibers are Windows'"
#endif

#define WIN32_LEAN_AND_MEAN 1
#include <windows.h>

#include "generator.h"
#include "rng_hot_path.h"
#include "verdict.h"

#define DRAW 32

struct job {
    void *state;               /* rng_tls_state after the first draw */
    uint8_t first[DRAW], second[DRAW];
    int err;                   /* a draw or fiber call failed: its step */
    int kept;                  /* state committed and still the thread's */
    int same_state;            /* converted: one state throughout */
    LPVOID primary, fiber;
    HANDLE ready, go;          /* deleted: fiber made; fiber deleted */
};

/* p is the base of a committed allocation (a live state). */
static int committed(void *p)
{
    MEMORY_BASIC_INFORMATION info;

    return VirtualQuery(p, &info, sizeof info) == sizeof info &&
           info.State == MEM_COMMIT && info.AllocationBase == p;
}

static void draw_first(struct job *j)
{
    if (arc4py_rng_buf(j->first, DRAW) != 0)
        j->err = 1;
    j->state = (void *)rng_tls_state;
}

static DWORD WINAPI plain_thread(LPVOID p)
{
    draw_first((struct job *)p);
    return 0;
}

/* The fiber's body: the thread's first draw, then back to the thread. */
static void WINAPI first_draw_fiber(LPVOID p)
{
    struct job *j = (struct job *)p;

    draw_first(j);
    SwitchToFiber(j->primary);
}

/* Becomes a fiber and makes its state on a second fiber; 0 or -1. */
static int draw_on_new_fiber(struct job *j)
{
    j->primary = ConvertThreadToFiber(NULL);
    if (j->primary == NULL)
        return -1;
    j->fiber = CreateFiber(0, first_draw_fiber, j);
    if (j->fiber == NULL)
        return -1;
    SwitchToFiber(j->fiber);
    return 0;
}

static DWORD WINAPI on_fiber_thread(LPVOID p)
{
    struct job *j = (struct job *)p;

    if (draw_on_new_fiber(j) != 0)
        j->err = 2;
    return 0; /* the fiber is left for the main thread to delete */
}

static DWORD WINAPI deleted_thread(LPVOID p)
{
    struct job *j = (struct job *)p;

    if (draw_on_new_fiber(j) != 0)
        j->err = 2;
    SetEvent(j->ready);
    WaitForSingleObject(j->go, INFINITE);
    j->kept = committed(j->state) && (void *)rng_tls_state == j->state;
    /* Only a kept state is drawn from: a freed one would fault. */
    if (j->kept && arc4py_rng_buf(j->second, DRAW) != 0)
        j->err = 3;
    return 0;
}

static DWORD WINAPI converted_thread(LPVOID p)
{
    struct job *j = (struct job *)p;
    void *before;

    draw_first(j);
    before = j->state;
    if (draw_on_new_fiber(j) != 0) {
        j->err = 2;
        return 0;
    }
    DeleteFiber(j->fiber);
    if (!ConvertFiberToThread()) {
        j->err = 4;
        return 0;
    }
    if (arc4py_rng_buf(j->second, DRAW) != 0)
        j->err = 3;
    j->same_state = j->state == before && (void *)rng_tls_state == before &&
                    committed(before);
    return 0;
}

/* Runs fn on a new thread and waits for the thread to end; 0 or -1. */
static int run_thread(LPTHREAD_START_ROUTINE fn, struct job *j)
{
    HANDLE h = CreateThread(NULL, 0, fn, j, 0, NULL);

    if (h == NULL)
        return -1;
    WaitForSingleObject(h, INFINITE);
    CloseHandle(h);
    return 0;
}

static void check_released(const char *what, int started, struct job *j)
{
    int live = started && j->state != NULL && committed(j->state);

    if (!started || j->err || j->state == NULL)
        verdict_detail("thread started %d, failed step %d, state %p", started,
                       j->err, j->state);
    if (live)
        verdict_detail("the state at %p is still committed", j->state);
    verdict_check(started && !j->err && j->state != NULL && !live,
                  "%s: the state pages are released at the thread's exit", what);
}

int main(void)
{
    struct job plain = {0}, on_fiber = {0}, deleted = {0}, converted = {0};
    const char *source, *lock, *exit_wipe;
    HANDLE h;
    int started;

    started = run_thread(plain_thread, &plain) == 0;
    check_released("plain thread", started, &plain);

    started = run_thread(on_fiber_thread, &on_fiber) == 0;
    check_released("state made on a fiber", started, &on_fiber);
    if (on_fiber.fiber != NULL)
        DeleteFiber(on_fiber.fiber);

    deleted.ready = CreateEventW(NULL, TRUE, FALSE, NULL);
    deleted.go = CreateEventW(NULL, TRUE, FALSE, NULL);
    h = deleted.ready && deleted.go
            ? CreateThread(NULL, 0, deleted_thread, &deleted, 0, NULL) : NULL;
    if (h != NULL) {
        WaitForSingleObject(deleted.ready, INFINITE);
        if (deleted.fiber != NULL)
            DeleteFiber(deleted.fiber);
        SetEvent(deleted.go);
        WaitForSingleObject(h, INFINITE);
        CloseHandle(h);
    }
    if (!deleted.kept)
        verdict_detail("the state at %p was freed while its thread lived",
                       deleted.state);
    verdict_check(h != NULL && !deleted.err && deleted.kept &&
                      first_diff(deleted.first, deleted.second, DRAW) != DRAW,
                  "fiber deleted by another thread: the state stays, the "
                  "thread's next draw differs from its first");
    check_released("fiber deleted by another thread", h != NULL, &deleted);

    started = run_thread(converted_thread, &converted) == 0;
    verdict_check(started && !converted.err && converted.same_state &&
                      first_diff(converted.first, converted.second, DRAW) != DRAW,
                  "thread to fiber and back: one state, its draws differ");
    check_released("thread to fiber and back", started, &converted);

    if (arc4py_rng_os_facts(&source, &lock, &exit_wipe) != 0)
        exit_wipe = "?";
    return verdict_end("\"state_exit_wipe\": \"%s\"", exit_wipe);
}
