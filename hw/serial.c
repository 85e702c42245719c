/* 16550A UART emulation: enough for Linux's 8250 driver, both ways. */
#include "hw/serial.h"

#include <errno.h>
#include <linux/serial_reg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "host/clock.h"


static uint8_t serial_iir(const struct serial *s)
{
	uint8_t fifo = (s->fcr & UART_FCR_ENABLE_FIFO) ? 0xc0 : 0;

	if ((s->ier & UART_IER_RDI) && s->rx_n)
		return fifo | UART_IIR_RDI;
	if ((s->ier & UART_IER_THRI) && s->thri)
		return fifo | UART_IIR_THRI;
	return fifo | UART_IIR_NO_INT;
}

/* Called with the lock held. */
static void serial_update_irq(struct serial *s)
{
	int level = !(serial_iir(s) & UART_IIR_NO_INT);

	if (level == s->level)
		return;
	s->level = level;
	if (s->irq)
		s->irq(s->irq_opaque, level);
}

static uint8_t serial_msr(const struct serial *s)
{
	uint8_t m = s->mcr, v = 0;

	if (!(m & UART_MCR_LOOP))
		return UART_MSR_DCD | UART_MSR_DSR | UART_MSR_CTS;
	if (m & UART_MCR_RTS)
		v |= UART_MSR_CTS;
	if (m & UART_MCR_DTR)
		v |= UART_MSR_DSR;
	if (m & UART_MCR_OUT1)
		v |= UART_MSR_RI;
	if (m & UART_MCR_OUT2)
		v |= UART_MSR_DCD;
	return v;
}

static unsigned int serial_push(struct serial *s, const uint8_t *b,
				unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n && s->rx_n < SERIAL_FIFO; i++)
		s->rx[(s->rx_head + s->rx_n++) % SERIAL_FIFO] = b[i];
	return i;
}

static void serial_tx(struct serial *s, uint8_t c)
{
	if (s->mcr & UART_MCR_LOOP) {
		serial_push(s, &c, 1);
	} else if (s->out_fd >= 0) {
		ssize_t r;

		do
			r = write(s->out_fd, &c, 1);
		while (r < 0 && errno == EINTR);
	}
	s->thri = true; /* transmitted at once: THR empty again */
	s->tx_bytes++;
	s->tx_last_ns = mono_ns();
}

static uint8_t serial_read(struct serial *s, unsigned int reg)
{
	uint8_t v;

	switch (reg) {
	case UART_RX:
		if (s->lcr & UART_LCR_DLAB)
			return s->dll;
		if (!s->rx_n)
			return 0;
		v = s->rx[s->rx_head];
		s->rx_head = (s->rx_head + 1) % SERIAL_FIFO;
		s->rx_n--;
		s->rx_reads++;
		return v;
	case UART_IER:
		return (s->lcr & UART_LCR_DLAB) ? s->dlm : s->ier;
	case UART_IIR:
		v = serial_iir(s);
		if ((v & 0x0f) == UART_IIR_THRI)
			s->thri = false; /* reading IIR clears THRE */
		return v;
	case UART_LCR:
		return s->lcr;
	case UART_MCR:
		return s->mcr;
	case UART_LSR:
		return (s->rx_n ? UART_LSR_DR : 0) | UART_LSR_THRE |
		       UART_LSR_TEMT;
	case UART_MSR:
		return serial_msr(s);
	default:
		return s->scr;
	}
}

static void serial_write(struct serial *s, unsigned int reg, uint8_t v)
{
	switch (reg) {
	case UART_TX:
		if (s->lcr & UART_LCR_DLAB)
			s->dll = v;
		else
			serial_tx(s, v);
		break;
	case UART_IER:
		if (s->lcr & UART_LCR_DLAB) {
			s->dlm = v;
			break;
		}
		if ((v & UART_IER_THRI) && !(s->ier & UART_IER_THRI))
			s->thri = true;
		s->ier = v & 0x0f;
		break;
	case UART_FCR:
		if (v & UART_FCR_CLEAR_RCVR)
			s->rx_n = 0;
		s->fcr = v & (UART_FCR_ENABLE_FIFO | 0xc0);
		break;
	case UART_LCR:
		s->lcr = v;
		break;
	case UART_MCR:
		s->mcr = v & 0x1f;
		break;
	case UART_SCR:
		s->scr = v;
		break;
	}
}

void serial_io(void *opaque, uint64_t port, uint8_t *data, unsigned int size,
	       bool write)
{
	struct serial *s = opaque;
	/* 8 registers at an 8-byte aligned base: port 0x3f8 on x86, MMIO
	 * on arm64. */
	unsigned int reg = (unsigned int)port & 7;

	pthread_mutex_lock(&s->lock);
	if (write)
		serial_write(s, reg, data[0]);
	else
		data[0] = serial_read(s, reg);
	if (!write && size > 1)
		memset(data + 1, 0, size - 1);
	serial_update_irq(s);
	pthread_mutex_unlock(&s->lock);
}

unsigned int serial_rx(struct serial *s, const uint8_t *buf, unsigned int n)
{
	unsigned int k;

	pthread_mutex_lock(&s->lock);
	/* Held input waits for a driver that takes it by interrupt. */
	k = (s->hold && !(s->ier & UART_IER_RDI)) ? 0 : serial_push(s, buf, n);
	serial_update_irq(s);
	pthread_mutex_unlock(&s->lock);
	return k;
}

bool serial_rx_stuck(struct serial *s)
{
	bool waiting;

	pthread_mutex_lock(&s->lock);
	waiting = s->rx_n > 0;
	if (waiting && s->rx_reads == s->rx_seen && s->level && s->irq &&
	    (s->ier & UART_IER_RDI)) {
		s->irq(s->irq_opaque, 0);
		s->irq(s->irq_opaque, 1);
	}
	s->rx_seen = s->rx_reads;
	pthread_mutex_unlock(&s->lock);
	return waiting;
}

void serial_describe(struct serial *s, uint64_t now_ns, char *buf, size_t len)
{
	pthread_mutex_lock(&s->lock);
	if (!s->tx_bytes)
		snprintf(buf, len, "serial: nothing sent");
	else
		snprintf(buf, len,
			 "serial: %llu bytes sent, the last %.1f s before; "
			 "IER 0x%02x, THR-empty interrupt %s, IRQ line %s",
			 (unsigned long long)s->tx_bytes,
			 (double)(now_ns - s->tx_last_ns) / 1e9, s->ier,
			 !(s->ier & UART_IER_THRI) ? "disabled" :
			 s->thri		   ? "pending" : "not pending",
			 s->level ? "high" : "low");
	pthread_mutex_unlock(&s->lock);
}

int serial_init(struct serial *s, int out_fd,
		void (*irq)(void *opaque, int level), void *opaque)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	s->out_fd = out_fd;
	s->irq = irq;
	s->irq_opaque = opaque;
	s->in_fd = s->stop_fd = -1;
	s->mcr = UART_MCR_OUT2;
	return 0;
}

void serial_destroy(struct serial *s)
{
	pthread_mutex_destroy(&s->lock);
}
