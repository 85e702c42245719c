/* vmm/serial.c and vmm/i8042.c (compiled in here): the 16550A register
 * behaviour Linux's 8250 driver probes for, interrupt identification,
 * the receive FIFO, and the i8042 reset and probe answers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <linux/serial_reg.h>
#include <pthread.h>
#include <stdbool.h>

#include "arch/x86/hw/i8042.h"
#include "hw/serial.h"


struct ctx {
	struct serial s;
	int level, irqs;
	int pipe[2];
	int resets;
};

static void on_irq(void *opaque, int level)
{
	struct ctx *c = opaque;

	c->level = level;
	c->irqs++;
}

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	assert_int_equal(pipe(c->pipe), 0);
	serial_init(&c->s, c->pipe[1], on_irq, c);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	serial_destroy(&c->s);
	close(c->pipe[0]);
	close(c->pipe[1]);
	free(c);
	return 0;
}

static uint8_t in8(struct ctx *c, unsigned int reg)
{
	uint8_t v = 0;

	serial_io(&c->s, SERIAL_PORT + reg, &v, 1, false);
	return v;
}

static void out8(struct ctx *c, unsigned int reg, uint8_t v)
{
	serial_io(&c->s, SERIAL_PORT + reg, &v, 1, true);
}

static void test_tx_reaches_fd(void **state)
{
	struct ctx *c = *state;
	char buf[4] = { 0 };

	out8(c, UART_TX, 'o');
	out8(c, UART_TX, 'k');
	assert_int_equal(read(c->pipe[0], buf, 2), 2);
	assert_string_equal(buf, "ok");
	assert_int_equal(in8(c, UART_LSR) & (UART_LSR_THRE | UART_LSR_TEMT),
			 UART_LSR_THRE | UART_LSR_TEMT);
}

static void test_scratch_and_dlab(void **state)
{
	struct ctx *c = *state;
	char b;

	out8(c, UART_SCR, 0xa5);
	assert_int_equal(in8(c, UART_SCR), 0xa5);
	out8(c, UART_LCR, UART_LCR_DLAB);
	out8(c, UART_DLL, 0x01);
	out8(c, UART_DLM, 0x02);
	assert_int_equal(in8(c, UART_DLL), 0x01);
	assert_int_equal(in8(c, UART_DLM), 0x02);
	out8(c, UART_LCR, 0x03);
	assert_int_equal(in8(c, UART_IER), 0); /* DLM did not land in IER */
	assert_int_equal(read(c->pipe[0], &b, 0), 0); /* nothing sent */
}

static void test_loopback_msr(void **state)
{
	struct ctx *c = *state;

	/* Linux's autoconfig: MCR = LOOP | OUT2 | RTS -> MSR high nibble 0x90 */
	out8(c, UART_MCR, UART_MCR_LOOP | 0x0a);
	assert_int_equal(in8(c, UART_MSR) & 0xf0, 0x90);
	out8(c, UART_TX, 'x'); /* loops back into the receiver */
	assert_true(in8(c, UART_LSR) & UART_LSR_DR);
	assert_int_equal(in8(c, UART_RX), 'x');
	out8(c, UART_MCR, UART_MCR_OUT2);
	assert_int_equal(in8(c, UART_MSR) & 0xf0, 0xb0);
}

static void test_ier_mask(void **state)
{
	struct ctx *c = *state;

	out8(c, UART_IER, 0xff);
	assert_int_equal(in8(c, UART_IER), 0x0f);
}

static void test_thri_semantics(void **state)
{
	struct ctx *c = *state;

	assert_int_equal(in8(c, UART_IIR) & 0x0f, UART_IIR_NO_INT);
	out8(c, UART_IER, UART_IER_THRI);
	assert_int_equal(c->level, 1);
	assert_int_equal(in8(c, UART_IIR) & 0x0f, UART_IIR_THRI);
	/* reading IIR cleared it */
	assert_int_equal(in8(c, UART_IIR) & 0x0f, UART_IIR_NO_INT);
	assert_int_equal(c->level, 0);
	out8(c, UART_TX, '.');
	assert_int_equal(c->level, 1);
	out8(c, UART_IER, 0);
	assert_int_equal(c->level, 0);
}

/* The line a VMM stopped from outside prints about its console. */
static void test_describe(void **state)
{
	struct ctx *c = *state;
	char line[200], sink[4];

	serial_describe(&c->s, 0, line, sizeof(line));
	assert_string_equal(line, "serial: nothing sent");
	out8(c, UART_TX, 'a');
	out8(c, UART_TX, 'b');
	assert_int_equal(read(c->pipe[0], sink, 2), 2);
	serial_describe(&c->s, c->s.tx_last_ns + 2500000000u, line,
			sizeof(line));
	assert_string_equal(line, "serial: 2 bytes sent, the last 2.5 s "
				  "before; IER 0x00, THR-empty interrupt "
				  "disabled, IRQ line low");
	out8(c, UART_IER, UART_IER_THRI | UART_IER_RDI);
	serial_describe(&c->s, c->s.tx_last_ns, line, sizeof(line));
	assert_non_null(strstr(line, "IER 0x03, THR-empty interrupt pending, "
				     "IRQ line high"));
	(void)in8(c, UART_IIR); /* the driver took it */
	serial_describe(&c->s, c->s.tx_last_ns, line, sizeof(line));
	assert_non_null(strstr(line, "THR-empty interrupt not pending, "
				     "IRQ line low"));
}

