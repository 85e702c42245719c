/* `vmm ctl`'s formatting that needs no socket (vmm/ctl.c is the client):
 * in libcore.a so that it is unit-tested (tests/unit/test_ctl.c). */
#ifndef API_CTLFMT_H
#define API_CTLFMT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* --every: INTERVAL as "1s", "500ms" or seconds ("0.5"), 10 ms to a day,
 * into *ns.  0, or -1 if it is none of those (NaN too). */
int ctl_parse_interval(const char *s, uint64_t *ns);

/* One line per disk of two stats answers: rates over secs.  reset: each
 * sample counts from the one before (stats --reset), so cur alone is the
 * interval's. */
void ctl_print_rates(FILE *out, struct json_object *prev,
		     struct json_object *cur, double secs, bool reset);

#endif
