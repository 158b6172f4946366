@testable import AIFTransport
@testable import TestSupport
import Foundation
import Testing

@Suite("CurlTransport: connections and proxies")
struct CurlTransportConnectionTests {
    @Test func keepAliveReusesOneConnection() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        var ports: [String] = []
        var reused: [Bool] = []
        for _ in 0..<5 {
            let response = try await transport.send(HTTPRequest(url: server.url("whoami")))
            ports.append(String(decoding: response.body, as: UTF8.self))
            reused.append(response.metrics.reusedConnection)
        }
        #expect(Set(ports).count == 1, "the server saw one client port: \(ports)")
        #expect(reused == [false, true, true, true, true])
    }

    @Test func theConnectionCacheKeepsUpWithTheConcurrency() async throws {
        // 48 requests at once, three times: with a cache sized to the concurrency, the second and
        // third waves find every connection they need already open.
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        func wave() async throws -> (ports: Set<String>, reused: Int) {
            try await withThrowingTaskGroup(of: (String, Bool).self) { group in
                for _ in 0..<48 {
                    group.addTask {
                        let response = try await transport.send(HTTPRequest(url: server.url("whoami")))
                        return (String(decoding: response.body, as: UTF8.self), response.metrics.reusedConnection)
                    }
                }
                var ports = Set<String>()
                var reused = 0
                for try await (port, wasReused) in group {
                    ports.insert(port)
                    if wasReused { reused += 1 }
                }
                return (ports, reused)
            }
        }
        let first = try await wave()
        let second = try await wave()
        let third = try await wave()
        #expect(second.ports.isSubset(of: first.ports))
        #expect(third.ports.isSubset(of: first.ports))
        #expect(second.reused == 48 && third.reused == 48)
    }

    @Test func aPerHostCapSerialisesOntoOneConnection() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport { $0.connectionPool.maxConnectionsPerHost = 1 }
        defer { transport.shutdown() }
        let ports = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    String(decoding: try await transport.send(HTTPRequest(url: server.url("whoami"))).body, as: UTF8.self)
                }
            }
            var ports = Set<String>()
            for try await port in group { ports.insert(port) }
            return ports
        }
        #expect(ports.count == 1)
    }

    /// A burst of 2,000 loads at once against a server with a backlog of 8 goes over the default
    /// eight connections (counted by the server) and every load ends with its answer; without
    /// the cap libcurl opens a connection per load, and the loads the backlog cannot take stall.
    @Test func aBurstIsServedByTheDefaultPerHostCap() async throws {
        let server = try RawServer(.keepAlive, backlog: 8)
        defer { server.stop() }
        let transport = makeTransport()
        defer { transport.shutdown() }
        let answers = try await burst(2_000, to: URL(string: "http://127.0.0.1:\(server.port)/burst")!, through: transport)
        #expect(answers.count == 2_000)
        #expect(answers.allSatisfy { $0 == 200 })
        #expect(server.acceptedConnections <= 8, "\(server.acceptedConnections) connections")
    }

    /// A per-host limit over one multi handle's share (256 connections) is split over two
    /// handles, 130 connections each; two bursts of 780 loads at once open no more than the 260
    /// allowed in all (counted by the server: the second burst reuses the first one's
    /// connections, in whichever handle they are), and every load ends with its answer.
    @Test func aHostLimitSplitOverMultiHandlesHoldsInAll() async throws {
        let server = try RawServer(.keepAlive, backlog: 512)
        defer { server.stop() }
        let transport = makeTransport { $0.connectionPool.maxConnectionsPerHost = 260 }
        defer { transport.shutdown() }
        for round in 1...2 {
            let answers = try await burst(780, to: URL(string: "http://127.0.0.1:\(server.port)/burst")!, through: transport)
            #expect(answers.count == 780 && answers.allSatisfy { $0 == 200 }, "burst \(round)")
            #expect(server.acceptedConnections <= 260, "\(server.acceptedConnections) connections after burst \(round)")
        }
    }

    /// Sends `count` loads to `url` at once and returns their statuses. The timeouts are
    /// generous: on a loaded machine (the sanitizer's) the host's queue takes its time.
    private func burst(_ count: Int, to url: URL, through transport: CurlTransport) async throws -> [Int] {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<count {
                group.addTask {
                    let request = HTTPRequest(url: url, timeouts: HTTPRequest.Timeouts(connect: .seconds(30), total: .seconds(120), idle: .seconds(60)))
                    return try await transport.send(request).statusCode
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
    }

    /// 256 requests in flight over HTTPS/2 share a few connections (the server allows 100
    /// streams on each) instead of opening one each.
    @Test func http2MultiplexesManyRequestsOnFewConnections() async throws {
        let servers = try await TestServers.shared()
        let transport = makeTransport { $0.tls.certificateAuthorities = .file(path: servers.certificates.caPath) }
        defer { transport.shutdown() }
        // One answer first: the transport knows the origin multiplexes from its first head, and
        // only then lets more transfers than connections go to it.
        _ = try await transport.send(HTTPRequest(url: servers.http2.url("whoami", secure: true)))
        let tag = Arrivals.tag()
        let answers = try await withThrowingTaskGroup(of: (String, HTTPResponse.Version).self) { group in
            for _ in 0..<256 {
                group.addTask {
                    // The server answers none until all 256 have come: all in flight together.
                    let response = try await transport.send(HTTPRequest(url: servers.http2.url("whoami-together/256?tag=\(tag)", secure: true)))
                    return (String(decoding: response.body, as: UTF8.self), response.httpVersion)
                }
            }
            var answers: [(String, HTTPResponse.Version)] = []
            for try await answer in group { answers.append(answer) }
            return answers
        }
        #expect(answers.count == 256)
        #expect(answers.allSatisfy { $0.1 == .http2 })
        var perConnection: [String: Int] = [:]
        for answer in answers { perConnection[answer.0, default: 0] += 1 }
        let loads = perConnection.values.sorted(by: >)
        // Bounded by the per-host cap (without it libcurl 7.88 opened ~150). Within it, libcurl
        // cannot wait for a connection still being set up once the first is known to be
        // HTTP/2 and full, so a few requests get connections of their own.
        #expect(loads.count <= 8, "\(loads.count) connections for 256 requests: \(loads)")
        #expect(loads.prefix(3).reduce(0, +) >= 200, "too little multiplexing: \(loads)")
    }

    /// Streams that never end, more than the connections allowed to their origin: each one's
    /// head arrives, because the transport learns that the origin multiplexes from the first
    /// head over HTTP/2, not from the first answer that ends.
    @Test func moreStreamsThanConnectionsAllGetTheirHeadsOverHTTP2() async throws {
        let servers = try await TestServers.shared()
        let transport = makeTransport {
            $0.tls.certificateAuthorities = .file(path: servers.certificates.caPath)
            $0.connectionPool.maxConnectionsPerHost = 2
        }
        defer { transport.shutdown() }
        // Each stream is kept until all have come (letting go of one would cancel it, and free
        // its slot for the next).
        let streams = try await withThrowingTaskGroup(of: HTTPResponse.Streaming.self) { group in
            for _ in 0..<12 {
                group.addTask { try await transport.stream(HTTPRequest(url: servers.http2.url("held/1", secure: true))) }
            }
            return try await group.reduce(into: [HTTPResponse.Streaming]()) { $0.append($1) }
        }
        let heads = streams.map(\.statusCode)
        #expect(heads == Array(repeating: 200, count: 12))
    }

    @Test func anExplicitProxyReceivesTheRequest() async throws {
        let proxy = try RawServer(.echoRequestLine)
        defer { proxy.stop() }
        let transport = makeTransport { $0.proxy = .explicit("http://127.0.0.1:\(proxy.port)") }
        defer { transport.shutdown() }
        // The proxy answers itself; the origin host is never resolved or contacted.
        let response = try await transport.send(HTTPRequest(url: URL(string: "http://origin.invalid/catalogue?page=2")!))
        #expect(String(decoding: response.body, as: UTF8.self) == "GET http://origin.invalid/catalogue?page=2 HTTP/1.1")
        #expect(proxy.requestLines == ["GET http://origin.invalid/catalogue?page=2 HTTP/1.1"])
    }

    @Test func proxyEnvironmentVariablesAreHonoured() async throws {
        let proxy = try RawServer(.echoRequestLine)
        defer { proxy.stop() }
        let environment = ["http_proxy": "http://127.0.0.1:\(proxy.port)", "no_proxy": "direct.invalid"]
        let transport = makeTransport { $0.proxy = .environment(environment) }
        defer { transport.shutdown() }
        let response = try await transport.send(HTTPRequest(url: URL(string: "http://origin.invalid/x")!))
        #expect(String(decoding: response.body, as: UTF8.self) == "GET http://origin.invalid/x HTTP/1.1")
    }

    /// The configuration's excluded hosts are the whole list: the process's `no_proxy` (read
    /// only by `.environment()`) does not turn an explicit proxy off (libcurl read it for every
    /// request while the list was empty). In a process of its own, whose environment names the
    /// host.
    @Test func theProcesssNoProxyLeavesAnExplicitProxyAlone() async throws {
        let proxy = try RawServer(.echoRequestLine)
        defer { proxy.stop() }
        let run = try await Shell.run(
            helperPath, ["through-proxy", "http://127.0.0.1:\(proxy.port)", "http://origin.invalid/catalogue"],
            environment: ["no_proxy": "origin.invalid", "NO_PROXY": "origin.invalid"], seconds: 60)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput == "GET http://origin.invalid/catalogue HTTP/1.1\n")
        #expect(proxy.requestLines == ["GET http://origin.invalid/catalogue HTTP/1.1"])
    }

    /// A child process the application starts inherits none of the transport's descriptors:
    /// its connections, epoll set, eventfd and timers are opened close-on-exec, and so — once
    /// made — is the socket pair libcurl 7.88 opens in each multi handle without it. In a
    /// process of its own, which lists the descriptors opened while it fetched a page.
    @Test func aChildProcessInheritsNoneOfTheTransportsDescriptors() async throws {
        let server = try await TestServers.shared().plain
        let run = try await Shell.run(helperPath, ["inheritable-descriptors", server.url("whoami").absoluteString], seconds: 60)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput == "", "descriptors a child would inherit")
    }

    @Test func excludedHostsBypassTheProxy() async throws {
        let server = try await TestServers.shared().plain
        let proxy = try RawServer(.echoRequestLine)
        defer { proxy.stop() }
        let transport = makeTransport { $0.proxy = .explicit("http://127.0.0.1:\(proxy.port)", excluding: ["127.0.0.1"]) }
        defer { transport.shutdown() }
        let response = try await transport.send(HTTPRequest(url: server.url("bytes/4")))
        #expect(response.body.count == 4)
        #expect(proxy.requestLines.isEmpty)
    }
}
