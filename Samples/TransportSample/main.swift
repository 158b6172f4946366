import AIFNetworking
import AIFNetworkingTesting
import DemoServer
import Foundation

// The transport sample: starts the demo shop server in this process on a free loopback port,
// then fetches from it with CurlTransport — with completion handlers and with async/await —
// and prints what came back.

let server = try await DemoShopServer.start(environment: .online, verifiesSignatures: false)
let base = server.baseURL()
print("Demo shop server listening on \(base)")

let transport = CurlTransport()

func show(_ title: String, _ response: HTTPResponse) {
    let body = String(decoding: response.body, as: UTF8.self)
    print("\n== \(title)")
    print("\(response.httpVersion) \(response.statusCode)  \(response.headers["Content-Type"] ?? "-")  \(response.body.count) bytes  "
        + "total \(response.metrics.total)  reused connection: \(response.metrics.reusedConnection)")
    print(body.count > 400 ? String(body.prefix(400)) + "…" : body)
}

// 1. async/await, a page of the listing.
let firstPage = try await transport.send(HTTPRequest(url: base.appending(path: "v1/goods").appending(queryItems: [URLQueryItem(name: "page", value: "1")])))
show("GET /v1/goods?page=1 (async/await)", firstPage)

// 2. A completion handler, on the transport's thread.
let detail: HTTPResponse = try await withCheckedThrowingContinuation { continuation in
    transport.send(HTTPRequest(url: base.appending(path: "v1/goods/2"))) { result in
        continuation.resume(with: result)
    }
}
show("GET /v1/goods/2 (completion handler)", detail)

// 3. Several in flight at once, over reused connections.
let pages = try await withThrowingTaskGroup(of: (Int, HTTPResponse).self) { group in
    for page in 2...3 {
        group.addTask {
            let url = base.appending(path: "v1/goods").appending(queryItems: [URLQueryItem(name: "page", value: "\(page)")])
            return (page, try await transport.send(HTTPRequest(url: url)))
        }
    }
    var responses: [Int: HTTPResponse] = [:]
    for try await (page, response) in group {
        responses[page] = response
    }
    return responses
}
for page in pages.keys.sorted() {
    show("GET /v1/goods?page=\(page) (concurrent)", pages[page]!)
}

// 4. A missing article: a 404 is a response, not an error.
show("GET /v1/goods/999", try await transport.send(HTTPRequest(url: base.appending(path: "v1/goods/999"))))

// 5. A closed port: a clear error.
do {
    _ = try await transport.send(HTTPRequest(url: URL(string: "http://127.0.0.1:9/v1/goods")!))
} catch {
    print("\n== GET on a closed port\nfailed as expected: \(error)")
}

transport.shutdown()
await server.stop()
print("\nDone.")
