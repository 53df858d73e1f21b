// Glibc's Swift overlay leaves these out; _GNU_SOURCE is not defined on purpose (it clashes with Glibc).
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <signal.h>
#include <time.h>

extern int accept4(int, struct sockaddr *, socklen_t *, int);

// struct ucred is hidden behind _GNU_SOURCE; SO_PEERCRED fills exactly this layout.
struct roster_ucred {
    pid_t pid;
    uid_t uid;
    gid_t gid;
};
#ifndef SO_PEERCRED
#define SO_PEERCRED 17
#endif
static const int ROSTER_SO_PEERCRED = SO_PEERCRED;

#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

// sched_setattr(2) has no glibc wrapper. For SCHED_OTHER, `runtime_ns` is the thread's requested slice
// (EEVDF, Linux 6.12+: a shorter slice gets the CPU sooner on wake-up; 0 asks for the default), and
// `nice` is set at the same time. Returns 0, or -1 with errno (older kernels ignore the slice).
struct roster_sched_attr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
};
static inline int roster_set_fair_scheduling(int nice, uint64_t runtime_ns) {
    struct roster_sched_attr attr = { .size = sizeof attr, .sched_policy = 0 /* SCHED_OTHER */,
                                      .sched_nice = nice, .sched_runtime = runtime_ns };
    return (int)syscall(SYS_sched_setattr, 0, &attr, 0);
}
static inline long roster_fair_slice_ns(void) {
    struct roster_sched_attr attr = { 0 };
    if (syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0) != 0) return -1;
    return (long)attr.sched_runtime;
}
