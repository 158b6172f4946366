#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Keeps what libcurl opens without close-on-exec out of the application's child processes.
///
/// libcurl 7.88 creates the socket pair of each multi handle (its `curl_multi_wakeup` channel)
/// with a plain `socketpair`, so every process the application starts afterwards — through
/// `Process`, `posix_spawn` or `fork` and `exec` — would inherit two descriptors for each of
/// the transport's multi handles. The transport's own descriptors (connections, epoll, eventfd,
/// timers, files) are opened close-on-exec. Used on the event loop's thread as it makes a
/// multi handle, a handful of times in a transport's life.
enum InheritableDescriptors {
    /// The descriptors open in this process now (from `/proc/self/fd`, less the one reading it;
    /// empty where there is none).
    static func open() -> Set<Int32> {
        #if os(Linux)
        guard let directory = opendir("/proc/self/fd") else { return [] }
        defer { closedir(directory) }
        let own = dirfd(directory)
        var open: Set<Int32> = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if let descriptor = Int32(name), descriptor != own { open.insert(descriptor) }
        }
        return open
        #else
        return []
        #endif
    }

    /// Marks close-on-exec each Unix-domain socket opened since `before` (as `open()` gave it)
    /// that is not already. Another thread's socket opened in the same moment may be marked too:
    /// it is then closed in a child that execs, as the process's own sockets are — one passed to
    /// a child on purpose is given to it with `dup2`, which clears the mark.
    static func closeOnExec(socketsOpenedSince before: Set<Int32>) {
        #if os(Linux)
        guard !before.isEmpty else { return }
        for descriptor in open().subtracting(before) where isUnixSocket(descriptor) {
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0, flags & FD_CLOEXEC == 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
        }
        #endif
    }

    private static func isUnixSocket(_ descriptor: Int32) -> Bool {
        var domain: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(descriptor, SOL_SOCKET, SO_DOMAIN, &domain, &length) == 0 && domain == AF_UNIX
    }
}
