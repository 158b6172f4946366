@_spi(CrossModule) import AIFTransport
import AIFNetworkingTesting
import Foundation
import Hummingbird
import HummingbirdHTTP2
import HummingbirdTLS
import NIOSSL
import Synchronization

/// The in-process servers the transport tests share, started once per test process on
/// 127.0.0.1 with ports the system picks.
enum TestServers {
    struct Servers: Sendable {
        let plain: LocalServer
        let tls: LocalServer
        let http2: LocalServer
        let certificates: TestCertificates
    }

    private static let started = Task<Servers, any Error> { try await start() }

    /// The servers, started on first use.
    static func shared() async throws -> Servers {
        try await started.value
    }

    /// Starts a set of servers that answer the test routes and those `extraRoutes` adds.
    static func start(adding extraRoutes: @escaping @Sendable (Router<ConnectionContext>) -> Void = { _ in }) async throws -> Servers {
        let certificates = try TestCertificates.processCertificates.get()
        let gzipped = try gzip(Data(TestRoutes.gzipPlainText.utf8))
        let plain = try await LocalServer.start(router: TestRoutes.makeRouter(gzippedBody: gzipped, adding: extraRoutes))

        let tlsConfiguration = try certificates.serverTLSConfiguration()
        let tls = try await LocalServer.start(
            router: TestRoutes.makeRouter(gzippedBody: gzipped, adding: extraRoutes),
            server: .tls(.http1(), tlsConfiguration: tlsConfiguration)
        )
        let http2 = try await LocalServer.start(
            router: TestRoutes.makeRouter(gzippedBody: gzipped, adding: extraRoutes),
            server: .http2Upgrade(tlsConfiguration: tlsConfiguration)
        )
        return Servers(plain: plain, tls: tls, http2: http2, certificates: certificates)
    }

    /// Compresses with the system's `gzip`, so the test does not trust our own code to make
    /// the data it then decodes.
    static func gzip(_ data: Data) throws -> Data {
        let directory = FileManager.default.temporaryDirectory.appending(path: "aif-gzip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "body")
        try data.write(to: file)
        try Shell.run("gzip -9 -n '\(file.path)'")
        return try Data(contentsOf: directory.appending(path: "body.gz"))
    }
}

/// Servers for the connection settings' tests: one requiring client certificates the test CA
/// signed, and one listening on a Unix-domain socket.
enum ConnectionServers {
    private static let mutualTLSServer = Task<LocalServer, any Error> {
        let certificates = try TestCertificates.processCertificates.get()
        return try await LocalServer.start(
            router: TestRoutes.makeRouter(gzippedBody: Data()),
            server: .tls(.http1(), tlsConfiguration: try certificates.mutualTLSConfiguration())
        )
    }

    private static let socketServer = Task<LocalServer, any Error> {
        let path = FileManager.default.temporaryDirectory.appending(path: "aif-\(UUID().uuidString.prefix(8)).sock").path
        atexit { unlink(ConnectionServers.socketPathForCleanUp.withLock { $0 }) }
        socketPathForCleanUp.withLock { $0 = path }
        return try await LocalServer.start(router: TestRoutes.makeRouter(gzippedBody: Data()), unixSocketPath: path)
    }

    private static let socketPathForCleanUp = Mutex("")

    /// A TLS server that requires a client certificate the test CA signed.
    static func mutualTLS() async throws -> LocalServer { try await mutualTLSServer.value }
    /// An HTTP server on a Unix-domain socket.
    static func unixSocket() async throws -> LocalServer { try await socketServer.value }
}

/// A CA, a server certificate it signed for 127.0.0.1 and localhost, and the server key's pin,
/// generated afresh by `openssl` for each test process.
struct TestCertificates: Sendable {
    let directory: URL
    var caPath: String { directory.appending(path: "ca.pem").path }
    var serverCertificatePath: String { directory.appending(path: "server.pem").path }
    var serverKeyPath: String { directory.appending(path: "server.key").path }
    /// base64 SHA-256 of the server's SubjectPublicKeyInfo.
    let serverKeyPin: String
    /// The pin of an unrelated key.
    let otherKeyPin: String
    /// A client certificate the CA signed, and its key (in clear, and encrypted with
    /// ``clientKeyPassphrase``).
    var clientCertificatePath: String { directory.appending(path: "client.pem").path }
    var clientKeyPath: String { directory.appending(path: "client.key").path }
    var encryptedClientKeyPath: String { directory.appending(path: "client-encrypted.key").path }
    static let clientKeyPassphrase = "correct-horse-battery"
    /// A client certificate of the same name that another CA signed, and its key.
    var rogueClientCertificatePath: String { directory.appending(path: "rogue-client.pem").path }
    var rogueClientKeyPath: String { directory.appending(path: "rogue-client.key").path }

    /// Where this process's certificates live; removed when the process exits.
    private static let processDirectory = FileManager.default.temporaryDirectory.appending(path: "aif-tls-\(UUID().uuidString)")

    /// This process's certificates, made on first use: every set of servers the process starts
    /// shares them (and so does every client that trusts the CA).
    static let processCertificates = Result { try generate() }

