// roster-bench's floor (docs/BENCHMARKS.md): an epoll loop on one thread that frames lines and echoes each one back, so a
// client sees the same request size go out and a reply of about the same size come back, with exactly
// the work every line server must do (accept, read, find '\n', write) and nothing else.
#define _GNU_SOURCE
#include "roster_floor.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

struct conn {
    int fd;
    char *in;      /* a partial line carried to the next read */
    size_t in_len, in_cap;
    char *out;     /* bytes the socket did not take yet */
    size_t out_len, out_cap;
    int wants_out;
};

static int reserve(char **buffer, size_t *cap, size_t need) {
    if (need <= *cap) return 0;
    size_t next = *cap ? *cap : 4096;
    while (next < need) next *= 2;
    char *grown = realloc(*buffer, next);
    if (!grown) return -1;
    *buffer = grown;
    *cap = next;
    return 0;
}

static void drop(int epfd, struct conn *c) {
    epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c->in);
    free(c->out);
    free(c);
}

/* Writes what is queued plus `data`; keeps the rest and asks for EPOLLOUT. -1 when the peer is gone. */
static int send_lines(int epfd, struct conn *c, const char *data, size_t len) {
    if (c->out_len == 0 && len > 0) {
        ssize_t n = write(c->fd, data, len);
        if (n < 0 && errno != EAGAIN && errno != EINTR) return -1;
        if (n < 0) n = 0;
        data += n;
        len -= (size_t)n;
        if (len == 0 && !c->wants_out) return 0;
    }
    if (len > 0) {
        if (reserve(&c->out, &c->out_cap, c->out_len + len) < 0) return -1;
        memcpy(c->out + c->out_len, data, len);
        c->out_len += len;
    }
    while (c->out_len > 0) {
        ssize_t n = write(c->fd, c->out, c->out_len);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) break;
        if (n <= 0) return -1;
        memmove(c->out, c->out + n, c->out_len - (size_t)n);
        c->out_len -= (size_t)n;
    }
    /* Only a change of interest costs a syscall, as in any loop worth measuring against. */
    int wants_out = c->out_len > 0;
    if (wants_out != c->wants_out) {
        struct epoll_event ev = { .events = EPOLLIN | (wants_out ? EPOLLOUT : 0), .data.ptr = c };
        epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
        c->wants_out = wants_out;
    }
    return 0;
}

static int readable(int epfd, struct conn *c, char *chunk, size_t chunk_size) {
    for (int rounds = 0; rounds < 4; rounds++) {
        ssize_t n = read(c->fd, chunk, chunk_size);
        if (n == 0) return -1;
        if (n < 0) return (errno == EAGAIN || errno == EINTR) ? 0 : -1;
        char *last = memrchr(chunk, '\n', (size_t)n);
        if (!last) {
            if (reserve(&c->in, &c->in_cap, c->in_len + (size_t)n) < 0) return -1;
            memcpy(c->in + c->in_len, chunk, (size_t)n);
            c->in_len += (size_t)n;
            continue;
        }
        size_t whole = (size_t)(last - chunk) + 1;
        if (c->in_len > 0) {
            /* The carried start of a line goes out first, then the lines that end in this chunk. */
            if (reserve(&c->in, &c->in_cap, c->in_len + whole) < 0) return -1;
            memcpy(c->in + c->in_len, chunk, whole);
            if (send_lines(epfd, c, c->in, c->in_len + whole) < 0) return -1;
            c->in_len = 0;
        } else if (send_lines(epfd, c, chunk, whole) < 0) {
            return -1;
        }
        size_t rest = (size_t)n - whole;
        if (rest > 0) {
            if (reserve(&c->in, &c->in_cap, rest) < 0) return -1;
            memcpy(c->in, chunk + whole, rest);
            c->in_len = rest;
        }
        if ((size_t)n < chunk_size) return 0;
    }
    return 0;
}

int roster_floor_serve(const char *path) {
    signal(SIGPIPE, SIG_IGN);
    int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listener < 0) return -1;
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof address.sun_path) { errno = ENAMETOOLONG; return -1; }
    strcpy(address.sun_path, path);
    unlink(path);
    if (bind(listener, (struct sockaddr *)&address, sizeof address) < 0) return -1;
    if (listen(listener, 4096) < 0) return -1;
    int epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0) return -1;
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, listener, &ev) < 0) return -1;

    static char chunk[65536];
    struct epoll_event events[256];
    for (;;) {
        int count = epoll_wait(epfd, events, 256, -1);
        if (count < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        for (int i = 0; i < count; i++) {
            struct conn *c = events[i].data.ptr;
            if (!c) {
                int fd;
                while ((fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
                    struct conn *fresh = calloc(1, sizeof *fresh);
                    if (!fresh) { close(fd); continue; }
                    fresh->fd = fd;
                    struct epoll_event add = { .events = EPOLLIN, .data.ptr = fresh };
                    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &add) < 0) { close(fd); free(fresh); }
                }
                continue;
            }
            if (events[i].events & EPOLLOUT) {
                if (send_lines(epfd, c, NULL, 0) < 0) { drop(epfd, c); continue; }
            }
            if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                if (readable(epfd, c, chunk, sizeof chunk) < 0) drop(epfd, c);
            }
        }
    }
}

int roster_pin_to_cpu(int tid, int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(tid, sizeof set, &set);
}

int roster_allowed_cpu_count(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) < 0) return 1;
    return CPU_COUNT(&set);
}

int roster_allow_every_cpu(int tid) {
    cpu_set_t set;
    CPU_ZERO(&set);
    long count = sysconf(_SC_NPROCESSORS_CONF);
    for (long cpu = 0; cpu < count && cpu < CPU_SETSIZE; cpu++) CPU_SET(cpu, &set);
    return sched_setaffinity(tid, sizeof set, &set);
}

const void *roster_find(const void *haystack, size_t haystack_len, const void *needle, size_t needle_len) {
    return memmem(haystack, haystack_len, needle, needle_len);
}
