/* virtio/vdev.c: status state machine, feature negotiation (FEATURES_OK
 * refused for features not offered), queue registers checked once, and
 * reset stopping the device before status reads 0. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>

#include "virtio/pci.h"

#define RAM_SIZE (1u << 20)
#define QMAX 256
#define F_DEV (1ull << 1)   /* a device feature we offer */
#define F_OTHER (1ull << 2) /* one we do not */

struct fake {
	uint64_t features;
	unsigned int nq;
	int start_ret;
	int starts, stops;
	unsigned int started_nq;
	unsigned int started_enabled; /* bit i: queue i enabled at start */
	uint64_t started_features;
	bool running; /* start()ed and not stop()ped */
	int pauses, resumes;
	int config_irqs;
	void (*needs_reset)(void *opaque); /* as given at activation */
	void *reset_opaque;
};

struct ctx {
	struct fake f;
	struct gmem mem;
	uint8_t *ram;
	struct vdev v;
};

static uint64_t f_features(void *impl) { return ((struct fake *)impl)->features; }
static unsigned int f_nq(void *impl) { return ((struct fake *)impl)->nq; }
static uint16_t f_qmax(void *impl) { (void)impl; return QMAX; }

static int f_activate(void *impl, const struct vdev_activation *a)
{
	struct fake *f = impl;

	f->starts++;
	f->started_nq = a->nq;
	f->started_enabled = 0;
	for (unsigned int i = 0; i < a->nq; i++)
		f->started_enabled |= (unsigned int)a->q[i].enabled << i;
	f->started_features = a->features;
	f->needs_reset = a->needs_reset;
	f->reset_opaque = a->opaque;
	if (f->start_ret)
		return f->start_ret;
	f->running = true;
	return 0;
}

static void f_reset(void *impl)
{
	struct fake *f = impl;

	f->stops++;
	f->running = false;
}

static void f_pause(void *impl)
{
	struct fake *f = impl;

	f->pauses++;
	f->running = false;
}

static int f_resume(void *impl)
{
	struct fake *f = impl;

	f->resumes++;
	f->running = true;
	return 0;
}

static const struct vdev_ops fake_ops = {
	.device_id = 2,
	.features = f_features,
	.num_queues = f_nq,
	.queue_max_size = f_qmax,
	.activate = f_activate,
	.reset = f_reset,
	.pause = f_pause,
	.resume = f_resume,
};

static void on_config_irq(void *opaque)
{
	((struct fake *)opaque)->config_irqs++;
}

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	c->ram = calloc(1, RAM_SIZE);
	assert_int_equal(gmem_add(&c->mem, 0, RAM_SIZE, c->ram), 0);
	c->f.features = (1ull << VIRTIO_F_VERSION_1) | F_DEV |
			(1ull << VIRTIO_RING_F_EVENT_IDX) | (1ull << 40);
	c->f.nq = 2;
	assert_int_equal(vdev_init(&c->v, &fake_ops, &c->f, &c->mem,
				   on_config_irq, &c->f), 0);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	free(c->ram);
	free(c);
	return 0;
}

static void set_features(struct vdev *v, uint64_t f)
{
	v->gfselect = 0;
	vdev_set_driver_features(v, (uint32_t)f);
	v->gfselect = 1;
	vdev_set_driver_features(v, (uint32_t)(f >> 32));
}

static void setup_queue(struct vdev *v, unsigned int i, uint64_t base)
{
	v->queue_select = (uint16_t)i;
	vdev_queue_set_size(v, 128);
	vdev_queue_set_addr(v, 0, false, (uint32_t)base);
	vdev_queue_set_addr(v, 1, false, (uint32_t)(base + 0x1000));
	vdev_queue_set_addr(v, 2, false, (uint32_t)(base + 0x2000));
	vdev_queue_enable(v);
}

static uint8_t negotiate(struct vdev *v, uint64_t f)
{
	vdev_set_status(v, VIRTIO_CONFIG_S_ACKNOWLEDGE);
	vdev_set_status(v, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	set_features(v, f);
	return vdev_set_status(v, VIRTIO_CONFIG_S_ACKNOWLEDGE |
				       VIRTIO_CONFIG_S_DRIVER |
				       VIRTIO_CONFIG_S_FEATURES_OK);
}

#define S_FOK (VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER | \
	       VIRTIO_CONFIG_S_FEATURES_OK)

static void test_offered_features_filtered(void **state)
{
	struct ctx *c = *state;

	/* bit 40 (a transport feature we do not implement) is not offered */
	assert_false(c->v.offered & (1ull << 40));
	assert_true(c->v.offered & F_DEV);
	c->v.dfselect = 0;
	assert_int_equal(vdev_get_device_features(&c->v), (uint32_t)c->v.offered);
	c->v.dfselect = 1;
	assert_int_equal(vdev_get_device_features(&c->v), 1); /* VERSION_1 */
	c->v.dfselect = 2;
	assert_int_equal(vdev_get_device_features(&c->v), 0);
}

