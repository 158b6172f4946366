import CCurl
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Transfer {
    /// The outcome of a transfer libcurl reports done with `code`, read off its handle.
    func outcome(code: CURLcode, handle: EasyHandle) -> Result<HTTPResponse, TransportError> {
        guard code == CURLE_OK else {
            var failure = error(for: code, handle: handle)
            failure.resends = resends
            return .failure(failure)
        }
        let response = HTTPResponse(
            statusCode: handle.info(long: CURLINFO_RESPONSE_CODE),
            headers: HTTPHeaders(rawBlock: headerBlock.copyBytes()),
            body: body.takeData(),
            httpVersion: Self.httpVersion(handle.info(long: CURLINFO_HTTP_VERSION)),
            location: request.location,
            metrics: metrics(handle)
        )
        headerBlock.release()
        return .success(response)
    }

    private func metrics(_ handle: EasyHandle) -> HTTPResponse.Metrics {
        HTTPResponse.Metrics(
            nameLookup: handle.info(time: CURLINFO_NAMELOOKUP_TIME_T),
            connect: handle.info(time: CURLINFO_CONNECT_TIME_T),
            tlsHandshake: handle.info(time: CURLINFO_APPCONNECT_TIME_T),
            timeToFirstByte: handle.info(time: CURLINFO_STARTTRANSFER_TIME_T),
            total: handle.info(time: CURLINFO_TOTAL_TIME_T),
            bytesSent: handle.info(long: CURLINFO_REQUEST_SIZE) + Int(handle.info(offset: CURLINFO_SIZE_UPLOAD_T)),
            bytesReceived: handle.info(long: CURLINFO_HEADER_SIZE) + Int(handle.info(offset: CURLINFO_SIZE_DOWNLOAD_T)),
            reusedConnection: handle.info(long: CURLINFO_NUM_CONNECTS) == 0,
            resends: resends
        )
    }

    private static func httpVersion(_ value: Int) -> HTTPResponse.Version {
        switch value {
        case Int(CURL_HTTP_VERSION_1_0): .http1_0
        case Int(CURL_HTTP_VERSION_1_1): .http1_1
        case Int(CURL_HTTP_VERSION_2_0): .http2
        case Int(CURL_HTTP_VERSION_3): .http3
        default: .unknown
        }
    }

    /// The error of a transfer the event loop ended at its total deadline (`now`), saying how
    /// far it had got.
    func timeoutError(handle: EasyHandle?, now: UInt64) -> TransportError {
        let limit = effectiveTimeouts.total.map { "\($0)" } ?? "its limit"
        let elapsed = Double(now &- createdAt) / 1_000_000_000
        let stage: String
        guard let handle else {
            return TransportError(.totalTimeout, url: urlString, detail: "the total timeout of \(limit) (HTTPRequest.Timeouts.total) ran out after \((elapsed * 1_000).rounded() / 1_000) s, waiting for one of the host's connections to come free (ConnectionPool.maxConnectionsPerHost)")
        }
        if handle.info(offset: CURLINFO_PRETRANSFER_TIME_T) == 0 {
            stage = handle.info(offset: CURLINFO_CONNECT_TIME_T) == 0
                ? "before a connection was made"
                : "while the connection was being set up"
        } else if headerBlock.count == 0 {
            stage = "waiting for the response"
        } else {
            // libcurl's count: the bytes kept in memory and those handed to a body receiver alike.
            stage = "receiving the response (\(handle.info(offset: CURLINFO_SIZE_DOWNLOAD_T)) body bytes so far)"
        }
        let seconds = (elapsed * 1_000).rounded() / 1_000
        return TransportError(
            .totalTimeout, url: urlString, detail: "the total timeout of \(limit) (HTTPRequest.Timeouts.total) ran out after \(seconds) s, \(stage)", resends: resends)
    }

    /// Translates a libcurl failure into a ``TransportError`` that names what went wrong.
    func error(for code: CURLcode, handle: EasyHandle) -> TransportError {
        let message = handle.errorMessage ?? String(cString: curl_easy_strerror(code))
        let number = Int(code.rawValue)
        func make(_ kind: TransportError.Code, _ tlsReason: TransportError.TLSFailureReason? = nil) -> TransportError {
            TransportError(kind, url: urlString, detail: message, tlsReason: tlsReason, curlCode: number)
        }
        // A TLS alert the server sent about the client's certificate: during the handshake
        // (TLS 1.2), or at the first read or write after it (TLS 1.3).
        if code == CURLE_SSL_CONNECT_ERROR || code == CURLE_RECV_ERROR || code == CURLE_SEND_ERROR, let alert = Self.certificateAlert(in: message) {
            return clientCertificateError(alert: alert, message: message, number)
        }
        if refusedToResend {
            // Stopped before sending again (CURLE_ABORTED_BY_CALLBACK), or before rewinding a
            // streamed body to do so (CURLE_SEND_FAIL_REWIND).
            let what = request.body.isStream ? "a streamed body is sent once" : "a \(request.method) is not idempotent (HTTPRequest.isIdempotent)"
            return TransportError(
                .responseLost, url: urlString,
                detail: "the request went out over a reused connection, which closed before any byte of the answer: the server may have processed it, "
                    + "and it is not sent again on its own: \(what)",
                curlCode: number)
        }
        switch code {
        case CURLE_URL_MALFORMAT:
            return make(.invalidURL)
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_WEIRD_SERVER_REPLY, CURLE_BAD_CONTENT_ENCODING:
            // The URL's scheme was checked before libcurl saw it, so "unsupported protocol"
            // here is the response's ("HTTP/0.9 not allowed": a garbage status line).
            return TransportError(.invalidResponse, url: urlString, detail: "the server's answer is not valid HTTP: \(message)", curlCode: number)
        case CURLE_WRITE_ERROR where receiverFailure != nil:
            return TransportError(.bodyDestinationFailed, url: urlString, detail: receiverFailure ?? message, curlCode: number)
        case CURLE_WRITE_ERROR where exceededBodyLimit, CURLE_FILESIZE_EXCEEDED:
            let limit = "the response body is larger than the limit of \(maxBodySize) bytes"
            return TransportError(.responseTooLarge, url: urlString, detail: limit + " (maxResponseBodySize)", curlCode: number)
        case CURLE_OUT_OF_MEMORY where !hasReceivedBody:
            // libcurl 7.88 reports a header line past its 100 KiB limit as out of memory, with
            // no message of its own; before the body, header growth is what it allocates.
            return TransportError(
                .responseHeadersTooLarge, url: urlString,
                detail: "the response's headers are larger than libcurl accepts (100 KiB a line): \(message)", curlCode: number)
        case CURLE_OPERATION_TIMEDOUT where message.contains("too slow"):
            // The low-speed check: "Operation too slow. Less than 1 bytes/sec transferred …".
            let idle = effectiveTimeouts.idle.map { "\($0.roundedUpSeconds) s" } ?? "the idle limit"
            return TransportError(.stalled, url: urlString, detail: "no byte moved for \(idle) (HTTPRequest.Timeouts.idle): \(message)", curlCode: number)
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return make(.nameResolutionFailed)
        case CURLE_COULDNT_CONNECT where connection?.unixSocketPath != nil:
            let path = connection?.unixSocketPath ?? ""
            let reason = String(cString: strerror(Int32(handle.info(long: CURLINFO_OS_ERRNO))))
            return TransportError(.connectionRefused, url: urlString, detail: "could not connect to the Unix socket \(path): \(reason)", curlCode: number)
        case CURLE_COULDNT_CONNECT:
            switch Int32(handle.info(long: CURLINFO_OS_ERRNO)) {
            case ENETUNREACH, EHOSTUNREACH, ENETDOWN, EHOSTDOWN: return make(.hostUnreachable)
            default: return make(.connectionRefused)
            }
        case CURLE_OPERATION_TIMEDOUT:
            // libcurl reports both limits with one code. The connection phase is over once the
            // transfer is ready to send (pre-transfer time is set); before that, the connect
            // limit fired unless the total limit is the shorter one.
            let connected = handle.info(offset: CURLINFO_PRETRANSFER_TIME_T) > 0
            if !connected, let connect = effectiveTimeouts.connect,
                effectiveTimeouts.total.map({ connect <= $0 }) ?? true
            {
                return make(.connectTimeout)
            }
            return make(.totalTimeout)
        case CURLE_PEER_FAILED_VERIFICATION where Self.isHostNameMismatch(message):
            return make(.tlsFailure, .hostNameMismatch)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_ISSUER_ERROR:
            return make(.tlsFailure, .certificateNotTrusted)
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return make(.tlsFailure, .pinnedKeyMismatch)
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CIPHER:
            return make(.tlsFailure, .handshakeFailed)
        case CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CRL_BADFILE:
            return make(.tlsFailure, .unreadableCertificateAuthorities)
        case CURLE_SSL_CERTPROBLEM:
            let identity = connection?.clientCertificate.map(String.init(describing:)) ?? "client certificate"
            let hint = connection?.clientCertificate?.passphrase != nil && message.contains("private key") ? " (is the passphrase right?)" : ""
            return TransportError(
                .tlsFailure, url: urlString, detail: "the \(identity) could not be used: \(message)\(hint)", tlsReason: .clientCertificateUnusable, curlCode: number)
        case CURLE_TOO_MANY_REDIRECTS:
            return make(.tooManyRedirects)
        case CURLE_GOT_NOTHING:
            // "Empty reply from server": the connection closed before any byte of an answer.
            return lostResponse(message, number)
        case CURLE_RECV_ERROR where isAwaitingAnswer:
            // A broken connection, when nothing of an answer had come since the request went out.
            return lostResponse(message, number)
        case CURLE_PARTIAL_FILE, CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return make(.connectionDropped)
        case CURLE_READ_ERROR, CURLE_ABORTED_BY_CALLBACK, CURLE_SEND_FAIL_REWIND:
            if let uploadFailure {
                return TransportError(.bodySourceFailed, url: urlString, detail: uploadFailure, curlCode: number)
            }
            return make(code == CURLE_SEND_FAIL_REWIND ? .bodySourceFailed : .other)
        default:
            return make(.other)
        }
    }

    /// A connection that closed after the request went out and before any byte of its answer.
    private func lostResponse(_ message: String, _ number: Int) -> TransportError {
        TransportError(
            .responseLost, url: urlString, detail: "the connection closed before any byte of the answer (\(message)): the server may have processed it",
            curlCode: number)
    }

    /// The TLS alert in a libcurl message by which a server refuses or asks for a client
    /// certificate ("tlsv13 alert certificate required", "tlsv1 alert unknown ca", …), or `nil`.
    static func certificateAlert(in message: String) -> String? {
        guard let range = message.range(of: "alert ") else { return nil }
        let alert = message[range.upperBound...].prefix { $0 != "," && $0 != ")" && $0 != "\n" }
        let certificateAlerts = [
            "certificate required", "unknown ca", "bad certificate", "certificate unknown", "certificate revoked",
            "certificate expired", "unsupported certificate", "access denied", "handshake failure",
        ]
        return certificateAlerts.contains { alert.hasPrefix($0) } ? String(alert) : nil
    }

    /// A server's TLS alert about the client's certificate, named: the certificate presented
    /// was refused, or one is required and none was configured. A bare "handshake failure" has
    /// other causes too (no shared cipher), so it stays a failed handshake, with the hint.
    /// Whether libcurl's message says the certificate names another host (OpenSSL's backend:
    /// "no alternative certificate subject name matches target host name 'x'", or "certificate
    /// subject name 'y' does not match target host name 'x'").
    static func isHostNameMismatch(_ message: String) -> Bool {
        message.contains("matches target host name") || message.contains("does not match target host name")
    }

    private func clientCertificateError(alert: String, message: String, _ number: Int) -> TransportError {
        if alert == "handshake failure" {
            let hint = connection?.clientCertificate == nil ? " (a server that requires a client certificate answers this way too)" : ""
            return TransportError(.tlsFailure, url: urlString, detail: message + hint, tlsReason: .handshakeFailed, curlCode: number)
        }
        if let identity = connection?.clientCertificate {
            return TransportError(
                .tlsFailure, url: urlString, detail: "the server refused the \(identity) (TLS alert \"\(alert)\"): \(message)",
                tlsReason: .clientCertificateRefused, curlCode: number)
        }
        return TransportError(
            .tlsFailure, url: urlString,
            detail: "the server requires a client certificate, and none is configured (HTTPRequest.Connection.clientCertificate; TLS alert \"\(alert)\"): \(message)",
            tlsReason: .clientCertificateRequired, curlCode: number)
    }
}
