/* Minimal MC146818 CMOS RTC (ports 0x70, 0x71): the host's time in BCD,
 * update-in-progress always clear, no interrupts.  Keeps Linux from
 * spinning on it at boot.
 */
#ifndef HW_RTC_H
#define HW_RTC_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define RTC_INDEX 0x70
#define RTC_DATA 0x71

struct rtc {
	pthread_mutex_t lock;
	uint8_t index;
	uint8_t cmos[128];
};

void rtc_init(struct rtc *r);
void rtc_io(void *opaque, uint64_t port, uint8_t *data, unsigned int size,
	    bool write);

#endif
