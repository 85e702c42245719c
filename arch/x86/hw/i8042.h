/* Minimal i8042 keyboard controller (ports 0x60, 0x64): status, command
 * byte, self test, and the CPU reset (command 0xfe) that ends the VM.
 */
#ifndef HW_I8042_H
#define HW_I8042_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define I8042_DATA 0x60
#define I8042_CMD 0x64

/* Status bits, command-byte bits and controller commands. */
#define ST_OBF 0x01
#define ST_SYS 0x04
#define ST_CMD 0x08
#define ST_KEYLOCK 0x10 /* set: keyboard not inhibited */
#define CB_KBDDIS 0x10
#define CB_AUXDIS 0x20

enum {
	CMD_READ_CB = 0x20, CMD_WRITE_CB = 0x60, CMD_AUX_DISABLE = 0xa7,
	CMD_AUX_ENABLE = 0xa8, CMD_AUX_TEST = 0xa9, CMD_SELF_TEST = 0xaa,
	CMD_KBD_TEST = 0xab, CMD_KBD_DISABLE = 0xad, CMD_KBD_ENABLE = 0xae,
	CMD_WRITE_OUT = 0xd1, CMD_KBD_LOOP = 0xd2, CMD_AUX_LOOP = 0xd3,
	CMD_RESET = 0xfe,
};

struct i8042 {
	pthread_mutex_t lock;
	uint8_t cmd_byte;
	uint8_t out;       /* output buffer */
	bool out_full;
	uint8_t pending;   /* command waiting for its data byte, or 0 */
	void (*reset)(void *opaque);
	void *opaque;
};

void i8042_init(struct i8042 *k, void (*reset)(void *opaque), void *opaque);
/* Bus handler for port 0x60 and 0x64. */
void i8042_io(void *opaque, uint64_t port, uint8_t *data, unsigned int size,
	      bool write);

#endif
