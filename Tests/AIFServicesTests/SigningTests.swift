@testable import TestSupport
@testable import AIFServices
import Foundation
import Testing

/// Expected values were computed independently with Python's `hmac`, `hashlib` and
/// `urllib.parse.quote(…, safe="-._~")`, or come from the RFCs (../shared/signing-test-vectors.md).
@Suite("Signing")
struct SigningTests {
    static let context = SigningContext(time: Date(timeIntervalSince1970: 1_700_000_000), nonce: "0123456789abcdef0123456789abcdef")
    static let credentials = SigningContext.Credentials(publicKey: "pub-key", privateKey: Secret("s3cr3t"))

    @Test func hmacReproducesRFC4231() {
        let case1 = Digest.hmac(Array("Hi There".utf8), key: [UInt8](repeating: 0x0b, count: 20))
        #expect(Digest.hex(case1) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        let case2 = Digest.hmac(Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8))
        #expect(Digest.hex(case2) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(Digest.hmac(Array("x".utf8), key: Array("k".utf8), algorithm: .sha1).count == 20)
        #expect(Digest.hmac(Array("x".utf8), key: Array("k".utf8), algorithm: .sha512).count == 64)
        // Case 6: a key longer than the block is hashed first.
        let case6 = Digest.hmac(Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8), key: [UInt8](repeating: 0xaa, count: 131))
        #expect(Digest.hex(case6) == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    @Test func hmacMatchesRFC2104ForEveryAlgorithmAndKeyLength() {
        // The definition, written out over the plain hash: H((K ^ opad) || H((K ^ ipad) || m)).
        func reference(_ message: [UInt8], key: [UInt8], _ algorithm: Digest.Algorithm, block: Int) -> [UInt8] {
            var padded = key.count > block ? Digest.hash(key, algorithm: algorithm) : key
            padded += [UInt8](repeating: 0, count: block - padded.count)
            let inner = Digest.hash(padded.map { $0 ^ 0x36 } + message, algorithm: algorithm)
            return Digest.hash(padded.map { $0 ^ 0x5C } + inner, algorithm: algorithm)
        }
        var generator = SystemRandomNumberGenerator()
        for (algorithm, block) in [(Digest.Algorithm.sha256, 64), (.sha1, 64), (.sha512, 128), (.md5, 64)] {
            for keyLength in [0, 1, 32, 63, 64, 65, 127, 128, 129, 300] {
                let key = (0..<keyLength).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let message = (0..<Int.random(in: 0..<500, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                #expect(Digest.hmac(message, key: key, algorithm: algorithm) == reference(message, key: key, algorithm, block: block))
            }
        }
    }

    @Test func digestsAndComparison() {
        #expect(Digest.hex(Digest.hash([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Digest.hex(Digest.hash(Array("abc".utf8), algorithm: .md5)) == "900150983cd24fb0d6963f7d28e17f72")
        #expect(Digest.constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!Digest.constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!Digest.constantTimeEquals([1, 2], [1, 2, 3]))
        let nonce = SigningContext.now().nonce
        #expect(nonce.count == 32 && nonce.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        #expect(SigningContext.now().nonce != nonce, "fresh for every request")
    }

    @Test func hexWritesEveryByteValue() {
        let bytes = (0...255).map { UInt8($0) }
        let expected = bytes.map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]], as: UTF8.self)
        }.joined()
        #expect(Digest.hex(bytes) == expected)
        #expect(Digest.hex([UInt8]()) == "")
        var appended = Array("prefix\n".utf8)
        Digest.appendHex(of: bytes, to: &appended)
        #expect(String(decoding: appended, as: UTF8.self) == "prefix\n" + expected)
        var untouched = Array("x".utf8)
        Digest.appendHex(of: [], to: &untouched)
        #expect(untouched == Array("x".utf8))
    }

    @Test func aifHMACSignsTheCanonicalQuery() throws {
        let url = URL(string: "http://api.test/v1/goods/42?b=2&a=hello%20world&a=1&q=%C3%BC/%2B")!
        let signed = try AIFHMACSigner().sign(HTTPRequest(url: url), credentials: Self.credentials, context: Self.context)
        let expected = "3ec071e450bd1d5052ce68b3877b4c9e60b3c56e773233a612454630a9c0e98e"
        #expect(signed.url.absoluteString == "http://api.test/v1/goods/42?b=2&a=hello%20world&a=1&q=%C3%BC%2F%2B"
            + "&api_key=pub-key&timestamp=1700000000&nonce=0123456789abcdef0123456789abcdef&sign=\(expected)")
        let canonical = try AIFHMACSigner().canonicalString(
            method: .get, url: url,
            signedItems: PercentEncoding.queryItems(of: url) + [("api_key", "pub-key"), ("timestamp", "1700000000"), ("nonce", "0123456789abcdef0123456789abcdef")],
            body: .empty)
        #expect(canonical == "GET\n/v1/goods/42\na=1&a=hello%20world&api_key=pub-key&b=2&nonce=0123456789abcdef0123456789abcdef&q=%C3%BC%2F%2B&timestamp=1700000000\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func aifHMACInHeadersCoversTheBody() throws {
        let body = Data(#"{"goods_id":42,"count":2}"#.utf8)
        let request = HTTPRequest(method: .post, url: URL(string: "https://api.test/v1/orders")!, body: .bytes(body))
        let signer = AIFHMACSigner(placement: .headers, coverage: .signatureFieldsOnly)
        let signed = try signer.sign(request, credentials: Self.credentials, context: Self.context)
        #expect(signed.url.absoluteString == "https://api.test/v1/orders")
        #expect(signed.headers["X-API-Key"] == "pub-key")
        #expect(signed.headers["X-Timestamp"] == "1700000000")
        #expect(signed.headers["X-Nonce"] == "0123456789abcdef0123456789abcdef")
        #expect(signed.headers["X-Signature"] == "69c5f58c3011fa80a48a3ea9a7bfc7a040704971f389e06eaff7dd21902ea5ed")
    }

    @Test func aFileBodyIsHashedAsStreamed() throws {
        let body = Data(#"{"goods_id":42,"count":2}"#.utf8)
        let file = FileManager.default.temporaryDirectory.appending(path: "aif-sign-\(UUID().uuidString)")
        try body.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let signer = AIFHMACSigner(placement: .headers, coverage: .signatureFieldsOnly)
        let signed = try signer.sign(
            HTTPRequest(method: .post, url: URL(string: "https://api.test/v1/orders")!, body: .file(path: file.path)),
            credentials: Self.credentials, context: Self.context)
        #expect(signed.headers["X-Signature"] == "69c5f58c3011fa80a48a3ea9a7bfc7a040704971f389e06eaff7dd21902ea5ed")
        let missing = HTTPRequest(method: .post, url: URL(string: "https://api.test/v1/orders")!, body: .file(path: "/nonexistent/body"))
        let error = #expect(throws: SigningError.self) { try signer.sign(missing, credentials: Self.credentials, context: Self.context) }
        #expect(error?.description.contains("/nonexistent/body") == true)
    }

    @Test func rfc9421ReproducesAppendixB25() throws {
        let secret = try #require(Secret(base64: "uzvJfB4u3N0Jy4T7NZ75MDVcr8zSTInedJtkgcu46YW4XByzNJjxBdtjUkdJPBtbmHhIDi6pcl8jsasjlTMtDQ=="))
        let request = HTTPRequest(
            method: .post,
            url: URL(string: "https://example.com/foo?param=Value&Pet=dog")!,
            headers: ["Host": "example.com", "Date": "Tue, 20 Apr 2021 02:07:55 GMT", "Content-Type": "application/json"],
            body: .bytes(Data(#"{"hello": "world"}"#.utf8))
        )
        let signer = HTTPMessageSignatureSigner(
            label: "sig-b25", components: [.header("date"), .authority, .header("content-type")],
            includesNonce: false, includesAlgorithm: false)
        let signed = try signer.sign(
            request, credentials: SigningContext.Credentials(publicKey: "test-shared-secret", privateKey: secret),
            context: SigningContext(time: Date(timeIntervalSince1970: 1_618_884_473), nonce: "unused"))
        #expect(signed.headers["Signature-Input"] == #"sig-b25=("date" "@authority" "content-type");created=1618884473;keyid="test-shared-secret""#)
        #expect(signed.headers["Signature"] == "sig-b25=:pxcQw6G3AjtMBQjwo8XzkZf/bws5LelbaMk5rGIGtE8=:")
        #expect(signed.headers["Content-Digest"] == nil, "not covered, so not added")
    }

    @Test func rfc9421DefaultsCoverTheRequestAndItsBody() throws {
        let request = HTTPRequest(
            method: .post, url: URL(string: "https://api.test:8443/v1/orders?x=1")!,
            headers: ["Content-Type": "application/json"], body: .bytes(Data("{}".utf8)))
        let signed = try HTTPMessageSignatureSigner().sign(request, credentials: Self.credentials, context: Self.context)
        #expect(signed.headers["Content-Digest"] == "sha-256=:RBNvo1WzZ4oRRq0W9+hknpT7T8If536DEMBg9hyq/4o=:")
        #expect(signed.headers["Signature-Input"] == #"sig1=("@method" "@authority" "@path" "@query" "content-type" "content-digest");created=1700000000;nonce="0123456789abcdef0123456789abcdef";keyid="pub-key";alg="hmac-sha256""#)
        let base = try HTTPMessageSignatureSigner().signatureBase(
            for: signed,
            covering: [.method, .authority, .path, .query, .header("content-type"), .header("content-digest")],
            parameters: "P")
        #expect(base == """
            "@method": POST
            "@authority": api.test:8443
            "@path": /v1/orders
            "@query": ?x=1
            "content-type": application/json
            "content-digest": sha-256=:RBNvo1WzZ4oRRq0W9+hknpT7T8If536DEMBg9hyq/4o=:
            "@signature-params": P
            """)
        let expected = Data(Digest.hmac(Array(base.replacingOccurrences(of: "\"@signature-params\": P", with: "\"@signature-params\": " + (signed.headers["Signature-Input"]!.dropFirst(5))).utf8), key: Self.credentials.privateKey.bytes)).base64EncodedString()
        #expect(signed.headers["Signature"] == "sig1=:\(expected):")
    }

    @Test func legacyMD5SignsTheSortedUnescapedParameters() throws {
        let url = URL(string: "http://api.test/search?page=2&keyword=coffee%20beans&api_key=pub-key")!
        let signed = try LegacyMD5Signer().sign(HTTPRequest(url: url), credentials: Self.credentials, context: Self.context)
        #expect(signed.url.absoluteString.hasSuffix("&sign=a52d10b06b18ee68e491c4db7c1ff0fe"))
    }

    @Test func secretsNeverPrint() {
        let credentials = SigningContext.Credentials(publicKey: "pub", privateKey: Secret("top-secret-value"))
        #expect(!"\(credentials)".contains("top-secret-value"))
        #expect(!String(reflecting: credentials).contains("top-secret-value"))
        #expect("\(credentials.privateKey)" == "***")
    }
}

@Suite("Clock skew")
struct ClockSkewTests {
    @Test func aServerClockOffByMoreThanTheToleranceShiftsTimestamps() throws {
        let skew = ServiceRegistry.ClockSkew()
        let local = Date(timeIntervalSince1970: 1_700_000_000)
        let url = URL(string: "http://127.0.0.1/")!
        // Server 2 s ahead: within tolerance.
        skew.record(HTTPResponse(statusCode: 200, headers: ["Date": "Tue, 14 Nov 2023 22:13:22 GMT"], url: url), receivedAt: local)
        #expect(skew.offset == 0)
        // Server 120 s behind.
        skew.record(HTTPResponse(statusCode: 200, headers: ["Date": "Tue, 14 Nov 2023 22:11:20 GMT"], url: url), receivedAt: local)
        #expect(skew.offset == -120)
        let context = skew.context()
        #expect(abs(context.time.timeIntervalSinceNow + 120) < 5)
        // A response without a usable Date changes nothing.
        skew.record(HTTPResponse(statusCode: 200, headers: ["Date": "yesterday"], url: url), receivedAt: local)
        #expect(skew.offset == -120)
        // The same header again (served from the last-header memo) against a later local
        // clock, then a new header: each is measured afresh.
        let later = local.addingTimeInterval(60)
        skew.record(HTTPResponse(statusCode: 200, headers: ["Date": "Tue, 14 Nov 2023 22:11:20 GMT"], url: url), receivedAt: later)
        #expect(skew.offset == -180)
        skew.record(HTTPResponse(statusCode: 200, headers: ["Date": "Tue, 14 Nov 2023 22:14:20 GMT"], url: url), receivedAt: later)
        #expect(skew.offset == 0)
    }

    @Test func httpDatesParseLikeAFormatterWould() throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let date = Date(timeIntervalSince1970: TimeInterval(Int.random(in: -2_000_000_000...4_000_000_000, using: &generator)))
            let text = formatter.string(from: date)
            #expect(ServiceRegistry.ClockSkew.parseIMFFixdate(text) == date, "\(text)")
        }
        #expect(ServiceRegistry.ClockSkew.parseHTTPDate("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(ServiceRegistry.ClockSkew.parseHTTPDate("Sunday, 06-Nov-94 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(ServiceRegistry.ClockSkew.parseHTTPDate("Sun Nov  6 08:49:37 1994") == Date(timeIntervalSince1970: 784_111_777))
        // Not ASCII: no date, and no trap in Foundation's formatter (found by `make fuzz`).
        #expect(ServiceRegistry.ClockSkew.parseHTTPDate("Sun, 06 \u{345}\u{FFFD}-\0\0\0\0\0\0\0%") == nil)
        #expect(ServiceRegistry.ClockSkew.parseHTTPDate("Sunday, 06-Nov-94 08:49:37 GMT\u{301}") == nil)
        for bad in ["Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT", ""] {
            #expect(ServiceRegistry.ClockSkew.parseIMFFixdate(bad) == nil, "\(bad)")
        }
    }
}
