/* virtio-blk requests: parse and check one popped chain (pure).
 *
 * Layout (virtio 1.2, 5.2.6): a 16-byte header (type, reserved, sector)
 * in the device-readable part, then data (readable for OUT, DISCARD,
 * WRITE_ZEROES; writable for IN, GET_ID), and the status byte as the
 * last device-writable byte.  Header and data may be split across
 * descriptors in any layout.
 */
#ifndef BLK_REQ_H
#define BLK_REQ_H

#include <linux/virtio_blk.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "virtio/virtq.h"

#define BLK_SECTOR_SHIFT 9
#define BLK_SECTOR_SIZE 512u
/* Data segments per request that we advertise (seg_max). */
#define BLK_SEG_MAX 254u
/* iovecs one request may need: header, data, status, and slack for a
 * descriptor that straddles two RAM regions. */
#define BLK_REQ_MAX_IOV (BLK_SEG_MAX + 8u)
#define BLK_ID_BYTES VIRTIO_BLK_ID_BYTES

/* What the request checker needs to know about the disk. */
struct blk_req_limits {
	uint64_t capacity; /* sectors */
	bool ro;
	bool discard;      /* VIRTIO_BLK_F_DISCARD negotiated */
	bool write_zeroes; /* VIRTIO_BLK_F_WRITE_ZEROES negotiated */
	uint32_t max_discard_sectors;
	uint32_t max_write_zeroes_sectors;
	char serial[BLK_ID_BYTES]; /* not NUL-terminated when 20 long */
};

/* The parsers set head to in_before_status; the rest is set by the
 * backend (transferred, result, err) and the iothread (t_*) before use. */
struct blk_req {
	uint16_t head;
	uint32_t type;      /* VIRTIO_BLK_T_* */
	uint64_t sector;    /* first sector (IN/OUT/DISCARD/WRITE_ZEROES) */
	uint64_t len;       /* bytes of data, or of the range to discard/zero */
	bool unmap;         /* WRITE_ZEROES with the unmap flag */
	struct iovec *iov;  /* data only: header and status trimmed off */
	unsigned int niov;
	uint8_t *status;    /* host address of the status byte */
	uint32_t used_len;  /* used.len on success: the written prefix */
	uint64_t in_before_status; /* writable bytes before the status */
	/* Backend scratch: bytes transferred so far (short I/O). */
	uint64_t transferred;
	uint8_t result;     /* VIRTIO_BLK_S_* set by the backend */
	int err;            /* with IOERR: the errno, or 0 for the end of
			     * the file (shrunk underneath us) */
	uint64_t t_submit;  /* lat_now() when handed to the backend */
	uint64_t t_reaped;  /* lat_now() when finished: reaped, or served
			     * inside submit() */
};

enum blk_parse {
	BLK_PARSE_SUBMIT,    /* valid: hand it to the backend */
	BLK_PARSE_ANSWERED,  /* answered here: status written, push it */
	BLK_PARSE_BAD_CHAIN, /* return the head with used.len = 0 */
};

/* Check one chain.  On BLK_PARSE_ANSWERED the status byte (and for GET_ID the
 * id) is already written and r->used_len set; the backend is not called. */
enum blk_parse blk_req_parse(const struct blk_req_limits *l,
			     struct virtq_elem *e, struct blk_req *r);

/* blk_req_parse() for the chain virtq_read_chain3() read into
 * iov[0..3), n_out of them readable: the header alone in iov[0], a
 * read's or write's data in iov[1], the status byte alone in iov[2].
 * true: r is what blk_req_parse() makes of that chain
 * (BLK_PARSE_SUBMIT; r->iov is &iov[1]).  false: any other request, or
 * one blk_req_parse() answers itself (out of range, read-only, ...): it
 * then decides.  Compared with it on random requests in
 * tests/unit/test_req.c. */
bool blk_req_parse3(const struct blk_req_limits *l, uint16_t head,
		    struct iovec iov[3], int n_out, struct blk_req *r);

/* Write the final status and return the used length to push. */
uint32_t blk_req_finish(struct blk_req *r, uint8_t status);

#endif
