#include "curl_loop.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    CURL *easy;
    char *body;
    size_t length;
    size_t capacity;
    /// When its current request was added, and its total timeout in milliseconds (0: none).
    double started;
    long timeout_ms;
} aif_bench_slot;

struct aif_bench_curl_loop {
    CURLM *multi;
    /// The POST's `Content-Type`, when the loop posts.
    struct curl_slist *headers;
    aif_bench_slot *slots;
    int concurrency;
    /// How late each timed-out request ended after its timeout, in milliseconds.
    double *lateness;
    long lateness_count;
    long lateness_capacity;
};

static size_t aif_bench_write(char *data, size_t size, size_t count, void *userdata) {
    aif_bench_slot *slot = userdata;
    size_t bytes = size * count;
    if (slot->length + bytes > slot->capacity) {
        size_t capacity = slot->capacity ? slot->capacity * 2 : 4096;
        while (capacity < slot->length + bytes) capacity *= 2;
        char *grown = realloc(slot->body, capacity);
        if (!grown) return 0;
        slot->body = grown;
        slot->capacity = capacity;
    }
    memcpy(slot->body + slot->length, data, bytes);
    slot->length += bytes;
    return bytes;
}

static double aif_bench_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static void aif_bench_note_lateness(aif_bench_curl_loop *loop, double milliseconds) {
    if (loop->lateness_count == loop->lateness_capacity) {
        long capacity = loop->lateness_capacity ? loop->lateness_capacity * 2 : 1024;
        double *grown = realloc(loop->lateness, (size_t)capacity * sizeof(double));
        if (!grown) return;
        loop->lateness = grown;
        loop->lateness_capacity = capacity;
    }
    loop->lateness[loop->lateness_count++] = milliseconds;
}

aif_bench_curl_loop *aif_bench_curl_loop_create(const char *url, const char *ca_file, int concurrency, int http2,
                                                int timeout_every, long timeout_ms, const char *post_body) {
    curl_global_init(CURL_GLOBAL_ALL);
    aif_bench_curl_loop *loop = calloc(1, sizeof(aif_bench_curl_loop));
    if (!loop) return NULL;
    loop->multi = curl_multi_init();
    loop->concurrency = concurrency;
    loop->slots = calloc((size_t)concurrency, sizeof(aif_bench_slot));
    curl_multi_setopt(loop->multi, CURLMOPT_MAXCONNECTS, (long)concurrency);
    curl_multi_setopt(loop->multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    if (post_body) loop->headers = curl_slist_append(NULL, "Content-Type: application/json");
    for (int index = 0; index < concurrency; index++) {
        aif_bench_slot *slot = &loop->slots[index];
        CURL *easy = curl_easy_init();
        slot->easy = easy;
        curl_easy_setopt(easy, CURLOPT_URL, url);
        curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, aif_bench_write);
        curl_easy_setopt(easy, CURLOPT_WRITEDATA, slot);
        curl_easy_setopt(easy, CURLOPT_PRIVATE, slot);
        curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, http2 ? (long)CURL_HTTP_VERSION_2TLS : (long)CURL_HTTP_VERSION_1_1);
        if (http2) curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L);
        if (ca_file) curl_easy_setopt(easy, CURLOPT_CAINFO, ca_file);
        if (post_body) {
            /* libcurl copies the body; its length from strlen. */
            curl_easy_setopt(easy, CURLOPT_COPYPOSTFIELDS, post_body);
            curl_easy_setopt(easy, CURLOPT_HTTPHEADER, loop->headers);
        }
        if (timeout_every > 0 && index % timeout_every == 0) {
            slot->timeout_ms = timeout_ms;
            curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, timeout_ms);
        }
    }
    return loop;
}

void aif_bench_curl_loop_send_as_transport(aif_bench_curl_loop *loop, const char *user_agent) {
    /* The line the transport writes among its default headers: the encodings this libcurl can
       undo, in the order libcurl itself would name them. */
    curl_version_info_data *info = curl_version_info(CURLVERSION_NOW);
    char encodings[64] = "";
    if (info->features & CURL_VERSION_LIBZ) strcat(encodings, "deflate, gzip");
    if (info->features & CURL_VERSION_BROTLI) strcat(encodings, encodings[0] ? ", br" : "br");
    if (info->features & CURL_VERSION_ZSTD) strcat(encodings, encodings[0] ? ", zstd" : "zstd");
    size_t length = strlen("User-Agent: ") + strlen(user_agent) + 1;
    char *line = malloc(length > 64 ? length : 64);
    if (!line) return;
    snprintf(line, length, "User-Agent: %s", user_agent);
    loop->headers = curl_slist_append(loop->headers, line);
    if (encodings[0]) {
        snprintf(line, 64, "Accept-Encoding: %s", encodings);
        loop->headers = curl_slist_append(loop->headers, line);
    }
    free(line);
    for (int index = 0; index < loop->concurrency; index++) {
        CURL *easy = loop->slots[index].easy;
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, loop->headers);
        /* Bodies decoded as the transport's are; libcurl writes no line of its own when the
           request carries one. */
        if (encodings[0]) curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");
    }
}