static void test_features_ok_accepted(void **state)
{
	struct ctx *c = *state;
	uint64_t f = (1ull << VIRTIO_F_VERSION_1) | F_DEV;

	assert_int_equal(negotiate(&c->v, f), S_FOK);
	c->v.gfselect = 0;
	assert_int_equal(vdev_get_driver_features(&c->v), (uint32_t)f);
}

static void test_features_ok_refused_unoffered(void **state)
{
	struct ctx *c = *state;
	uint64_t f = (1ull << VIRTIO_F_VERSION_1) | F_DEV | F_OTHER;

	assert_int_equal(negotiate(&c->v, f) & VIRTIO_CONFIG_S_FEATURES_OK, 0);
	assert_int_equal(vdev_get_status(&c->v),
			 VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
}

static void test_features_ok_refused_transport_bit(void **state)
{
	struct ctx *c = *state;
	uint64_t f = (1ull << VIRTIO_F_VERSION_1) | (1ull << 40);

	assert_int_equal(negotiate(&c->v, f) & VIRTIO_CONFIG_S_FEATURES_OK, 0);
}

static void test_features_ok_needs_version_1(void **state)
{
	struct ctx *c = *state;

	assert_int_equal(negotiate(&c->v, F_DEV) & VIRTIO_CONFIG_S_FEATURES_OK,
			 0);
}

static void test_features_frozen_after_ok(void **state)
{
	struct ctx *c = *state;
	uint64_t f = (1ull << VIRTIO_F_VERSION_1);

	assert_int_equal(negotiate(&c->v, f), S_FOK);
	c->v.gfselect = 0;
	vdev_set_driver_features(&c->v, 0xffffffff);
	assert_int_equal(c->v.driver_features, f);
}

static void test_driver_ok_starts_with_queues(void **state)
{
	struct ctx *c = *state;
	uint64_t f = (1ull << VIRTIO_F_VERSION_1) | F_DEV;

	assert_int_equal(negotiate(&c->v, f), S_FOK);
	setup_queue(&c->v, 0, 0x10000);
	setup_queue(&c->v, 1, 0x20000);
	assert_true(c->v.q[0].enabled && c->v.q[1].enabled);
	assert_int_equal(vdev_set_status(&c->v, S_FOK | VIRTIO_CONFIG_S_DRIVER_OK),
			 S_FOK | VIRTIO_CONFIG_S_DRIVER_OK);
	assert_int_equal(c->f.starts, 1);
	assert_int_equal(c->f.started_nq, 2);
	assert_int_equal(c->f.started_enabled, 3);
	assert_int_equal(c->f.started_features, f);
	/* queue registers are frozen now */
	c->v.queue_select = 0;
	vdev_queue_set_size(&c->v, 64);
	assert_int_equal(c->v.q[0].size, 128);
	/* What activation gave the device asks for a reset: the status
	 * bit and one config interrupt, however often it is asked. */
	assert_non_null(c->f.needs_reset);
	c->f.needs_reset(c->f.reset_opaque);
	c->f.needs_reset(c->f.reset_opaque);
	assert_true(vdev_get_status(&c->v) & VIRTIO_CONFIG_S_NEEDS_RESET);
	assert_int_equal(c->f.config_irqs, 1);
}

/* DMA off (PCI bus mastering): DRIVER_OK waits for it; turning it off
 * pauses a running device, on resumes it; a reset while paused stops. */
static void test_dma_gates_the_device(void **state)
{
	struct ctx *c = *state;
	uint64_t f = (1ull << VIRTIO_F_VERSION_1) | F_DEV;

	vdev_set_dma(&c->v, false);
	assert_int_equal(negotiate(&c->v, f), S_FOK);
	setup_queue(&c->v, 0, 0x10000);
	vdev_set_status(&c->v, S_FOK | VIRTIO_CONFIG_S_DRIVER_OK);
	assert_int_equal(c->f.starts, 0); /* not while DMA is off */
	vdev_set_dma(&c->v, true);
	assert_int_equal(c->f.starts, 1);
	assert_true(c->f.running);
	vdev_set_dma(&c->v, true); /* no change, nothing happens */
	vdev_set_dma(&c->v, false);
	assert_int_equal(c->f.pauses, 1);
	assert_false(c->f.running);
	vdev_set_dma(&c->v, true);
	assert_int_equal(c->f.resumes, 1);
	assert_int_equal(c->f.starts, 1);
	vdev_set_dma(&c->v, false);
	vdev_set_status(&c->v, 0);
	assert_int_equal(c->f.stops, 1);
	assert_int_equal(vdev_get_status(&c->v), 0);
}

/* A driver may enable any subset of the queues: here only the second. */
static void test_driver_ok_with_a_subset(void **state)
{
	struct ctx *c = *state;
	uint64_t f = (1ull << VIRTIO_F_VERSION_1) | F_DEV;

	assert_int_equal(negotiate(&c->v, f), S_FOK);
	setup_queue(&c->v, 1, 0x20000);
	assert_int_equal(vdev_set_status(&c->v, S_FOK | VIRTIO_CONFIG_S_DRIVER_OK),
			 S_FOK | VIRTIO_CONFIG_S_DRIVER_OK);
	assert_int_equal(c->f.starts, 1);
	assert_int_equal(c->f.started_nq, 2);
	assert_int_equal(c->f.started_enabled, 2);
	assert_false(vdev_get_status(&c->v) & VIRTIO_CONFIG_S_NEEDS_RESET);
}

static void test_driver_ok_without_features_ok(void **state)
{
	struct ctx *c = *state;
	uint8_t st = VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER;

	vdev_set_status(&c->v, st);
	assert_int_equal(vdev_set_status(&c->v, st | VIRTIO_CONFIG_S_DRIVER_OK),
			 st);
	assert_int_equal(c->f.starts, 0);
}

static void test_start_failure_needs_reset(void **state)
{
	struct ctx *c = *state;

	c->f.start_ret = -ENOMEM;
	negotiate(&c->v, 1ull << VIRTIO_F_VERSION_1);
	setup_queue(&c->v, 0, 0x10000);
	vdev_set_status(&c->v, S_FOK | VIRTIO_CONFIG_S_DRIVER_OK);
	assert_true(vdev_get_status(&c->v) & VIRTIO_CONFIG_S_NEEDS_RESET);
	assert_int_equal(c->f.config_irqs, 1);
	assert_int_equal(vdev_read_isr(&c->v), VDEV_ISR_CONFIG);
	assert_int_equal(vdev_read_isr(&c->v), 0); /* read clears */
	vdev_set_status(&c->v, 0);
	assert_int_equal(vdev_get_status(&c->v), 0);
	assert_int_equal(c->f.stops, 0); /* never started */
}

static void test_no_queue_enabled_needs_reset(void **state)
{
	struct ctx *c = *state;

	negotiate(&c->v, 1ull << VIRTIO_F_VERSION_1);
	vdev_set_status(&c->v, S_FOK | VIRTIO_CONFIG_S_DRIVER_OK);
	assert_int_equal(c->f.starts, 0);
	assert_true(vdev_get_status(&c->v) & VIRTIO_CONFIG_S_NEEDS_RESET);
}

static void test_queue_enable_checks(void **state)
{
	struct ctx *c = *state;
	struct vdev *v = &c->v;

	v->queue_select = 0;
	vdev_queue_set_size(v, 100); /* not a power of two */
	vdev_queue_set_addr(v, 0, false, 0x10000);
	vdev_queue_set_addr(v, 1, false, 0x11000);
	vdev_queue_set_addr(v, 2, false, 0x12000);
	vdev_queue_enable(v);
	assert_false(v->q[0].enabled);
	vdev_queue_set_size(v, 512); /* above the maximum */
	vdev_queue_enable(v);
	assert_false(v->q[0].enabled);
	vdev_queue_set_size(v, 128);
	vdev_queue_set_addr(v, 0, false, 0x10008); /* misaligned desc */
	vdev_queue_enable(v);
	assert_false(v->q[0].enabled);
	vdev_queue_set_addr(v, 0, false, RAM_SIZE - 16); /* outside RAM */
	vdev_queue_enable(v);
	assert_false(v->q[0].enabled);
	vdev_queue_set_addr(v, 0, true, 1); /* high half: far outside */
	vdev_queue_set_addr(v, 0, false, 0x10000);
	vdev_queue_enable(v);
	assert_false(v->q[0].enabled);
	vdev_queue_set_addr(v, 0, true, 0);
	vdev_queue_enable(v);
	assert_true(v->q[0].enabled);
	/* enabled: further writes are refused */
	vdev_queue_set_addr(v, 0, false, 0x30000);
	assert_int_equal(v->q[0].desc, 0x10000);
}

static void test_queue_select_out_of_range(void **state)
{
	struct ctx *c = *state;

	c->v.queue_select = 2;
	assert_null(vdev_selected(&c->v));
	vdev_queue_set_size(&c->v, 4);
	vdev_queue_enable(&c->v);
	c->v.queue_select = 0xffff;
	assert_null(vdev_selected(&c->v));
}

static void test_reset_stops_first(void **state)
{
	struct ctx *c = *state;

	negotiate(&c->v, 1ull << VIRTIO_F_VERSION_1);
	setup_queue(&c->v, 0, 0x10000);
	vdev_set_status(&c->v, S_FOK | VIRTIO_CONFIG_S_DRIVER_OK);
	assert_true(c->f.running);
	c->v.q[0].msix_vector = 1;
	assert_int_equal(vdev_set_status(&c->v, 0), 0);
	assert_false(c->f.running);
	assert_int_equal(c->f.stops, 1);
	assert_false(c->v.q[0].enabled);
	assert_int_equal(c->v.q[0].msix_vector, VDEV_NO_VECTOR);
	assert_int_equal(c->v.q[0].size, QMAX);
	assert_int_equal(c->v.driver_features, 0);
	/* a second reset does not stop again */
	vdev_set_status(&c->v, 0);
	assert_int_equal(c->f.stops, 1);
}

static void test_status_bits_cannot_be_cleared(void **state)
{
	struct ctx *c = *state;
	uint8_t st = VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER;

	vdev_set_status(&c->v, st);
	assert_int_equal(vdev_set_status(&c->v, VIRTIO_CONFIG_S_ACKNOWLEDGE), st);
	/* the driver cannot set NEEDS_RESET itself */
	assert_int_equal(vdev_set_status(&c->v, st | VIRTIO_CONFIG_S_NEEDS_RESET),
			 st);
}

static void test_needs_reset_once(void **state)
{
	struct ctx *c = *state;

	vdev_signal_needs_reset(&c->v);
	vdev_signal_needs_reset(&c->v);
	assert_int_equal(c->f.config_irqs, 1);
	vdev_reset(&c->v);
	assert_int_equal(vdev_get_status(&c->v), 0);
}

/* A configuration change (a disk resized): the generation moves on
 * every time; the interrupt and ISR bit 1 only once the driver runs. */
static void test_config_changed(void **state)
{
	struct ctx *c = *state;
	uint64_t f = (1ull << VIRTIO_F_VERSION_1) | F_DEV;
	uint8_t gen = c->v.config_generation;

	vdev_config_changed(&c->v);
	assert_int_equal(c->v.config_generation, (uint8_t)(gen + 1));
	assert_int_equal(c->f.config_irqs, 0);
	assert_int_equal(vdev_read_isr(&c->v), 0);
	assert_int_equal(negotiate(&c->v, f), S_FOK);
	setup_queue(&c->v, 0, 0x10000);
	vdev_set_status(&c->v, S_FOK | VIRTIO_CONFIG_S_DRIVER_OK);
	vdev_config_changed(&c->v);
	assert_int_equal(c->v.config_generation, (uint8_t)(gen + 2));
	assert_int_equal(c->f.config_irqs, 1);
	assert_int_equal(vdev_read_isr(&c->v), VDEV_ISR_CONFIG);
	assert_int_equal(vdev_read_isr(&c->v), 0); /* read clears it */
	vdev_config_changed(&c->v);
	assert_int_equal(c->f.config_irqs, 2);
	/* Not a reset: the generation never goes back to a value the
	 * driver read before the change. */
	vdev_reset(&c->v);
	assert_int_equal(c->v.config_generation, (uint8_t)(gen + 3));
}

static void test_init_rejects_bad_ops(void **state)
{
	struct ctx *c = *state;
	struct vdev v;

	c->f.nq = 0;
	assert_int_equal(vdev_init(&v, &fake_ops, &c->f, &c->mem, NULL, NULL),
			 -EINVAL);
	c->f.nq = VDEV_MAX_QUEUES + 1;
	assert_int_equal(vdev_init(&v, &fake_ops, &c->f, &c->mem, NULL, NULL),
			 -EINVAL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
#define T(x) cmocka_unit_test_setup_teardown(x, setup, teardown)
		T(test_offered_features_filtered),
		T(test_features_ok_accepted),
		T(test_features_ok_refused_unoffered),
		T(test_features_ok_refused_transport_bit),
		T(test_features_ok_needs_version_1),
		T(test_features_frozen_after_ok),
		T(test_driver_ok_starts_with_queues),
		T(test_driver_ok_without_features_ok),
		T(test_start_failure_needs_reset),
		T(test_no_queue_enabled_needs_reset),
		T(test_driver_ok_with_a_subset),
		T(test_dma_gates_the_device),
		T(test_queue_enable_checks),
		T(test_queue_select_out_of_range),
		T(test_reset_stops_first),
		T(test_status_bits_cannot_be_cleared),
		T(test_needs_reset_once),
		T(test_config_changed),
		T(test_init_rejects_bad_ops),
#undef T
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("vdev", tests, NULL, NULL);
}
