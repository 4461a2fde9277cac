/* A driver for fuzz_api.c without libFuzzer: replays files, or feeds PRNG inputs for a
 * number of runs or seconds. For gcc builds (the AVX-512 emulation under ASan) and foreign
 * architectures under qemu-user, where clang's libFuzzer runtime is not at hand; it has no
 * coverage feedback, so it finds less per input than libFuzzer does.
 *
 *   fuzz-api-standalone [-runs=N] [-max_total_time=S] [-seed=N] [-max_len=N] [FILE...]
 *
 * The flags are libFuzzer's spelling so one command line drives either build. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../testutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int replay(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    uint8_t *data = NULL;
    size_t size = 0, cap = 0;
    for (;;) {
        if (size == cap) {
            cap = cap ? 2 * cap : 4096;
            uint8_t *grown = realloc(data, cap);
            if (!grown) {
                fprintf(stderr, "out of memory\n");
                return 1;
            }
            data = grown;
        }
        size_t got = fread(data + size, 1, cap - size, f);
        if (got == 0)
            break;
        size += got;
    }
    fclose(f);
    fprintf(stderr, "fuzz-api: replaying %s (%zu bytes)\n", path, size);
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 0;
}

int main(int argc, char **argv)
{
    unsigned long long runs = 0, seed = 1;
    double seconds = 0;
    size_t max_len = 512;
    int files = 0;
    LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "-runs=", 6) == 0)
            runs = strtoull(argv[i] + 6, NULL, 0);
        else if (strncmp(argv[i], "-max_total_time=", 16) == 0)
            seconds = strtod(argv[i] + 16, NULL);
        else if (strncmp(argv[i], "-seed=", 6) == 0)
            seed = strtoull(argv[i] + 6, NULL, 0);
        else if (strncmp(argv[i], "-max_len=", 9) == 0)
            max_len = (size_t)strtoull(argv[i] + 9, NULL, 0);
        else if (argv[i][0] == '-') {
            fprintf(stderr, "fuzz-api: unknown flag %s\n", argv[i]);
            return 2;
        } else {
            if (replay(argv[i]))
                return 1;
            files++;
        }
    }
    if (files && !runs && !seconds)
        return 0;
    if (!runs && !seconds)
        runs = 10000;

    uint8_t *input = malloc(max_len ? max_len : 1);
    if (!input)
        return 1;
    uint64_t state = seed;
    double start = now();
    unsigned long long done = 0;
    while ((!runs || done < runs) && (!seconds || now() - start < seconds)) {
        size_t size = (size_t)(splitmix64(&state) % (max_len + 1));
        splitmix64_fill(&state, input, size);
        LLVMFuzzerTestOneInput(input, size);
        done++;
    }
    double took = now() - start;
    /* The closing line is libFuzzer's, so one parser reads both. */
    printf("Done %llu runs in %.0f second(s)\n", done, took);
    free(input);
    return 0;
}
