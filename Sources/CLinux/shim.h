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

#include <sched.h>

// SCHED_IDLE is hidden behind _GNU_SOURCE. Returns 0, or -1 with errno.
static inline int roster_schedule_idle(void) {
    struct sched_param param = { .sched_priority = 0 };
    return sched_setscheduler(0, 5 /* SCHED_IDLE */, &param);
}
