#ifndef AIF_CCURL_SHIM_H
#define AIF_CCURL_SHIM_H

// libcurl's option setters and info getters are variadic C functions, which Swift cannot call.
// These `static inline` wrappers give each argument type its own typed entry point. Every symbol
// carries the `aif_` prefix so it cannot collide with another module's shim.

#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <malloc.h>
#include <sys/syscall.h>
#include <unistd.h>

#pragma clang assume_nonnull begin

/// The usable size of a block from `malloc` (`malloc_usable_size`, in glibc and musl).
static inline size_t aif_malloc_usable_size(void *block) {
    return malloc_usable_size(block);
}

// MARK: - Constants Swift cannot import (macros built from other macros or casts)

static const long aif_curl_global_all = CURL_GLOBAL_ALL;
static const long aif_curlpipe_multiplex = CURLPIPE_MULTIPLEX;
static const size_t aif_curl_readfunc_abort = CURL_READFUNC_ABORT;
static const size_t aif_curl_writefunc_error = 0xFFFFFFFF;
static const int aif_curl_seekfunc_ok = CURL_SEEKFUNC_OK;
static const int aif_curl_seekfunc_fail = CURL_SEEKFUNC_FAIL;
static const int aif_curl_seekfunc_cantseek = CURL_SEEKFUNC_CANTSEEK;
static const size_t aif_curl_readfunc_pause = CURL_READFUNC_PAUSE;
static const size_t aif_curl_writefunc_pause = CURL_WRITEFUNC_PAUSE;
static const int aif_curlpause_recv = CURLPAUSE_RECV;
static const int aif_curlpause_send = CURLPAUSE_SEND;
static const curl_socket_t aif_curl_socket_timeout = CURL_SOCKET_TIMEOUT;
static const int aif_curl_prereqfunc_ok = CURL_PREREQFUNC_OK;
static const int aif_curl_prereqfunc_abort = CURL_PREREQFUNC_ABORT;

/// The running libcurl's version and its TLS library's (`curl_version_info(CURLVERSION_NOW)`).
static inline const curl_version_info_data *aif_curl_version_info(void) {
    return curl_version_info(CURLVERSION_NOW);
}

// MARK: - Callback types

/// Signature shared by CURLOPT_WRITEFUNCTION, CURLOPT_HEADERFUNCTION and CURLOPT_READFUNCTION.
typedef size_t (*aif_curl_data_callback)(char *_Nullable buffer, size_t size, size_t count, void *_Nullable userdata);
typedef int (*aif_curl_xferinfo_callback)(void *_Nullable userdata, curl_off_t dltotal, curl_off_t dlnow,
                                          curl_off_t ultotal, curl_off_t ulnow);
typedef int (*aif_curl_seek_callback)(void *_Nullable userdata, curl_off_t offset, int origin);
/// CURLOPT_PREREQFUNCTION: libcurl is about to send the request on a connection made or reused
/// for it (and again if it sends the request once more on a fresh connection).
typedef int (*aif_curl_prereq_callback)(void *_Nullable userdata, char *_Nullable primary_ip, char *_Nullable local_ip,
                                        int primary_port, int local_port);
/// CURLMOPT_SOCKETFUNCTION: libcurl says which socket to watch for what (`CURL_POLL_*`).
typedef int (*aif_curl_socket_callback)(CURL *easy, curl_socket_t socket, int what, void *_Nullable userdata,
                                        void *_Nullable socketdata);
/// CURLOPT_OPENSOCKETFUNCTION and CURLOPT_CLOSESOCKETFUNCTION: libcurl's connection sockets,
/// opened and closed by the event loop, which so knows when a descriptor number is free again.
typedef curl_socket_t (*aif_curl_opensocket_callback)(void *_Nullable clientp, curlsocktype purpose,
                                                      struct curl_sockaddr *address);
typedef int (*aif_curl_closesocket_callback)(void *_Nullable clientp, curl_socket_t socket);
/// CURLMOPT_TIMERFUNCTION: when libcurl next wants `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)`.
typedef int (*aif_curl_timer_callback)(CURLM *multi, long timeout_ms, void *_Nullable userdata);

// MARK: - curl_easy_setopt

static inline CURLcode aif_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode aif_curl_easy_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode aif_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *_Nullable value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode aif_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *_Nullable value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode aif_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *_Nullable value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode aif_curl_easy_setopt_blob(CURL *handle, CURLoption option, void *data, size_t length) {
    struct curl_blob blob;
    blob.data = data;
    blob.len = length;
    blob.flags = CURL_BLOB_COPY;
    return curl_easy_setopt(handle, option, &blob);
}

static inline CURLcode aif_curl_easy_setopt_data_callback(CURL *handle, CURLoption option,
                                                          aif_curl_data_callback _Nullable callback) {
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode aif_curl_easy_setopt_xferinfo_callback(CURL *handle,
                                                              aif_curl_xferinfo_callback _Nullable callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

static inline CURLcode aif_curl_easy_setopt_seek_callback(CURL *handle, aif_curl_seek_callback _Nullable callback) {
    return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, callback);
}

static inline CURLcode aif_curl_easy_setopt_prereq_callback(CURL *handle, aif_curl_prereq_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, callback);
}

static inline CURLcode aif_curl_easy_setopt_opensocket_callback(CURL *handle, aif_curl_opensocket_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, callback);
}

static inline CURLcode aif_curl_easy_setopt_closesocket_callback(CURL *handle, aif_curl_closesocket_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_CLOSESOCKETFUNCTION, callback);
}

