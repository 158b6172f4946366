import Foundation

extension Load {
    /// The outcome of a load the engine ended: its failure, or its answer checked and decoded
    /// (``conclude(_:plan:id:attempts:subject:)``), a failure saying why it was not retried.
    static func conclude<Subject: LoadSubject>(_ ending: LoadEnding, plan: LoadPlan, id: LoadID, subject: Subject?) -> LoadOutcome<Subject.Content> {
        switch ending {
        case .failed(let error):
            return .failure(error)
        case .answered(let exchange, let attempts, let note, let retryableAt):
            let concluded = conclude(exchange, plan: plan, id: id, attempts: attempts, subject: subject)
            guard let note else { return concluded }
            return concluded.mapError { $0.explaining(notRetried: note, retryableAt: retryableAt) }
        }
    }

    /// Checks the response: the service's veto, the status, the body, decoding, validation;
    /// stores it in the cache when it passes. Inlined into the engine: each generic function
    /// looks up the metadata of the response types it touches on every call.
    @inline(__always)
    static func conclude<Subject: LoadSubject>(
        _ exchange: Result<Exchange, APIError>, plan: LoadPlan, id: LoadID, attempts: Int, subject: Subject?
    ) -> LoadOutcome<Subject.Content> {
        let request: HTTPRequest
        var response: HTTPResponse
        var origin = HTTPResponse.Origin.network
        // The service's veto when the engine asked for it already — not when the cache's
        // response replaced the 304 it was asked about.
        var askedVeto: ServiceVeto?? = nil
        switch exchange {
        case .success(let exchange):
            request = exchange.request
            response = exchange.response
            askedVeto = exchange.veto
            if let use = plan.cache, let revalidated = use.revalidated(by: response) {
                response = revalidated
                origin = .revalidated
                askedVeto = nil
            }
        case .failure(let error):
            if let use = plan.cache, let fallback = offlineFallback(for: error, use, plan: plan, id: id, subject: subject) { return .success(fallback) }
            return .failure(error)
        }
        func failure(_ kind: APIError.Kind, _ message: String, _ underlying: (any Error)? = nil) -> LoadOutcome<Subject.Content> {
            .failure(plan.error(kind, id: id, message, underlying, response, attempts: attempts))
        }
        guard let subject else { return .failure(plan.error(.cancelled, id: id, "the manager was deallocated")) }

        // The body's JSON, parsed once: by the service's rule (in the engine, or here), then read
        // by the decoder. The response kept (cached, delivered) does not hold it.
        var json = response.json
        response.json = nil
        // The service judges the content of an answer whose status succeeded; a failed status
        // keeps its own error (its veto's code reached the error policies in the engine).
        guard response.isSuccess else {
            return .failure(statusError(response, request: request, plan: plan, id: id, attempts: attempts, subject: subject))
        }
        if let veto = askedVeto ?? plan.resolved.service.verdict(on: response, json: &json, graphQL: plan.readsGraphQLErrors) {
            return .failure(vetoError(veto, response, plan: plan, id: id, attempts: attempts, subject: subject))
        }
        if response.body.isEmpty, !(Subject.Content.self == NoContent.self) {
            return failure(.noContent, "the \(response.statusCode) response has no body, but \(Subject.Content.self) was expected")
        }
        let content: Subject.Content
        do {
            var parsed = response
            parsed.json = json
            content = try subject.decodeContent(from: parsed, service: plan.resolved.service)
        } catch {
            let message = APIError.describeDecoding(error, body: response.body, contentType: response.headers["Content-Type"])
            return failure(.decodingFailed, "the body is not a \(Subject.Content.self): \(message)", error)
        }
        let apiResponse = APIResponse(
            loadID: id, response: response, content: content, request: request, parameters: plan.parameters, origin: origin, attempts: attempts,
            refreshes: plan.cache?.refreshes, warnings: warnings(in: json, of: plan.resolved.service))
        do {
            try subject.endpoint.validateResponse?(apiResponse)
            try plan.plugins?.didReceive(apiResponse)
        } catch {
            return failure(.invalidResponse, "the response was rejected: \(error)", error)
        }
        if let use = plan.cache {
            use.store(response, request: request, content: content)
        }
        return .success(apiResponse)
    }

