/* Minimal CMOS RTC. */
#include "arch/x86/hw/rtc.h"

#include <string.h>
#include <time.h>

enum {
	RTC_SEC = 0, RTC_MIN = 2, RTC_HOUR = 4, RTC_WDAY = 6, RTC_MDAY = 7,
	RTC_MON = 8, RTC_YEAR = 9, RTC_A = 10, RTC_B = 11, RTC_C = 12,
	RTC_D = 13, RTC_CENTURY = 0x32,
};

static uint8_t bcd(int v)
{
	return (uint8_t)(((v / 10) << 4) | (v % 10));
}

void rtc_init(struct rtc *r)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->lock, NULL);
	r->cmos[RTC_A] = 0x26; /* 32.768 kHz, 1024 Hz; UIP clear */
	r->cmos[RTC_B] = 0x02; /* 24-hour, BCD */
	r->cmos[RTC_D] = 0x80; /* valid RAM and time */
	/* glibc reads the zone file at the first time conversion, even
	 * gmtime_r's: now, not later in a vCPU, whose sandbox has no open. */
	tzset();
}

static uint8_t rtc_read(struct rtc *r, uint8_t idx)
{
	struct tm tm;
	time_t now;

	if (idx > RTC_YEAR && idx != RTC_CENTURY)
		return idx == RTC_C ? 0 : r->cmos[idx];
	now = time(NULL);
	gmtime_r(&now, &tm);
	switch (idx) {
	case RTC_SEC: return bcd(tm.tm_sec);
	case RTC_MIN: return bcd(tm.tm_min);
	case RTC_HOUR: return bcd(tm.tm_hour);
	case RTC_WDAY: return bcd(tm.tm_wday + 1);
	case RTC_MDAY: return bcd(tm.tm_mday);
	case RTC_MON: return bcd(tm.tm_mon + 1);
	case RTC_YEAR: return bcd(tm.tm_year % 100);
	case RTC_CENTURY: return bcd((tm.tm_year + 1900) / 100);
	default: return 0; /* alarms */
	}
}

void rtc_io(void *opaque, uint64_t port, uint8_t *data, unsigned int size,
	    bool write)
{
	struct rtc *r = opaque;

	pthread_mutex_lock(&r->lock);
	if (port == RTC_INDEX) {
		if (write)
			r->index = data[0] & 0x7f; /* bit 7: NMI mask */
		else
			data[0] = 0xff;
	} else if (write) {
		if (r->index > RTC_D && r->index != RTC_CENTURY)
			r->cmos[r->index] = data[0];
	} else {
		data[0] = rtc_read(r, r->index);
	}
	pthread_mutex_unlock(&r->lock);
	if (!write && size > 1)
		memset(data + 1, 0, size - 1);
}
