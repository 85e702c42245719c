/* Minimal i8042 keyboard controller (ports 0x60, 0x64): status, command
 * byte, self test, and the CPU reset (command 0xfe) that ends the VM.
 */
#ifndef VMM_I8042_H
#define VMM_I8042_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define I8042_DATA 0x60
#define I8042_CMD 0x64

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
