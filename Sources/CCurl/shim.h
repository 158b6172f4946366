#ifndef AIF_CCURL_SHIM_H
#define AIF_CCURL_SHIM_H

// libcurl's option setters and info getters are variadic C functions, which Swift cannot call.
// These `static inline` wrappers give each argument type its own typed entry point. Every symbol
// carries the `aif_` prefix so it cannot collide with another module's shim.

#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <sys/prctl.h>
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
