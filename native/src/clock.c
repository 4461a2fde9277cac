/* Core clock estimate: CLOCK_MONOTONIC around a long chain of dependent single-cycle adds.
 *
 * Benchmarks report cycles per byte, which needs the clock the core actually
 * runs at while it works. The x86 TSC is no use for that: on current CPUs it
 * ticks at a fixed nominal rate (invariant TSC) however far turbo raises or a
 * power cap lowers the core clock, so it is off by tens of percent. arm64's
 * CNTVCT_EL0, POWER's timebase and the s390x TOD clock are fixed-rate as well.
 *
 * A chain of register-to-register adds, each consuming the previous result, is
 * latency-bound: however wide the core, it retires one add per cycle. That is
 * the single assumption here (a dependent integer add takes one cycle), checked
 * on amd64 where the chain runs exactly three times as fast as a chain of
 * 3-cycle imuls. Register-register rather than add-immediate, because recent
 * Intel cores fold small immediates at rename and run `add reg, 1` chains faster
 * than one per cycle. On a core whose dependent add takes longer, the result is
 * that fraction of the clock. The arm64, ppc64le and s390x paths have only run
 * under qemu, where they measure the emulator, not a CPU. */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <time.h>

#include "archcrypt.h"

#define ADDS_PER_BLOCK 100

#define REP10(s) s s s s s s s s s s
#define REP100(s) REP10(REP10(s))

/* One block: ADDS_PER_BLOCK adds, each consuming the previous result. */
#if defined(__x86_64__)
#define ADD_BLOCK(acc, one) \
    __asm__ volatile(REP100("add %[o], %[a]\n\t") : [a] "+r"(acc) : [o] "r"(one) : "cc")
#elif defined(__aarch64__)
#define ADD_BLOCK(acc, one) \
    __asm__ volatile(REP100("add %[a], %[a], %[o]\n\t") : [a] "+r"(acc) : [o] "r"(one))
#elif defined(__powerpc64__)
#define ADD_BLOCK(acc, one) \
    __asm__ volatile(REP100("add %[a], %[a], %[o]\n\t") : [a] "+r"(acc) : [o] "r"(one))
#elif defined(__s390x__)
#define ADD_BLOCK(acc, one) \
    __asm__ volatile(REP100("agr %[a], %[o]\n\t") : [a] "+d"(acc) : [o] "d"(one) : "cc")
#elif defined(__GNUC__)
/* Approximate: the empty asm after each add keeps the chain from being folded,
 * but the compiler still chooses the instructions. */
#define ADD_BLOCK(acc, one) \
    do { REP100(acc += one; __asm__ volatile("" : "+r"(acc));) } while (0)
#else
/* A rough lower bound: every step is a round trip through memory, several
 * cycles rather than one. */
static volatile uint64_t chain_mem;
#define ADD_BLOCK(acc, one) \
    do { REP100(chain_mem = acc + one; acc = chain_mem;) } while (0)
#endif

/* Runs blocks * ADDS_PER_BLOCK dependent adds. The loop's own counter and
 * branch form an independent chain that overlaps the adds, so the adds alone
 * set the pace. */
static uint64_t add_chain(uint64_t blocks)
{
    uint64_t acc = 0, one = 1;

#if defined(__GNUC__)
    /* Hide the value of `one`: the fallback must add a register, not fold an
     * immediate (see the top of the file). */
    __asm__ volatile("" : "+r"(one));
#endif
    for (; blocks > 0; blocks--)
        ADD_BLOCK(acc, one);
    return acc;
}

static int now(double *t)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return -1;
    *t = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    return 0;
}

/* Keeps the chain's result observable, so no compiler can drop the work. */
static volatile uint64_t chain_sink;

/* Seconds for one timed run of `blocks`, or a negative value when the clock fails. */
static double timed_run(uint64_t blocks)
{
    double t0, t1;

    if (now(&t0) != 0)
        return -1.0;
    chain_sink = add_chain(blocks);
    if (now(&t1) != 0)
        return -1.0;
    return t1 - t0;
}

/* Returns Hz, or 0 when no monotonic clock is available. `seconds` below 0.01
 * (or NaN) means 0.01; above 60 means 60.
 *
 * The first runs double in length until one takes a twentieth of the budget or
 * a millisecond, whichever is less; they also serve as warm-up, letting the
 * governor raise the clock before the runs that count. Runs of that length
 * then repeat until the budget is spent, and the fastest wins: an interrupt,
 * preemption or a stolen vCPU can only make a run slower, never faster, so the
 * maximum is the least disturbed sample (and at least eight runs count, however
 * long a preempted one took). Runs are kept short because on a busy
 * machine every long run is shared with someone, while some short ones fit
 * inside a scheduler time slice; a millisecond is still ten thousand times the
 * cost of reading the clock. */
double archcrypt_core_hz(double seconds)
{
    const double min_seconds = 0.01, max_seconds = 60.0;
    double start, t, run_target, best = 0.0;
    uint64_t blocks = 64;

    if (!(seconds >= min_seconds))
        seconds = min_seconds;
    if (seconds > max_seconds)
        seconds = max_seconds;
    run_target = seconds / 20.0 < 1e-3 ? seconds / 20.0 : 1e-3;
    if (now(&start) != 0)
        return 0.0;

    for (;;) {
        t = timed_run(blocks);
        if (t < 0.0)
            return 0.0;
        if (t >= run_target)
            break;
        blocks *= 2;
    }
    best = (double)blocks * ADDS_PER_BLOCK / t;

    /* At least a few runs whatever the budget: a calibration run that was preempted
     * can alone outlast the budget, and must not become the answer. */
    for (int runs = 0;; runs++) {
        double elapsed;

        if (now(&elapsed) != 0)
            return 0.0;
        elapsed -= start;
        if (runs >= 8 && elapsed + t > seconds)
            break;
        t = timed_run(blocks);
        if (t <= 0.0)
            break;
        if ((double)blocks * ADDS_PER_BLOCK / t > best)
            best = (double)blocks * ADDS_PER_BLOCK / t;
    }
    return best;
}
