/* A blk_dev as a virtio device type: the struct vdev_ops that the
 * transport (virtio/pci) drives.  impl is the struct blk_dev itself.
 */
#ifndef BLK_BLK_VDEV_H
#define BLK_BLK_VDEV_H

#include "virtio/vdev.h"

extern const struct vdev_ops blk_vdev_ops;

#endif
