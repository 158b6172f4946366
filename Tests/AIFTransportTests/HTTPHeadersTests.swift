@testable import AIFTransport
@testable import TestSupport
import Testing
import Foundation

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

    /// A lookup in a raw block skips to the lines that begin with the name; what it finds must
    /// be what the parsed fields hold, whatever the lines look like.
    @Test func aLookupInARawBlockFindsWhatTheParsedFieldsHold() {
        let blocks = [
            "Date: Mon, 07 Dec 2026 22:00:00 GMT\r\nDates: no\r\nDat: no\r\n\r\n",
            "Content-Type-Extra: x\r\nContent-Type : text/plain\r\n\tX-Folded: y\r\n",
            "HTTP/1.1 200 OK\r\nlocation:http://a.test:8080/b?c=d\r\nNo colon here\r\n: empty name\r\nLocation:   two  \r\n",
            "x:1\nX: 2\nx-y:3\nx",
            "",
            "\r\n\r\n",
        ]
        let names = ["Date", "Dates", "Content-Type", "content-type-extra", "X-Folded", "Location", "x", "X-Y", "No colon here", "", "Missing"]
        for block in blocks {
            let headers = HTTPHeaders(rawBlock: Array(block.utf8))
            let fields = headers.fields
            for name in names {
                let parsed = fields.filter { HTTPHeaders.namesMatch($0.name, name) }.map(\.value)
                #expect(headers.values(for: name) == parsed, "\(name) in \(block.debugDescription)")
                #expect(headers[name] == parsed.first, "\(name) in \(block.debugDescription)")
            }
        }
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

    @Test func theSubscriptSetsAndRemoves() {
        var headers: HTTPHeaders = ["Accept": "text/plain", "X-Tag": "a"]
        headers.add(name: "x-tag", value: "b")
        headers["ACCEPT"] = "application/json"
        headers["X-Tag"] = nil
        headers["X-New"] = "1"
        #expect(headers.fields == [HTTPHeaders.Field(name: "ACCEPT", value: "application/json"), HTTPHeaders.Field(name: "X-New", value: "1")])
        #expect(headers["accept"] == "application/json")
    }
}

@Suite("HTTP headers: Link fields (RFC 8288)")
struct LinkHeaderTests {
    @Test func linksAreReadWithTheirRelationsAndParameters() {
        let headers: HTTPHeaders = [
            "Link": #"<https://api.example.com/issues?page=2&q=a,b>; rel="next", <https://api.example.com/issues?page=5>; REL="last prev"; title="The \"end\"""#
        ]
        let links = headers.links
        #expect(links.count == 2)
        #expect(links.first?.target == "https://api.example.com/issues?page=2&q=a,b", "a comma inside <…> is part of the target")
        #expect(links.first?.relations == ["next"])
        #expect(links.last?.relations == ["last", "prev"])
        #expect(links.last?.parameters["title"] == #"The "end""#)
        #expect(headers.link("NEXT")?.target == "https://api.example.com/issues?page=2&q=a,b")
        #expect(headers.link("first") == nil)
    }

    @Test func linksOfEveryFieldAndRelativeTargetsResolve() {
        var headers = HTTPHeaders()
        headers.add(name: "Link", value: "</a>; rel=prev")
        headers.add(name: "link", value: "<b?page=3>;rel=next")
        #expect(headers.links.map(\.target) == ["/a", "b?page=3"])
        let base = URL(string: "https://api.example.com/v1/issues?page=2")!
        #expect(headers.link("next")?.url(relativeTo: base)?.absoluteString == "https://api.example.com/v1/b?page=3")
        #expect(headers.link("prev")?.url(relativeTo: base)?.absoluteString == "https://api.example.com/a")
    }

    @Test func aMalformedLinkIsLeftOutAndTheOthersKept() {
        let headers: HTTPHeaders = ["Link": #"nonsense; rel="next", <https://x.test/2>; rel="next" junk, <https://x.test/3>; rel=next, <https://x.test/4>; title="open"#]
        #expect(headers.links.map(\.target) == ["https://x.test/3"])
        #expect(HTTPHeaders().links.isEmpty)
        #expect((["Link": ""] as HTTPHeaders).links.isEmpty)
        #expect((["Link": "<https://x.test/5>"] as HTTPHeaders).links.first?.relations == [])
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