static void test_rx_fifo_and_irq(void **state)
{
	struct ctx *c = *state;
	uint8_t big[SERIAL_FIFO + 10];

	out8(c, UART_FCR, UART_FCR_ENABLE_FIFO);
	assert_int_equal(in8(c, UART_IIR) & 0xc0, 0xc0);
	out8(c, UART_IER, UART_IER_RDI);
	assert_int_equal(serial_rx(&c->s, (const uint8_t *)"ab", 2), 2);
	assert_int_equal(c->level, 1);
	assert_int_equal(in8(c, UART_IIR) & 0x0f, UART_IIR_RDI);
	assert_int_equal(in8(c, UART_RX), 'a');
	assert_int_equal(in8(c, UART_RX), 'b');
	assert_false(in8(c, UART_LSR) & UART_LSR_DR);
	assert_int_equal(c->level, 0);
	assert_int_equal(in8(c, UART_RX), 0); /* empty */
	memset(big, 'z', sizeof(big));
	assert_int_equal(serial_rx(&c->s, big, sizeof(big)), SERIAL_FIFO);
	out8(c, UART_FCR, UART_FCR_ENABLE_FIFO | UART_FCR_CLEAR_RCVR);
	assert_false(in8(c, UART_LSR) & UART_LSR_DR);
}

/* Received bytes nobody reads while the receive interrupt is on: the line
 * is pulsed (low, high) again, once per check without a read between. */
static void test_rx_stuck_retrigger(void **state)
{
	struct ctx *c = *state;
	int irqs;

	out8(c, UART_IER, UART_IER_RDI);
	assert_int_equal(serial_rx(&c->s, (const uint8_t *)"ab", 2), 2);
	assert_int_equal(c->level, 1);
	irqs = c->irqs;
	assert_true(serial_rx_stuck(&c->s));      /* nothing read: pulse */
	assert_int_equal(c->irqs, irqs + 2);
	assert_int_equal(c->level, 1);
	assert_int_equal(in8(c, UART_RX), 'a');
	irqs = c->irqs;
	assert_true(serial_rx_stuck(&c->s));      /* a read since: none */
	assert_int_equal(c->irqs, irqs);
	assert_true(serial_rx_stuck(&c->s));      /* none since: pulse */
	assert_int_equal(c->irqs, irqs + 2);
	out8(c, UART_IER, 0);                     /* interrupt off: none */
	irqs = c->irqs;
	assert_true(serial_rx_stuck(&c->s));
	assert_int_equal(c->irqs, irqs);
	out8(c, UART_IER, UART_IER_RDI);
	assert_int_equal(in8(c, UART_RX), 'b');
	assert_int_equal(c->level, 0);
	irqs = c->irqs;
	assert_false(serial_rx_stuck(&c->s));     /* all read */
	assert_int_equal(c->irqs, irqs);
}

static void test_escape(void **state)
{
	struct ctx *c = *state;
	uint8_t out[16];
	bool quit = false;

	c->s.escape = true;
	assert_int_equal(serial_escape(&c->s, (const uint8_t *)"a\001\001b", 4,
				       out, &quit), 3);
	assert_memory_equal(out, "a\001b", 3);
	assert_false(quit);
	assert_int_equal(serial_escape(&c->s, (const uint8_t *)"\001", 1, out,
				       &quit), 0);
	assert_int_equal(serial_escape(&c->s, (const uint8_t *)"x", 1, out,
				       &quit), 0);
	assert_true(quit);
	c->s.escape = false;
	quit = false;
	assert_int_equal(serial_escape(&c->s, (const uint8_t *)"\001x", 2, out,
				       &quit), 2);
	assert_false(quit);
}

static void on_reset(void *opaque)
{
	((struct ctx *)opaque)->resets++;
}

static uint8_t kbd(struct i8042 *k, unsigned int port, int val)
{
	uint8_t v = (uint8_t)val;

	i8042_io(k, port, &v, 1, val >= 0);
	return v;
}

static void test_i8042(void **state)
{
	struct ctx *c = *state;
	struct i8042 k;

	i8042_init(&k, on_reset, c);
	assert_true(kbd(&k, I8042_CMD, -1) & ST_KEYLOCK);
	assert_false(kbd(&k, I8042_CMD, -1) & 0x02); /* input buffer empty */
	kbd(&k, I8042_CMD, CMD_SELF_TEST);
	assert_true(kbd(&k, I8042_CMD, -1) & ST_OBF);
	assert_int_equal(kbd(&k, I8042_DATA, -1), 0x55);
	assert_false(kbd(&k, I8042_CMD, -1) & ST_OBF);
	kbd(&k, I8042_CMD, CMD_WRITE_CB);
	kbd(&k, I8042_DATA, 0x47);
	kbd(&k, I8042_CMD, CMD_AUX_DISABLE);
	kbd(&k, I8042_CMD, CMD_READ_CB);
	assert_int_equal(kbd(&k, I8042_DATA, -1), 0x47 | CB_AUXDIS);
	kbd(&k, I8042_CMD, CMD_KBD_LOOP);
	kbd(&k, I8042_DATA, 0x5a);
	assert_int_equal(kbd(&k, I8042_DATA, -1), 0x5a);
	assert_int_equal(c->resets, 0);
	kbd(&k, I8042_CMD, CMD_RESET);
	assert_int_equal(c->resets, 1);
	kbd(&k, I8042_CMD, CMD_WRITE_OUT);
	kbd(&k, I8042_DATA, 0xfe); /* bit 0 low: reset */
	assert_int_equal(c->resets, 2);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
#define T(x) cmocka_unit_test_setup_teardown(x, setup, teardown)
		T(test_tx_reaches_fd),
		T(test_scratch_and_dlab),
		T(test_loopback_msr),
		T(test_ier_mask),
		T(test_thri_semantics),
		T(test_describe),
		T(test_rx_fifo_and_irq),
		T(test_rx_stuck_retrigger),
		T(test_escape),
		T(test_i8042),
#undef T
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("serial", tests, NULL, NULL);
}
