/* Adapter: struct vdev_ops over a struct blk_dev. */
#include "blk/blk_vdev.h"

#include <errno.h>
#include <linux/virtio_ids.h>
#include <string.h>

#include "blk/blk.h"

static uint64_t bv_features(void *impl)
{
	return blk_dev_features(impl);
}

static unsigned int bv_num_queues(void *impl)
{
	return blk_dev_num_queues(impl);
}

static uint16_t bv_queue_max_size(void *impl)
{
	(void)impl;
	return BLK_QUEUE_SIZE;
}

static uint32_t bv_config_size(void *impl)
{
	(void)impl;
	return sizeof(struct virtio_blk_config);
}

static void bv_config_read(void *impl, uint32_t off, void *buf, uint32_t len)
{
	struct virtio_blk_config cfg;

	memset(buf, 0, len);
	if (off > sizeof(cfg) || len > sizeof(cfg) - off)
		return;
	memset(&cfg, 0, sizeof(cfg));
	blk_dev_config(impl, &cfg);
	memcpy(buf, (const uint8_t *)&cfg + off, len);
}

/* No writable config field is offered (no CONFIG_WCE): writes are
 * dropped. */
static void bv_config_write(void *impl, uint32_t off, const void *buf,
			    uint32_t len)
{
	(void)impl;
	(void)off;
	(void)buf;
	(void)len;
}

static int bv_start(void *impl, const struct gmem *m, uint64_t features,
		    const struct vdev_queue *q, unsigned int nq)
{
	struct blk_queue_cfg qc[BLK_MAX_QUEUES];

	if (!nq || nq > BLK_MAX_QUEUES)
		return -EINVAL;
	for (unsigned int i = 0; i < nq; i++) {
		qc[i] = (struct blk_queue_cfg){
			.size = q[i].enabled ? q[i].size : 0, /* 0: not served */
			.desc = q[i].desc,
			.avail = q[i].driver,
			.used = q[i].device,
			.kick_fd = q[i].kick_fd,
			.call_fd = q[i].call_fd,
		};
	}
	return blk_dev_start(impl, m, features, qc, nq);
}

static void bv_stop(void *impl)
{
	blk_dev_stop(impl);
}

static void bv_pause(void *impl)
{
	blk_dev_pause(impl);
}

static int bv_resume(void *impl)
{
	return blk_dev_resume(impl);
}

const struct vdev_ops blk_vdev_ops = {
	.device_id = VIRTIO_ID_BLOCK,
	.features = bv_features,
	.num_queues = bv_num_queues,
	.queue_max_size = bv_queue_max_size,
	.config_size = bv_config_size,
	.config_read = bv_config_read,
	.config_write = bv_config_write,
	.start = bv_start,
	.stop = bv_stop,
	.pause = bv_pause,
	.resume = bv_resume,
};
