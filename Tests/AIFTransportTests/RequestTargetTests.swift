@testable import AIFTransport
@testable import TestSupport
import Testing
import Foundation

/// The scanner that decides whether libcurl may be handed the path and query as the request
/// target (the end-to-end check is in CurlTransportRequestTests): every byte of the query is
/// looked at, whichever eight-byte word it falls in.
@Suite("Request target scanning")
struct RequestTargetTests {
    private func target(_ url: [UInt8]) -> (pathStart: Int, queryStart: Int)? {
        url.withUnsafeBufferPointer { Transfer.requestTarget(of: $0) }
    }

    @Test func acceptsPlainURLsWithAQuery() {
        let url = Array("http://127.0.0.1:8080/v1/goods?api_key=k&timestamp=1700000000&sign=0123456789abcdef".utf8)
        let found = target(url)
        #expect(found?.pathStart == 21)
        #expect(found?.queryStart == 30)
        #expect(target(Array("http://h/p".utf8)) == nil, "no query: nothing to gain")
        #expect(target(Array("http://h?q=1".utf8)) == nil, "no path: libcurl adds the slash")
        #expect(target(Array("http://h/a/./b?q=1".utf8)) == nil, "dot segments are libcurl's to remove")
        #expect(target(Array("http://h/p?".utf8))?.queryStart == 10)
        #expect(target(Array("http://h/p#f?q=1".utf8)) == nil, "a question mark in the fragment starts no query")
        #expect(target(Array("http://h/a b?q=1".utf8)) == nil, "the path before the query is checked too")
        #expect(target([]) == nil)
    }

    @Test func theSchemeIsReadInAnyCase() {
        func scheme(_ url: String) -> Transfer.Scheme? {
            Transfer(request: HTTPRequest(url: URL(string: url)!), progress: nil, completion: nil).scheme
        }
        #expect(scheme("http://h/") == .http)
        #expect(scheme("HTTP://h/") == .http)
        #expect(scheme("hTTpS://h/") == .https)
        #expect(scheme("https:h") == .https)
        for other in ["httpx://h/", "ftp://h/", "http", "https", "htt", "h", "httpsx:/", "shttp://h/"] {
            #expect(scheme(other) == nil, "\(other)")
        }
    }

    @Test func everyQueryByteIsChecked() {
        let prefix = Array("http://h/p?".utf8)
        for length in 1...24 {
            for position in 0..<length {
                for bad: UInt8 in [UInt8(ascii: "#"), 0x20, 0x0A, 0x00, 0x7F, 0x80, 0xC3, 0xFF] {
                    var url = prefix + [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    url[prefix.count + position] = bad
                    #expect(target(url) == nil, "byte \(bad) at \(position) of \(length)")
                }
                // Printable neighbours of the excluded values pass.
                var url = prefix + [UInt8](repeating: UInt8(ascii: "a"), count: length)
                url[prefix.count + position] = [UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "~"), UInt8(ascii: "\"")][position % 4]
                #expect(target(url) != nil, "\(length) \(position)")
            }
        }
    }
}
