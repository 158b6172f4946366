@testable import AIFTransport
@testable import TestSupport
import Testing

@Suite("HTTP headers")
struct HTTPHeadersTests {
    @Test func rawBlockIsParsedOnLookupWithoutRegardToCase() {
        let raw = Array("Content-Type: application/json\r\nSet-Cookie: a=1\r\nset-cookie:  b=2 \r\nX-Empty:\r\n\r\n".utf8)
        let headers = HTTPHeaders(rawBlock: raw)
        #expect(headers["content-type"] == "application/json")
        #expect(headers["CONTENT-TYPE"] == "application/json")
        #expect(headers.values(for: "Set-Cookie") == ["a=1", "b=2"])
        #expect(headers["X-Empty"] == "")
        #expect(headers["Missing"] == nil)
        #expect(headers.count == 4)
        #expect(headers.fields.map(\.name) == ["Content-Type", "Set-Cookie", "set-cookie", "X-Empty"])
    }

    @Test func setReplacesEveryFieldOfTheNameInPlace() {
        var headers: HTTPHeaders = ["A": "1", "B": "2"]
        headers.add(name: "a", value: "3")
        headers.set(name: "A", value: "9")
        #expect(headers.fields == [.init(name: "A", value: "9"), .init(name: "B", value: "2")])
        headers.remove(name: "b")
        #expect(headers.fields == [.init(name: "A", value: "9")])
        headers.set(name: "C", value: "new")
        #expect(headers["c"] == "new")
    }

    @Test func mergingLetsTheOtherSideWinByName() {
        let defaults: HTTPHeaders = ["User-Agent": "default", "Accept": "*/*"]
        let merged = defaults.merging(["user-agent": "mine", "X-Trace": "1"])
        #expect(merged.values(for: "User-Agent") == ["mine"])
        #expect(merged["Accept"] == "*/*")
        #expect(merged["x-trace"] == "1")
    }

    @Test func headerValidationRejectsLineBreaksAndBadNames() {
        #expect(Transfer.isValidHeader(.init(name: "X-Ok", value: "fine value")))
        #expect(!Transfer.isValidHeader(.init(name: "X-Bad", value: "a\r\nInjected: yes")))
        #expect(!Transfer.isValidHeader(.init(name: "Bad Name", value: "v")))
        #expect(!Transfer.isValidHeader(.init(name: "", value: "v")))
    }
}

@Suite("Proxy configuration and error text")
struct ProxyAndErrorTests {
    @Test func environmentFollowsCurlsRules() {
        let proxy = CurlTransport.ProxyConfiguration.environment([
            "HTTP_PROXY": "http://ignored:1",
            "https_proxy": "http://secure-proxy:3128",
            "ALL_PROXY": "socks5h://fallback:1080",
            "NO_PROXY": "localhost, .internal ,",
        ])
        #expect(proxy.proxy(forScheme: "http") == "socks5h://fallback:1080")
        #expect(proxy.proxy(forScheme: "https") == "http://secure-proxy:3128")
        #expect(proxy.excludedHosts == ["localhost", ".internal"])
        #expect(CurlTransport.ProxyConfiguration.environment([:]) == .none)
    }

    @Test func passwordsNeverReachErrorText() {
        let error = TransportError(.connectionRefused, url: "http://user:hunter2@example.test:8080/path?q=1", detail: "refused")
        #expect(error.url == "http://user:***@example.test:8080/path?q=1")
        #expect(!error.description.contains("hunter2"))
        #expect(TransportError.redactingPassword(in: "https://example.test/a@b") == "https://example.test/a@b")
    }

    @Test func durationsRoundUpToWholeMilliseconds() {
        #expect(Duration.microseconds(1).roundedUpMilliseconds == 1)
        #expect(Duration.milliseconds(1500).roundedUpMilliseconds == 1500)
        #expect(Duration.seconds(2).roundedUpMilliseconds == 2000)
    }
}
