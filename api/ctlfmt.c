/* `vmm ctl`'s formatting that needs no socket: --every's interval and
 * the rates it prints (api/ctlfmt.h). */
#include "api/ctlfmt.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host/json.h"

/* --every: INTERVAL as "1s", "500ms" or seconds ("0.5"). */
int ctl_parse_interval(const char *s, uint64_t *ns)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s)
		return -1;
	if (!strcmp(end, "ms"))
		v /= 1e3;
	else if (*end && strcmp(end, "s"))
		return -1;
	if (!(v >= 0.01 && v <= 86400)) /* NaN too */
		return -1;
	*ns = (uint64_t)(v * 1e9);
	return 0;
}

/* One line per disk: rates over the interval since the last sample.
 * reset: each sample counts from the one before (stats --reset), so
 * cur alone is the interval's. */
void ctl_print_rates(FILE *out, struct json_object *prev,
		     struct json_object *cur, double secs, bool reset)
{
	struct json_object *pd, *cd;
	char when[16];
	time_t now = time(NULL);

	strftime(when, sizeof(when), "%H:%M:%S", localtime(&now));
	if (!json_object_object_get_ex(prev, "disks", &pd) ||
	    !json_object_object_get_ex(cur, "disks", &cd))
		return;
	for (size_t i = 0; i < json_object_array_length(cd) &&
			   i < json_object_array_length(pd); i++) {
		struct json_object *p, *c, *qs;
		uint64_t lat_p99 = 0;

		json_object_object_get_ex(json_object_array_get_idx(pd, i),
					  "total", &p);
		json_object_object_get_ex(json_object_array_get_idx(cd, i),
					  "total", &c);
		if (json_object_object_get_ex(json_object_array_get_idx(cd, i),
					      "queues", &qs)) {
			for (size_t q = 0; q < json_object_array_length(qs); q++) {
				struct json_object *l, *h;

				if (json_object_object_get_ex(
					    json_object_array_get_idx(qs, q),
					    "latency", &l) && l &&
				    json_object_object_get_ex(l,
					    "submit_to_complete", &h) &&
				    json_get_u64(h, "p99") > lat_p99)
					lat_p99 = json_get_u64(h, "p99");
			}
		}
#define RATE(k) ((double)(json_get_u64(c, k) - (reset ? 0 : json_get_u64(p, k))) / secs)
		fprintf(out, "%s %s  reads/s %.0f  writes/s %.0f  read MiB/s %.2f  "
		       "write MiB/s %.2f  in flight %llu  interrupts/s %.0f",
		       when,
		       json_get_str(json_object_array_get_idx(cd, i), "name"),
		       RATE("reads"), RATE("writes"),
		       RATE("bytes_read") / 1048576.0,
		       RATE("bytes_written") / 1048576.0,
		       (unsigned long long)json_get_u64(c, "inflight"),
		       RATE("interrupts"));
#undef RATE
		if (lat_p99)
			fprintf(out, "  backend p99 %.1fus (since %s)",
				(double)lat_p99 / 1e3,
				reset ? "the last sample" : "start");
		fputc('\n', out);
	}
	fflush(out);
}