    /// The warnings a success gave where the service's application error rule says, read off
    /// the body's parse.
    @inline(__always)
    static func warnings(in json: ParsedJSON?, of service: any Service) -> [String] {
        guard let json, let rule = service.applicationErrors, rule.warningsField != nil else { return [] }
        return rule.warnings(in: json.tape)
    }

    /// The error of an answer the service refused: its code and message as the server's
    /// (``APIError/serverCode``, ``APIError/serverMessage``), and the body decoded into the
    /// endpoint's or the service's error body type, as a failed status's would be — an
    /// envelope's refusal is typed like an error body.
    @inline(never)
    static func vetoError<Subject: LoadSubject>(
        _ veto: ServiceVeto, _ response: HTTPResponse, plan: LoadPlan, id: LoadID, attempts: Int, subject: Subject
    ) -> APIError {
        let service = plan.resolved.service
        let endpoint = subject.endpoint
        let decoded = service.errorBody.decoded(
            response.body, as: endpoint.errorBody, decoder: endpoint.decoder ?? service.decoder ?? FastJSONDecoder())
        let reading = ErrorBodyRule.Reading(message: veto.message == "no message" ? nil : veto.message, code: veto.code, decoded: decoded)
        return plan.error(.serviceVeto, id: id, "the service refused the response: \(veto)", veto, response, attempts: attempts).carrying(reading)
    }

    /// The error of a failed status: the server's message and code when the service's
    /// ``/AIFServices/Service/errorBody`` rule finds them in the body (else the body's start),
    /// every credential the request carried shown as `***`; the body decoded into the declared
    /// type rides along.
    static func statusError<Subject: LoadSubject>(
        _ response: HTTPResponse, request: HTTPRequest, plan: LoadPlan, id: LoadID, attempts: Int, subject: Subject
    ) -> APIError {
        let service = plan.resolved.service
        let endpoint = subject.endpoint
        let secrets = request.secretValues(in: plan.resolved.environment)
        var reading = service.errorBody.read(
            response.body, as: endpoint.errorBody, decoder: endpoint.decoder ?? service.decoder ?? FastJSONDecoder())
        reading.message = reading.message.map { bodyPreview(Data($0.utf8), limit: 500, hiding: secrets) }
        reading.code = reading.code.map { bodyPreview(Data($0.utf8), limit: 100, hiding: secrets) }
        var message = "the server answered \(response.statusCode)"
        if let code = reading.code { message += " (code \(code))" }
        if let said = reading.message {
            message += ": \(said)"
        } else {
            let preview = bodyPreview(response.body, limit: 200, hiding: secrets)
            if !preview.isEmpty { message += ": \(preview)" }
        }
        return plan.error(.httpStatus, id: id, message, nil, response, attempts: attempts).carrying(reading)
    }

    /// Answers a load that failed for want of a network with a stored response, when the
    /// policy allows. Out of line: only failures with a fallback policy come here.
    @inline(never)
    static func offlineFallback<Subject: LoadSubject>(
        for error: APIError, _ use: CacheUse, plan: LoadPlan, id: LoadID, subject: Subject?
    ) -> APIResponse<Subject.Content>? {
        guard let (entry, age) = use.fallback(for: error), let subject,
            let response = cachedResponse(
                entry, of: subject, key: use.key, origin: .offlineFallback(age: age, reason: error.kind), id: id, parameters: plan.parameters,
                resolved: plan.resolved)
        else { return nil }
        use.cache.count { $0.offlineFallbacks += 1 }
        subject.proxy.logOfflineFallback(id, age: age, reason: error.kind)
        return response
    }
}