    private static func generate() throws -> TestCertificates {
        let directory = processDirectory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: TestCertificates.processDirectory) }
        let dir = directory.path
        try Shell.run("""
            set -e
            cd '\(dir)'
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem \
              -days 2 -subj '/CN=AIFNetworking Test CA' \
              -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign,cRLSign' 2>/dev/null
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key -out server.csr \
              -subj '/CN=localhost' 2>/dev/null
            printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:api.aif.test\\nbasicConstraints=CA:FALSE\\nkeyUsage=critical,digitalSignature\\nextendedKeyUsage=serverAuth\\n' > server.ext
            openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 \
              -extfile server.ext 2>/dev/null
            openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out other.key 2>/dev/null
            printf 'basicConstraints=CA:FALSE\\nkeyUsage=critical,digitalSignature\\nextendedKeyUsage=clientAuth\\n' > client.ext
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout client.key -out client.csr \
              -subj '/CN=aif-test-client' 2>/dev/null
            openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem -days 2 \
              -extfile client.ext 2>/dev/null
            openssl pkey -in client.key -aes256 -passout pass:\(Self.clientKeyPassphrase) -out client-encrypted.key
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout rogue-ca.key -out rogue-ca.pem \
              -days 2 -subj '/CN=Someone Else CA' \
              -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign,cRLSign' 2>/dev/null
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout rogue-client.key -out rogue-client.csr \
              -subj '/CN=aif-test-client' 2>/dev/null
            openssl x509 -req -in rogue-client.csr -CA rogue-ca.pem -CAkey rogue-ca.key -CAcreateserial -out rogue-client.pem \
              -days 2 -extfile client.ext 2>/dev/null
            """)
        let pin = try Shell.run("cd '\(dir)' && openssl x509 -in server.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64")
        let otherPin = try Shell.run("cd '\(dir)' && openssl pkey -in other.key -pubout -outform der | openssl dgst -sha256 -binary | base64")
        return TestCertificates(
            directory: directory,
            serverKeyPin: pin.trimmingCharacters(in: .whitespacesAndNewlines),
            otherKeyPin: otherPin.trimmingCharacters(in: .whitespacesAndNewlines)
        )
    }

    func serverTLSConfiguration() throws -> TLSConfiguration {
        let chain = try NIOSSLCertificate.fromPEMFile(serverCertificatePath).map { NIOSSLCertificateSource.certificate($0) }
        let key = try NIOSSLPrivateKey(file: serverKeyPath, format: .pem)
        return TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
    }

    /// The server's TLS settings, requiring a client certificate the CA signed (mutual TLS).
    func mutualTLSConfiguration() throws -> TLSConfiguration {
        var configuration = try serverTLSConfiguration()
        configuration.certificateVerification = .noHostnameVerification
        configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caPath))
        return configuration
    }
}

/// Runs shell commands for test set-up.
enum Shell {
    /// What a program printed, and how it exited.
    struct Run {
        let status: Int32
        let standardOutput: String
        let standardError: String
    }

    /// A program that had not exited by its deadline, stopped with what it had printed.
    struct Overrun: Error, CustomStringConvertible {
        let program: String
        let seconds: Int
        let standardOutput: String
        let standardError: String
        var description: String {
            "\(program) had not exited after \(seconds) s and was killed; it printed:\n\(standardOutput)\nand on standard error:\n\(standardError)"
        }
    }

    /// Runs a program with these arguments and environment additions until it exits, without
    /// holding a thread of the test process meanwhile (the program may talk to its servers). A
    /// program still running after `seconds` is killed, and the run ends in an ``Overrun`` that
    /// shows what it printed: a test never waits without end.
    static func run(_ program: String, _ arguments: [String], environment: [String: String] = [:], seconds: Int = 180) async throws -> Run {
        let directory = FileManager.default.temporaryDirectory.appending(path: "aif-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appending(path: "out"), err = directory.appending(path: "err")
        try Data().write(to: out)
        try Data().write(to: err)
        @Sendable func printed() -> (String, String) {
            ((try? String(contentsOf: out, encoding: .utf8)) ?? "", (try? String(contentsOf: err, encoding: .utf8)) ?? "")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        // Whichever comes first, the exit or the deadline, ends the wait; the other finds it ended.
        let ended = Locked(false)
        try await withCheckedThrowingContinuation { (exited: CheckedContinuation<Void, any Error>) in
            let end: @Sendable (Result<Void, any Error>) -> Void = { result in
                if ended.withLock({ ended in defer { ended = true }; return !ended }) { exited.resume(with: result) }
            }
            process.terminationHandler = { _ in end(.success(())) }
            do {
                try process.run()
            } catch {
                end(.failure(error))
                return
            }
            let pid = process.processIdentifier
            DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(seconds)) {
                // The run is claimed for the overrun before the kill: the exit the kill causes
                // then finds it ended (claimed after, the termination handler could win the race
                // while what was printed is read, and the killed run looked like a plain exit).
                guard ended.withLock({ ended in defer { ended = true }; return !ended }) else { return }
                kill(pid, SIGKILL)
                let (standardOutput, standardError) = printed()
                exited.resume(throwing: Overrun(program: "\(program) \(arguments.joined(separator: " "))", seconds: seconds, standardOutput: standardOutput, standardError: standardError))
            }
        }
        let (standardOutput, standardError) = printed()
        return Run(status: process.terminationStatus, standardOutput: standardOutput, standardError: standardError)
    }

    struct Failure: Error, CustomStringConvertible {
        let command: String
        let status: Int32
        let output: String
        var description: String { "`\(command)` exited with \(status): \(output)" }
    }

    @discardableResult
    static func run(_ command: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", command]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw Failure(command: command, status: process.terminationStatus, output: text)
        }
        return text
    }
}
