// What a loopback round trip costs this machine's kernel and hypervisor, with no JVM in the way: two processes
// play ping-pong with 288-byte messages over TCP, UDP or a Unix socket, each blocked in epoll_wait between
// messages, the pinger paced by nanosleep (gap 0: back to back). Prints each side's CPU (user + system, getrusage)
// per round trip and the mean round trip.
//
//   gcc -O2 -o /tmp/pingpong benchmarks/native/pingpong.c
//   taskset -c 0 /tmp/pingpong tcp 50000 100     # both processes on one vCPU
//   taskset -c 0,1 /tmp/pingpong tcp 50000 100   # free to run on either
//
// Not part of the build: it backs one paragraph of the README (Benchmarks, "Where the tail and the CPU go").
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SIZE 288

static double cpu_us(int who)
{
    struct rusage r;
    getrusage(who, &r);
    return r.ru_utime.tv_sec * 1e6 + r.ru_utime.tv_usec + r.ru_stime.tv_sec * 1e6 + r.ru_stime.tv_usec;
}

static long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void connected_pair(const char *mode, int sv[2])
{
    if (!strcmp(mode, "unix"))
    {
        socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
        return;
    }
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    if (!strcmp(mode, "tcp"))
    {
        int one = 1, listener = socket(AF_INET, SOCK_STREAM, 0);
        bind(listener, (void *)&a, sizeof a);
        listen(listener, 1);
        getsockname(listener, (void *)&a, &len);
        sv[0] = socket(AF_INET, SOCK_STREAM, 0);
        connect(sv[0], (void *)&a, sizeof a);
        sv[1] = accept(listener, 0, 0);
        setsockopt(sv[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        setsockopt(sv[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        close(listener);
        return;
    }
    struct sockaddr_in b = a;
    sv[0] = socket(AF_INET, SOCK_DGRAM, 0);
    sv[1] = socket(AF_INET, SOCK_DGRAM, 0);
    bind(sv[0], (void *)&a, sizeof a);
    bind(sv[1], (void *)&b, sizeof b);
    getsockname(sv[0], (void *)&a, &len);
    len = sizeof b;
    getsockname(sv[1], (void *)&b, &len);
    connect(sv[0], (void *)&b, sizeof b);
    connect(sv[1], (void *)&a, sizeof a);
}

static int epoll_on(int fd)
{
    int ep = epoll_create1(0);
    struct epoll_event e = { .events = EPOLLIN, .data.fd = fd };
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
    return ep;
}

int main(int argc, char **argv)
{
    if (argc != 4)
    {
        fprintf(stderr, "usage: %s tcp|udp|unix ROUND_TRIPS GAP_US\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    const int n = atoi(argv[2]), gap_us = atoi(argv[3]);
    char buf[SIZE];
    int sv[2];
    struct epoll_event e;
    connected_pair(mode, sv);
    if (0 == fork())
    {
        int ep = epoll_on(sv[1]);
        for (int i = 0; i < n; i++)
        {
            epoll_wait(ep, &e, 1, -1);
            ssize_t r = read(sv[1], buf, SIZE);
            if (r <= 0)
            {
                break;
            }
            write(sv[1], buf, r);
        }
        _exit(0);
    }
    int ep = epoll_on(sv[0]);
    memset(buf, 1, SIZE);
    const double cpu0 = cpu_us(RUSAGE_SELF);
    long next = now_ns(), rtt = 0;
    for (int i = 0; i < n; i++)
    {
        next += gap_us * 1000L;
        for (long now; (now = now_ns()) < next;)
        {
            struct timespec s = { 0, next - now };
            nanosleep(&s, 0);
        }
        const long start = now_ns();
        write(sv[0], buf, SIZE);
        epoll_wait(ep, &e, 1, -1);
        read(sv[0], buf, SIZE);
        rtt += now_ns() - start;
    }
    const double pinger = cpu_us(RUSAGE_SELF) - cpu0;
    wait(0);
    printf("%s round_trips=%d gap_us=%d pinger_cpu_us_per_rt=%.1f echo_cpu_us_per_rt=%.1f rtt_us=%.1f\n", mode, n,
        gap_us, pinger / n, cpu_us(RUSAGE_CHILDREN) / n, rtt / 1000.0 / n);
    return 0;
}
