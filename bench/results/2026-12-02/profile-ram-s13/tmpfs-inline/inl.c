#define _GNU_SOURCE
#include <liburing.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <errno.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
int main(int argc,char**argv){
	const char *path=argc>1?argv[1]:"/tmp/inl.img";
	int fd=open(path,O_RDWR|O_CREAT,0600); static char buf[4096];
	memset(buf,1,sizeof buf);
	for(int i=0;i<4096;i++) pwrite(fd,buf,4096,(off_t)i*4096);
	struct io_uring r; io_uring_queue_init(64,&r,0);
	int inl=0,n=2000; double t0=now();
	for(int i=0;i<n;i++){
		struct io_uring_sqe*s=io_uring_get_sqe(&r);
		io_uring_prep_read(s,fd,buf,4096,(off_t)(rand()%4096)*4096);
		io_uring_submit(&r);
		struct io_uring_cqe*c;
		if(io_uring_peek_cqe(&r,&c)==0) inl++; else io_uring_wait_cqe(&r,&c);
		io_uring_cqe_seen(&r,c);
	}
	double t1=now();
	struct iovec v={buf,4096};
	ssize_t x=preadv2(fd,&v,1,0,RWF_NOWAIT);
	double t2=now();
	for(int i=0;i<n;i++) pread(fd,buf,4096,(off_t)(rand()%4096)*4096);
	double t3=now();
	printf("%s: io_uring inline %d/%d, %.1f us/read; pread %.1f us/read; preadv2 RWF_NOWAIT -> %zd (%s)\n",
	       path,inl,n,(t1-t0)/n,(t3-t2)/n,x,x<0?strerror(errno):"ok");
	unlink(path); return 0;
}