/// Opens the socket libcurl describes, as libcurl does without an open-socket callback, and
/// close-on-exec, so that a child process the application starts does not inherit connections.
static inline curl_socket_t aif_curl_open_socket(const struct curl_sockaddr *address) {
    return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

// MARK: - curl_easy_getinfo

static inline CURLcode aif_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode aif_curl_easy_getinfo_offset(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode aif_curl_easy_getinfo_string(CURL *handle, CURLINFO info, char *_Nullable *_Nonnull value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode aif_curl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void *_Nullable *_Nonnull value) {
    return curl_easy_getinfo(handle, info, value);
}

// MARK: - curl_multi_setopt

static inline CURLMcode aif_curl_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}

static inline CURLMcode aif_curl_multi_setopt_pointer(CURLM *handle, CURLMoption option, void *_Nullable value) {
    return curl_multi_setopt(handle, option, value);
}

static inline CURLMcode aif_curl_multi_setopt_socket_callback(CURLM *handle, aif_curl_socket_callback callback) {
    return curl_multi_setopt(handle, CURLMOPT_SOCKETFUNCTION, callback);
}

static inline CURLMcode aif_curl_multi_setopt_timer_callback(CURLM *handle, aif_curl_timer_callback callback) {
    return curl_multi_setopt(handle, CURLMOPT_TIMERFUNCTION, callback);
}

// MARK: - epoll and eventfd, for the socket API
// Glibc's module does not export these headers to Swift, and `struct epoll_event` is packed on
// x86-64, so the event loop goes through these few calls instead.

/// A socket epoll reported ready, with what it is ready for as `CURL_CSELECT_*` bits.
typedef struct {
    int fd;
    int events;
} aif_ready_socket;

static inline int aif_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

/// A non-blocking eventfd, the loop's wake-up signal.
static inline int aif_eventfd_create(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

/// Makes epoll report `fd` when it is ready for what `what` (`CURL_POLL_IN`, `_OUT`, `_INOUT`)
/// asks. `known` says whether it is already in the set: the call then modifies it, otherwise it
/// adds it; either falls back to the other if the set disagrees (a descriptor number closed and
/// reused). Returns 0, or -1 with `errno` set.
static inline int aif_epoll_watch(int epfd, int fd, int what, int known) {
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    event.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0);
    event.data.fd = fd;
    int first = known ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (epoll_ctl(epfd, first, fd, &event) == 0) return 0;
    if (known && errno == ENOENT) return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &event);
    if (!known && errno == EEXIST) return epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &event);
    return -1;
}

/// Takes `fd` out of the set; a descriptor already closed (and so already gone) is not an error.
static inline void aif_epoll_unwatch(int epfd, int fd) {
    struct epoll_event unused;
    memset(&unused, 0, sizeof unused);
    (void)epoll_ctl(epfd, EPOLL_CTL_DEL, fd, &unused);
}

enum { aif_epoll_batch = 256 };

/// Waits up to `timeout_ms` (-1: no limit) for ready descriptors and writes at most
/// `aif_epoll_batch` of them to `ready`, their readiness as `CURL_CSELECT_*` bits (a hang-up reads
/// as readable, so that the reader sees the end). Returns how many, 0 on timeout or when a signal
/// interrupted the wait, -1 with `errno` on failure.
static inline int aif_epoll_wait(int epfd, aif_ready_socket *ready, int timeout_ms) {
    struct epoll_event events[aif_epoll_batch];
    int count = epoll_wait(epfd, events, aif_epoll_batch, timeout_ms);
    if (count < 0) return errno == EINTR ? 0 : -1;
    for (int index = 0; index < count; index++) {
        uint32_t flags = events[index].events;
        ready[index].fd = events[index].data.fd;
        ready[index].events = ((flags & (EPOLLIN | EPOLLHUP | EPOLLRDHUP)) ? CURL_CSELECT_IN : 0)
            | ((flags & EPOLLOUT) ? CURL_CSELECT_OUT : 0) | ((flags & EPOLLERR) ? CURL_CSELECT_ERR : 0);
    }
    return count;
}

/// Adds one to an eventfd's counter, which makes it readable; never blocks (a full counter
/// already reads as readable).
static inline void aif_eventfd_signal(int fd) {
    uint64_t one = 1;
    ssize_t written = write(fd, &one, sizeof one);
    (void)written;
}

/// Resets an eventfd's counter to zero.
static inline void aif_eventfd_drain(int fd) {
    uint64_t count;
    ssize_t read_bytes = read(fd, &count, sizeof count);
    (void)read_bytes;
}

// MARK: - CURLMsg

/// The result code of a CURLMSG_DONE message (a union member Swift reads awkwardly).
static inline CURLcode aif_curl_msg_result(const CURLMsg *message) {
    return message->data.result;
}

// MARK: - The event loop's thread

/// Names the calling thread (at most 15 bytes are kept), as `top -H` and debuggers show it.
/// `prctl` is variadic too, hence the wrapper.
static inline int aif_set_current_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

// MARK: - Processors

/// The raw `sched_getaffinity` system call: fills `mask` (`size` bytes, zeroed by the caller)
/// with the CPUs process `pid` may run on and returns how many bytes the kernel wrote, or -1
/// (`EINVAL` when `size` is smaller than the kernel's mask). glibc declares its wrapper only
/// under `_GNU_SOURCE`, which a module cannot switch on for headers another module owns.
static inline long aif_sched_getaffinity(int pid, size_t size, void *mask) {
    return syscall(SYS_sched_getaffinity, pid, size, mask);
}

#pragma clang assume_nonnull end

#endif
