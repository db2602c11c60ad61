/* SSE subscribers for bench/bench_realtime.py: N raw HTTP/1.1 stream connections read through one
 * epoll, so that the client side of the fan-out benchmark costs a fraction of what the server does
 * (a Python client parsing 100k frames/s saturates its core and its own lag shows up as latency).
 *
 * Usage: sse_subscribers PORT CLIENTS PATH LATENCIES_FILE
 *   Prints "open" once every stream has answered 200, reads until SIGTERM, then writes every
 *   latency (seconds, native doubles: receive time - the "t" stamp in the frame's payload) to
 *   LATENCIES_FILE and prints "frames=<n> violations=<n> fewest=<n> latencies=<n>".
 *   A violation is an event id that is not above the previous id of its connection (a duplicate
 *   or an out-of-order frame). Only whole frames (up to the last blank line) are parsed.
 *
 * Benchmark tooling only (compiled by the benchmark with the machine's cc); not part of the
 * service. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BUF (1 << 17)

typedef struct {
    int fd;
    size_t len; /* bytes held in buf (an incomplete frame) */
    long long last_id;
    long long frames;
    char *buf;
} conn_t;

static volatile sig_atomic_t stop = 0;
static void on_term(int sig) { (void)sig; stop = 1; }

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double *lat = NULL;
static size_t nlat = 0, caplat = 0;
static long long violations = 0;

static void add_latency(double v) {
    if (nlat == caplat) {
        caplat = caplat ? caplat * 2 : (1 << 20);
        lat = realloc(lat, caplat * sizeof(double));
        if (!lat) { perror("realloc"); exit(1); }
    }
    lat[nlat++] = v;
}

/* Parse the whole frames in c->buf[0..end): each data frame's "id":"N" and its payload's "t":X. */
static void parse(conn_t *c, size_t end, double now) {
    char *p = c->buf, *limit = c->buf + end;
    for (;;) {
        char *id = memmem(p, limit - p, "\"id\":\"", 6);
        if (!id) break;
        id += 6;
        long long value = strtoll(id, NULL, 10);
        char *t = memmem(id, limit - id, "\"t\":", 4);
        if (!t) break;
        double stamp = strtod(t + 4, NULL);
        if (value <= c->last_id) violations++;
        c->last_id = value;
        c->frames++;
        add_latency(now - stamp);
        p = t + 4;
    }
}

static int open_stream(int port, const char *path, conn_t *c) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) { perror("connect"); return -1; }
    char req[1024];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: bench\r\n\r\n", path);
    if (write(fd, req, n) != n) { perror("write"); return -1; }
    c->fd = fd;
    c->buf = malloc(BUF);
    c->len = 0;
    for (;;) { /* the status line and headers; keep what follows them */
        ssize_t r = read(fd, c->buf + c->len, BUF - c->len);
        if (r <= 0) { fprintf(stderr, "stream closed before its headers\n"); return -1; }
        c->len += r;
        char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
        if (end) {
            if (!memmem(c->buf, end - c->buf, " 200 ", 5)) {
                fprintf(stderr, "stream refused: %.*s\n", (int)(end - c->buf), c->buf);
                return -1;
            }
            size_t head = end + 4 - c->buf;
            memmove(c->buf, c->buf + head, c->len - head);
            c->len -= head;
            return 0;
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: %s PORT CLIENTS PATH LATENCIES_FILE\n", argv[0]); return 2; }
    int port = atoi(argv[1]), n = atoi(argv[2]);
    signal(SIGTERM, on_term);
    conn_t *conns = calloc(n, sizeof(conn_t));
    int ep = epoll_create1(0);
    for (int i = 0; i < n; i++) {
        if (open_stream(port, argv[3], &conns[i]) < 0) return 1;
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &conns[i]};
        epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev);
        if (i % 100 == 99) usleep(50000);
    }
    printf("open\n");
    fflush(stdout);
    struct epoll_event evs[1024];
    while (!stop) {
        int k = epoll_wait(ep, evs, 1024, 50);
        if (k < 0 && errno == EINTR) continue;
        double now = now_s();
        for (int i = 0; i < k; i++) {
            conn_t *c = evs[i].data.ptr;
            ssize_t r = read(c->fd, c->buf + c->len, BUF - c->len);
            if (r <= 0) { epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL); continue; }
            c->len += r;
            /* whole frames only: up to the last blank line */
            size_t end = 0;
            for (size_t j = c->len; j >= 2; j--)
                if (c->buf[j - 1] == '\n' && c->buf[j - 2] == '\n') { end = j; break; }
            if (!end) {
                if (c->len == BUF) c->len = 0; /* never: frames are far smaller than BUF */
                continue;
            }
            parse(c, end, now);
            memmove(c->buf, c->buf + end, c->len - end);
            c->len -= end;
        }
    }
    long long frames = 0, fewest = -1;
    for (int i = 0; i < n; i++) {
        frames += conns[i].frames;
        if (fewest < 0 || conns[i].frames < fewest) fewest = conns[i].frames;
    }
    FILE *f = fopen(argv[4], "wb");
    if (!f || fwrite(lat, sizeof(double), nlat, f) != nlat) { perror("latencies"); return 1; }
    fclose(f);
    printf("frames=%lld violations=%lld fewest=%lld latencies=%zu\n", frames, violations, fewest, nlat);
    return 0;
}
