/* What the libFuzzer harnesses share (each is its own program). */
#ifndef TESTS_FUZZ_FUZZ_H
#define TESTS_FUZZ_FUZZ_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/support/fakemem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An invariant of the code under test: abort, which libFuzzer reports
 * with the input (and replay_main with the file). */
#define CHECK(c)                                                          \
	do {                                                              \
		if (!(c)) {                                               \
			fprintf(stderr, "%s:%d: check failed: %s\n",     \
				__FILE__, __LINE__, #c);                  \
			abort();                                          \
		}                                                         \
	} while (0)

/* One fake guest RAM for the whole process, made on first use: inputs
 * are many and short, mapping it per input would dominate. */
static inline struct fakemem *fz_mem_once(uint64_t gpa, size_t size)
{
	static struct fakemem fm;
	static bool ready;

	if (!ready) {
		if (fakemem_create(&fm, gpa, size))
			abort();
		ready = true;
	}
	return &fm;
}

#endif
