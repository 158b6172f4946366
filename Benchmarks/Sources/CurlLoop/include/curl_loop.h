#ifndef AIF_BENCH_CURL_LOOP_H
#define AIF_BENCH_CURL_LOOP_H

// The reference client: libcurl's multi interface driven directly from C, with `concurrency`
// easy handles configured once and re-added after each response. Nothing a libcurl-based
// client can do per request costs less, so it is the ceiling the Swift transport is held to.

#pragma clang assume_nonnull begin

typedef struct aif_bench_curl_loop aif_bench_curl_loop;

/// Creates the loop; `ca_file` may be NULL; `http2` asks for HTTP/2 over TLS via ALPN.
/// Every `timeout_every`-th request chain (0: none) carries a total timeout of `timeout_ms`; how
/// late those timeouts end is kept (`aif_bench_curl_loop_lateness`); they count as failures, as
/// in the other clients, and the measurement takes them out again. With a `post_body` (JSON),
/// every request is a POST of it; NULL for GETs.
aif_bench_curl_loop *_Nullable aif_bench_curl_loop_create(const char *url, const char *_Nullable ca_file,
                                                          int concurrency, int http2,
                                                          int timeout_every, long timeout_ms,
                                                          const char *_Nullable post_body);

/// From now on, sends what the Swift transport sends by default besides the request itself — a
/// `User-Agent` of `user_agent` and an `Accept-Encoding` line naming every encoding this libcurl
/// can undo, with bodies decoded — so that both put the same bytes on the wire and a comparison
/// counts the clients' work rather than their headers.
void aif_bench_curl_loop_send_as_transport(aif_bench_curl_loop *loop, const char *user_agent);

/// Runs requests back to back on every handle for `seconds`; returns how many completed with
/// status 200 (failures are counted in `failures`).
long aif_bench_curl_loop_run(aif_bench_curl_loop *loop, double seconds, long *failures);

/// Runs exactly `count` requests, every handle busy until the last ones are started, and
/// returns how many completed with status 200 (failures are counted in `failures`). For counting
/// instructions a request: the run by time drains its handles at every call, which a profiler's
/// slowness turns into a share of the run.
long aif_bench_curl_loop_run_requests(aif_bench_curl_loop *loop, long count, long *failures);

/// How late each timed-out request of the last run ended after its timeout, in milliseconds.
long aif_bench_curl_loop_lateness(aif_bench_curl_loop *loop, const double *_Nullable *_Nonnull values);

void aif_bench_curl_loop_destroy(aif_bench_curl_loop *loop);

/// Downloads `url` to the file at `path` with one easy handle, writing each buffer as it comes
/// (the plain C way); returns the bytes written, or -1 when the transfer or a write failed.
long long aif_bench_curl_download(const char *url, const char *path);

#pragma clang assume_nonnull end

#endif