/* Runs requests back to back on every handle until `deadline` (a time of aif_bench_now; 0: none)
   has passed or `count` requests (-1: no limit) have started, then lets the last ones finish. */
static long aif_bench_curl_loop_run_until(aif_bench_curl_loop *loop, double deadline, long count, long *failures) {
    long completed = 0;
    long started = 0;
    *failures = 0;
    loop->lateness_count = 0;
    int active = 0;
    for (int index = 0; index < loop->concurrency && (count < 0 || started < count); index++) {
        loop->slots[index].length = 0;
        loop->slots[index].started = aif_bench_now();
        curl_multi_add_handle(loop->multi, loop->slots[index].easy);
        started++;
        active++;
    }
    while (active > 0) {
        int running = 0;
        curl_multi_perform(loop->multi, &running);
        CURLMsg *message;
        int left = 0;
        int expired = deadline > 0 && aif_bench_now() >= deadline;
        while ((message = curl_multi_info_read(loop->multi, &left))) {
            if (message->msg != CURLMSG_DONE) continue;
            CURL *easy = message->easy_handle;
            CURLcode result = message->data.result;
            long status = 0;
            curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
            aif_bench_slot *slot = NULL;
            curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&slot);
            if (result == CURLE_OK && status == 200) {
                completed++;
            } else if (result == CURLE_OPERATION_TIMEDOUT && slot->timeout_ms > 0) {
                /* A failure the run asked for: counted, and taken out again with its lateness. */
                aif_bench_note_lateness(loop, (aif_bench_now() - slot->started) * 1000 - (double)slot->timeout_ms);
                (*failures)++;
            } else {
                (*failures)++;
            }
            curl_multi_remove_handle(loop->multi, easy);
            slot->length = 0;
            if (expired || (count >= 0 && started >= count)) {
                active--;
            } else {
                slot->started = aif_bench_now();
                curl_multi_add_handle(loop->multi, easy);
                started++;
            }
        }
        if (active > 0) curl_multi_poll(loop->multi, NULL, 0, 100, NULL);
    }
    return completed;
}

long aif_bench_curl_loop_run(aif_bench_curl_loop *loop, double seconds, long *failures) {
    return aif_bench_curl_loop_run_until(loop, aif_bench_now() + seconds, -1, failures);
}

long aif_bench_curl_loop_run_requests(aif_bench_curl_loop *loop, long count, long *failures) {
    return aif_bench_curl_loop_run_until(loop, 0, count, failures);
}

long aif_bench_curl_loop_lateness(aif_bench_curl_loop *loop, const double **values) {
    *values = loop->lateness;
    return loop->lateness_count;
}

void aif_bench_curl_loop_destroy(aif_bench_curl_loop *loop) {
    for (int index = 0; index < loop->concurrency; index++) {
        curl_easy_cleanup(loop->slots[index].easy);
        free(loop->slots[index].body);
    }
    curl_multi_cleanup(loop->multi);
    curl_slist_free_all(loop->headers);
    free(loop->slots);
    free(loop->lateness);
    free(loop);
}

static size_t aif_bench_write_file(char *data, size_t size, size_t count, void *userdata) {
    return fwrite(data, size, count, (FILE *)userdata) * size;
}

long long aif_bench_curl_download(const char *url, const char *path) {
    FILE *file = fopen(path, "wb");
    if (!file) return -1;
    CURL *easy = curl_easy_init();
    if (!easy) {
        fclose(file);
        return -1;
    }
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, aif_bench_write_file);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, file);
    curl_easy_setopt(easy, CURLOPT_PROXY, "");
    CURLcode code = curl_easy_perform(easy);
    curl_off_t bytes = 0;
    curl_easy_getinfo(easy, CURLINFO_SIZE_DOWNLOAD_T, &bytes);
    curl_easy_cleanup(easy);
    int closed = fclose(file);
    return code == CURLE_OK && closed == 0 ? (long long)bytes : -1;
}
