/* Fuzz the -d disk spec and the size and rate parsers (blk/opts.c):
 * whatever the bytes, 0 with values in range or -EINVAL with one line
 * in msg; never a read past the string.
 *
 * Input: a selector byte, then the text (NUL bytes end it early, as a
 * command line would).  selector % 4: 0 blk_opts_parse, 1
 * blk_parse_size, 2 blk_parse_rate, 3 blk_limit_set with the name
 * before the first '=' (iops, bw, burst or anything).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blk/blk.h"
#include "tests/fuzz/fuzz.h"

static void fz_spec(char *s)
{
	struct blk_opts o;
	char msg[256];
	int r;

	memset(&o, 0, sizeof(o));
	memset(msg, 0, sizeof(msg));
	r = blk_opts_parse(s, &o, msg, sizeof(msg));
	CHECK(r == 0 || r == -EINVAL);
	if (r) {
		CHECK(msg[0] && strlen(msg) < sizeof(msg));
		return;
	}
	CHECK(o.path || o.ram_size);
	CHECK(o.queues <= BLK_MAX_QUEUES);
	CHECK(o.poll_us <= BLK_POLL_US_MAX);
	CHECK(o.burst_ms <= BLK_BURST_MS_MAX);
	CHECK(o.iops <= BLK_IOPS_MAX);
	CHECK(strlen(o.serial) <= BLK_ID_BYTES);
	if (o.path)
		CHECK(*o.path && o.path >= s && o.path < s + strlen(s) + 1);
}

static void fz_limit(char *s)
{
	struct blk_limit l = { 0 };
	char *eq = strchr(s, '=');
	int r;

	if (!eq)
		return;
	*eq = 0;
	r = blk_limit_set(&l, s, eq + 1);
	CHECK(r == 0 || r == -EINVAL);
	if (!r) {
		CHECK(l.iops <= BLK_IOPS_MAX);
		CHECK(l.burst_ms <= BLK_BURST_MS_MAX);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t v = 0;
	char *s;
	int r;

	if (size < 1 || size > 4096)
		return 0;
	/* An exact-size copy: ASan sees a read past its end. */
	s = malloc(size);
	if (!s)
		abort();
	memcpy(s, data + 1, size - 1);
	s[size - 1] = 0;
	switch (data[0] % 4) {
	case 0:
		fz_spec(s);
		break;
	case 1:
		r = blk_parse_size(s, &v);
		CHECK(r == 0 || r == -EINVAL);
		break;
	case 2:
		r = blk_parse_rate(s, &v);
		CHECK(r == 0 || r == -EINVAL);
		break;
	default:
		fz_limit(s);
		break;
	}
	free(s);
	return 0;
}
