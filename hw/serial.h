/* 8250/16550A UART (x86: COM1, ports 0x3f8-0x3ff, IRQ 4; arm64: MMIO,
 * arch/arm64/hw/layout.h): guest output to an fd, host input from an fd
 * through an input thread.
 */
#ifndef HW_SERIAL_H
#define HW_SERIAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define SERIAL_PORT 0x3f8
#define SERIAL_IRQ 4
#define SERIAL_FIFO 64

struct serial {
	pthread_mutex_t lock;
	uint8_t ier, lcr, mcr, scr, dll, dlm, fcr;
	bool thri;           /* THR-empty interrupt pending */
	uint8_t rx[SERIAL_FIFO];
	unsigned int rx_head, rx_n;
	unsigned int rx_reads;  /* bytes the guest has read, ever (wraps) */
	unsigned int rx_seen;   /* rx_reads at the last serial_rx_stuck() */
	int level;           /* IRQ line as last set */
	uint64_t tx_bytes;   /* bytes the guest has sent, ever */
	uint64_t tx_last_ns; /* CLOCK_MONOTONIC of the last one */
	void (*irq)(void *opaque, int level);
	void *irq_opaque;
	int out_fd;
	/* input */
	int in_fd, stop_fd;
	bool escape;         /* Ctrl-A x quits (terminal input) */
	bool hold;           /* input waits for IER.RDI (not a terminal) */
	bool esc_seen;
	bool thread_on;
	pthread_t thread;
	void (*quit)(void *opaque);
	void *quit_opaque;
};

int serial_init(struct serial *s, int out_fd,
		void (*irq)(void *opaque, int level), void *opaque);
/* Whoever started the input thread stops it (serial_stop_input) before. */
void serial_destroy(struct serial *s);
/* One line for a VMM stopped from outside (a guest that looks hung):
 * bytes sent, how long before NOW_NS the last one was, and the
 * transmit interrupt's state, e.g. "serial: 1234 bytes sent, the last
 * 2.5 s before; IER 0x03, THR-empty interrupt pending, IRQ line high". */
void serial_describe(struct serial *s, uint64_t now_ns, char *buf, size_t len);
/* Bus handler for the 8 registers (an 8-byte aligned base). */
void serial_io(void *opaque, uint64_t port, uint8_t *data, unsigned int size,
	       bool write);
/* Bytes from the host side (tests, input thread).  Returns how many fit:
 * none while input is held (see serial_start_input). */
unsigned int serial_rx(struct serial *s, const uint8_t *buf, unsigned int n);
/* Called now and then while input waits: if received bytes have not been
 * read since the last call although the receive interrupt is on, the
 * guest missed its edge (ISA IRQ 4 is edge-triggered; lost edges were
 * seen under the test host's nested emulation), so lower and raise the
 * line again.  Returns true while received bytes wait in the FIFO. */
bool serial_rx_stuck(struct serial *s);
/* Start the input thread reading in_fd; with escape (a terminal), Ctrl-A x
 * calls quit.  Without escape (a pipe or a file), input is held until the
 * guest enables the receive interrupt: Linux clears the receive FIFO while
 * it sets the port up, so bytes delivered before would be lost.
 * 0 or -errno. */
int serial_start_input(struct serial *s, int in_fd, bool escape,
		       void (*quit)(void *opaque), void *opaque);
void serial_stop_input(struct serial *s);
/* The input thread's Ctrl-A filter (when escape is on): copies in[] to
 * out[] less the escapes and returns how many; Ctrl-A x sets *quit and
 * ends there; Ctrl-A Ctrl-A gives one Ctrl-A. */
unsigned int serial_escape(struct serial *s, const uint8_t *in,
			   unsigned int n, uint8_t *out, bool *quit);

#endif
