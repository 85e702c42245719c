/* fio's JSON output (--output-format=json, one job: --group_reporting),
 * read with json-c: the figures devbench takes from it.
 *
 * fiojson_read() parses text from its first line that starts with '{'
 * on (fio may print notes before it), strictly (json-c's
 * JSON_TOKENER_STRICT: no trailing characters but whitespace, no
 * comments), and takes job 0's read or write section:
 *
 *	jobs[0].read.iops, .total_ios, .lat_ns.mean,
 *	.lat_ns.percentile["50.000000"], ["99.000000"]
 *	jobs[0].usr_cpu, .sys_cpu, .job_runtime
 */
#ifndef BENCH_FIOJSON_H
#define BENCH_FIOJSON_H

#include <stdbool.h>
#include <stddef.h>

struct fiojson {
	double iops, total_ios;    /* of the section */
	double mean_ns, p50_ns, p99_ns; /* its total latency (lat_ns) */
	double usr_cpu, sys_cpu;   /* the job's, in % of job_runtime */
	double job_runtime_ms;     /* summed over its threads */
};

struct fiojson_error {
	size_t offset;   /* where in text */
	const char *msg; /* json-c's reason (static); NULL if text parsed */
};

/* 0 and *out: each figure that fio wrote as a number, NAN for one it did
 * not write (or wrote as something else).  -EINVAL: no line starts with
 * '{'; the JSON does not parse (then *err says where and why); job 0
 * has no such section, or the section no lat_ns.percentile object; or
 * its iops or 99th percentile is not a number.  -ENOMEM.  On failure
 * *out holds nothing to use. */
int fiojson_read(const char *text, bool write, struct fiojson *out,
		 struct fiojson_error *err);

#endif
