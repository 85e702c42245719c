/* Minimal i8042: what Linux probes and reboot=k uses. */
#include "arch/x86/hw/i8042.h"

#include <string.h>



void i8042_init(struct i8042 *k, void (*reset)(void *opaque), void *opaque)
{
	memset(k, 0, sizeof(*k));
	pthread_mutex_init(&k->lock, NULL);
	k->cmd_byte = 0x45; /* kbd IRQ, system flag, translate */
	k->reset = reset;
	k->opaque = opaque;
}

static void i8042_reply(struct i8042 *k, uint8_t v)
{
	k->out = v;
	k->out_full = true;
}

/* Returns true if the command asks for a CPU reset. */
static bool i8042_command(struct i8042 *k, uint8_t c)
{
	switch (c) {
	case CMD_READ_CB:
		i8042_reply(k, k->cmd_byte);
		break;
	case CMD_WRITE_CB:
	case CMD_WRITE_OUT:
	case CMD_KBD_LOOP:
		k->pending = c;
		break;
	case CMD_SELF_TEST:
		i8042_reply(k, 0x55);
		break;
	case CMD_KBD_TEST:
		i8042_reply(k, 0x00);
		break;
	case CMD_AUX_TEST:
		/* No mouse: "clock line stuck low", so Linux gives up on the
		 * AUX port at once instead of timing out on it. */
		i8042_reply(k, 0x01);
		break;
	case CMD_AUX_LOOP:
		k->pending = c;
		break;
	case CMD_KBD_DISABLE:
		k->cmd_byte |= CB_KBDDIS;
		break;
	case CMD_KBD_ENABLE:
		k->cmd_byte &= (uint8_t)~CB_KBDDIS;
		break;
	case CMD_AUX_DISABLE:
		k->cmd_byte |= CB_AUXDIS;
		break;
	case CMD_AUX_ENABLE:
		k->cmd_byte &= (uint8_t)~CB_AUXDIS;
		break;
	case CMD_RESET:
		return true;
	default: /* the rest: accepted, no effect */
		break;
	}
	return false;
}

static bool i8042_data(struct i8042 *k, uint8_t v)
{
	uint8_t c = k->pending;

	k->pending = 0;
	if (c == CMD_WRITE_CB)
		k->cmd_byte = v;
	else if (c == CMD_KBD_LOOP)
		i8042_reply(k, v);
	else if (c == CMD_AUX_LOOP)
		i8042_reply(k, 0); /* nothing on the AUX line to echo it */
	else if (c == CMD_WRITE_OUT && !(v & 1))
		return true; /* output port bit 0 low: reset */
	return false;
}

void i8042_io(void *opaque, uint64_t port, uint8_t *data, unsigned int size,
	      bool write)
{
	struct i8042 *k = opaque;
	bool reset = false;

	pthread_mutex_lock(&k->lock);
	if (write && port == I8042_CMD) {
		reset = i8042_command(k, data[0]);
	} else if (write) {
		reset = i8042_data(k, data[0]);
	} else if (port == I8042_CMD) {
		data[0] = ST_SYS | ST_KEYLOCK | (k->pending ? ST_CMD : 0) |
			  (k->out_full ? ST_OBF : 0);
	} else {
		data[0] = k->out;
		k->out_full = false;
	}
	pthread_mutex_unlock(&k->lock);
	if (!write && size > 1)
		memset(data + 1, 0, size - 1);
	if (reset && k->reset)
		k->reset(k->opaque);
}
