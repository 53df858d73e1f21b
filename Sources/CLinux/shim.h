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
#include <sys/syscall.h>
#include <unistd.h>

// SCHED_IDLE, RLIMIT_NICE and gettid are hidden behind _GNU_SOURCE.
static const int ROSTER_SCHED_IDLE = 5;
static const int ROSTER_RLIMIT_NICE = 13;

/// Sets the scheduling policy of thread `tid` (0: the caller) to `policy` at static priority 0.
static inline int roster_set_policy(pid_t tid, int policy) {
    struct sched_param param = { .sched_priority = 0 };
    return sched_setscheduler(tid, policy, &param);
}

static inline pid_t roster_gettid(void) {
    return (pid_t)syscall(SYS_gettid);
}

#include <stdio.h>

// renameat2 is declared only under _GNU_SOURCE; glibc has exported it since 2.28. RENAME_NOREPLACE is from
// <linux/fs.h>: the rename fails with EEXIST instead of replacing a file that appeared meanwhile.
extern int renameat2(int, const char *, int, const char *, unsigned int);
static const unsigned int ROSTER_RENAME_NOREPLACE = 1;

// malloc_trim: glibc keeps freed heap pages for reuse; after a burst of output the daemon hands them back.
#include <malloc.h>

#include <errno.h>
#include <spawn.h>

// posix_spawn_file_actions_addclosefrom_np (glibc 2.34) and addchdir_np (2.29) are declared only under
// _GNU_SOURCE: a child gets exactly the descriptors it is handed, whatever lacks O_CLOEXEC in the daemon, and does
// not keep the daemon's working directory busy.
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *, int);
extern int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *, const char *);
// pipe2 is _GNU_SOURCE too: a pipe made close-on-exec at once leaks into no child another thread spawns meanwhile.
extern int pipe2(int[2], int);

/// A descriptor that becomes readable when child `pid` ends (always close-on-exec); -1 with errno (ENOSYS before
/// Linux 5.3).
static inline int roster_pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}
