/* Which requests a disk serves inside submit() (BLK_SUBMIT_DONE,
 * blk/backend.h), worked out here independently of blk/ so that tests can
 * check the backend against it. */
#ifndef TESTS_SYNCRW_H
#define TESTS_SYNCRW_H

#include <stdbool.h>

/* Reads and writes of the file at path: true on tmpfs (or ramfs) when the
 * kernel cannot read it without blocking (RWF_NOWAIT refused: tmpfs on
 * 6.18), as be_file.c's probe decides; false anywhere else, where they
 * go through io_uring. */
bool file_rw_in_submit(const char *path);

#endif
