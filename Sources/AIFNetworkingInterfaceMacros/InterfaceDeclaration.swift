#if Interfaces
import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// An `@API` protocol as read from its declaration: its service and options, and each method
/// with its HTTP method, path, arguments and result.
struct InterfaceDeclaration {
    /// The protocol's name (`ShopAPI`).
    let name: String
    /// The access modifier its client and mock take (`public `, or empty).
    let access: String
    /// The attribute's arguments (`service: "shop"`, `pathPrefix:`, `headers:`), as written.
    let options: [LabeledExprSyntax]
    let methods: [Method]

    /// One method of the interface.
    struct Method {
        let declaration: FunctionDeclSyntax
        /// The method's name with its labels: `goods(id:)`.
        let selector: String
        /// `get`, `post`, …
        let httpMethod: String
        /// The path as written in the attribute.
        let path: ExprSyntax
        /// The attribute's other arguments (`cache:`, `retry:` …), as written.
        let options: [LabeledExprSyntax]
        let arguments: [Argument]
        /// The names of the path's `{placeholders}`, each an argument's.
        let placeholders: [String]
        let result: Result
        /// The mock's property that answers it (`onGoodsId`).
        let answerProperty: String
    }

    /// One argument of a method, and what the call does with it.
    struct Argument {
        /// The label callers write, `nil` for `_`.
        let label: String?
        /// The name inside the method, as written (a keyword keeps its backticks).
        let name: String
        /// The name as sent: a parameter's, a query item's, a part's.
        let wireName: String
        let type: TypeSyntax
        let role: Role
        /// A `#sourceLocation` directive naming the argument's line in the protocol, so that
        /// an error in the code that sends it (a type that cannot be sent) is reported there.
        let sourceLocation: String?

        enum Role: Equatable {
            case parameter, query, header(String), body, part, form, parameters, download, control
        }
    }

    /// What a method returns.
    enum Result {
        /// The decoded content.
        case content(String)
        /// The response, its content decoded.
        case response(String)
        /// Nothing (`Void`).
        case nothing
        /// ``NoContent``.
        case noContent
        /// A downloaded file.
        case download
        /// The streamed response.
        case stream
        /// The response body as lines.
        case lines
        /// The response body as server-sent events.
        case events
        /// The pages of a listing (`Paging.Pages<Page>`), each decoded as the page type.
        case pages(String)

        /// The method's content type: what its endpoint decodes.
        var contentType: String {
            switch self {
            case .content(let type), .response(let type), .pages(let type): type
            default: "AIFNetworking.NoContent"
            }
        }

        /// Whether a manager can load it for a delegate (a stream has only its async face).
        var hasManager: Bool {
            switch self {
            case .stream, .lines, .events: false
            default: true
            }
        }
    }

    static let httpMethods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]

    /// Reads the protocol; each misuse is reported where it is written. `nil` when there was one.
    static func read(_ declaration: ProtocolDeclSyntax, attribute: AttributeSyntax, in context: some MacroExpansionContext) -> InterfaceDeclaration? {
        var failed = false
        func report(_ node: any SyntaxProtocol, _ diagnostic: InterfaceDiagnostic, _ fixIts: [FixIt] = []) {
            context.diagnose(Diagnostic(node: node, message: diagnostic, fixIts: fixIts))
            failed = true
        }
        // A misuse the client can be written without (an option the method has no use for):
        // reported, and the client still generated, so that no unrelated error follows.
        func note(_ node: any SyntaxProtocol, _ diagnostic: InterfaceDiagnostic, _ fixIts: [FixIt]) {
            context.diagnose(Diagnostic(node: node, message: diagnostic, fixIts: fixIts))
        }
        let name = declaration.name.text
        var methods: [Method] = []
        var selectors: [String: FunctionDeclSyntax] = [:]
        var properties: [String: String] = [:]
        for member in declaration.memberBlock.members {
            guard let function = member.decl.as(FunctionDeclSyntax.self) else {
                report(member.decl, InterfaceDiagnostic(
                    "notAMethod", "\(name) declares \(describe(member.decl)); an @API protocol declares only methods, each marked @GET, @POST, @PUT, @PATCH, @DELETE or @HEAD"))
                continue
            }
            func locate(_ node: some SyntaxProtocol) -> String? {
                guard let location = context.location(of: node, at: .afterLeadingTrivia, filePathMode: .filePath) else { return nil }
                return "#sourceLocation(file: \(location.file.trimmedDescription), line: \(location.line.trimmedDescription))"
            }
            guard let method = readMethod(function, interface: name, report: report, note: note, locate: locate) else { continue }
            if selectors[method.selector] != nil {
                report(function.name, InterfaceDiagnostic(
                    "sameSelector", "\(name) has two methods \(method.selector); give them different argument labels, as its mock answers each method by name"))
                continue
            }
            if let other = properties[method.answerProperty] {
                report(function.name, InterfaceDiagnostic(
                    "sameAnswerProperty", "\(method.selector) and \(other) would both be answered by the mock's \(method.answerProperty); rename one of them"))
                continue
            }
            selectors[method.selector] = function
            properties[method.answerProperty] = method.selector
            methods.append(method)
        }
        if failed { return nil }
        let access = declaration.modifiers.map(\.name.text).first { ["public", "package", "internal", "fileprivate", "private"].contains($0) }
        let options = attribute.arguments?.as(LabeledExprListSyntax.self).map(Array.init) ?? []
        return InterfaceDeclaration(name: name, access: access.map { $0 + " " } ?? "", options: options, methods: methods)
    }

    private static func readMethod(
        _ function: FunctionDeclSyntax, interface: String, report: (any SyntaxProtocol, InterfaceDiagnostic, [FixIt]) -> Void,
        note: (any SyntaxProtocol, InterfaceDiagnostic, [FixIt]) -> Void, locate: (FunctionParameterSyntax) -> String?
    ) -> Method? {
        let selector = selector(of: function)
        let marks = function.attributes.compactMap { $0.as(AttributeSyntax.self) }.filter { httpMethods.contains(baseName($0.attributeName)) }
        guard let mark = marks.first else {
            report(function.name, InterfaceDiagnostic(
                "noHTTPMethod", "\(selector) has no HTTP method: mark it @GET(\"path\"), @POST, @PUT, @PATCH, @DELETE or @HEAD"), [])
            return nil
        }
        if marks.count > 1 {
            let names = marks.map { "@" + baseName($0.attributeName) }.joined(separator: " and ")
            report(marks[1], InterfaceDiagnostic("twoHTTPMethods", "\(selector) has two HTTP methods (\(names)); a call sends one: keep one"), [])
            return nil
        }
        var ok = true
        if function.genericParameterClause != nil || function.genericWhereClause != nil {
            report(function.name, InterfaceDiagnostic("generic", "\(selector) is generic; the types of an @API method are fixed, as its endpoint decodes one type"), [])
            ok = false
        }
        if function.modifiers.contains(where: { $0.name.text == "static" }) {
            report(function.name, InterfaceDiagnostic("static", "\(selector) is static; an @API method is called on a client"), [])
            ok = false
        }
        let effects = function.signature.effectSpecifiers
        if effects?.asyncSpecifier == nil || effects?.throwsClause == nil {
            var fixed = function.signature
            fixed.effectSpecifiers = FunctionEffectSpecifiersSyntax(
                asyncSpecifier: .keyword(.async, trailingTrivia: .space),
                throwsClause: ThrowsClauseSyntax(
                    throwsSpecifier: .keyword(.throws), leftParen: .leftParenToken(), type: TypeSyntax(IdentifierTypeSyntax(name: .identifier("APIError"))),
                    rightParen: .rightParenToken(trailingTrivia: .space)))
            fixed.parameterClause.rightParen.trailingTrivia = .space
            let fixIt = FixIt(message: InterfaceFixIt(message: "make it async throws(APIError)"), changes: [.replace(oldNode: Syntax(function.signature), newNode: Syntax(fixed))])
            report(function.signature, InterfaceDiagnostic("notAsyncThrows", "\(selector) must be async throws(APIError): a call waits for the network, and can fail"), [fixIt])
            ok = false
        }
        let httpMethod = baseName(mark.attributeName)
        let attributeArguments = mark.arguments?.as(LabeledExprListSyntax.self).map(Array.init) ?? []
        guard let pathArgument = attributeArguments.first, pathArgument.label == nil else {
            report(mark, InterfaceDiagnostic("noPath", "@\(httpMethod) on \(selector) needs the path first: @\(httpMethod)(\"goods/{id}\")"), [])
            return nil
        }
        guard let literal = pathArgument.expression.as(StringLiteralExprSyntax.self),
            let path = literal.segments.reduce(Optional("") as String?, { text, segment in
                guard let text, let part = segment.as(StringSegmentSyntax.self) else { return nil }
                return text + part.content.text
            })
        else {
            report(pathArgument.expression, InterfaceDiagnostic(
                "pathNotLiteral", "the path of \(selector) must be a string literal without interpolation, so that its placeholders are checked as it compiles"), [])
            return nil
        }

        var arguments: [Argument] = []
        for parameter in function.signature.parameterClause.parameters {
            let label = parameter.firstName.tokenKind == .wildcard ? nil : parameter.firstName.text
            let nameToken = parameter.secondName ?? parameter.firstName
            let name = nameToken.text
            let wireName = String(name.filter { $0 != "`" })
            if parameter.ellipsis != nil {
                report(parameter, InterfaceDiagnostic("variadic", "the argument \(wireName) of \(selector) is variadic; pass an array instead"), [])
                ok = false
                continue
            }
            if let attributed = parameter.type.as(AttributedTypeSyntax.self), !attributed.specifiers.isEmpty {
                report(parameter, InterfaceDiagnostic("inout", "the argument \(wireName) of \(selector) is \(attributed.specifiers.trimmedDescription); an @API method takes its arguments by value"), [])
                ok = false
                continue
            }
            arguments.append(Argument(
                label: label, name: name, wireName: wireName, type: parameter.type, role: role(of: parameter.type, name: name),
                sourceLocation: locate(parameter)))
        }
        let result = result(of: function.signature.returnClause?.type)
        if result.isPages, httpMethod != "GET" && httpMethod != "POST" {
            report(mark, InterfaceDiagnostic(
                "pagesNotListed", "\(selector) returns pages with @\(httpMethod); a listing is read with @GET (or a search sent with @POST): change the method, or return one response"), [])
            ok = false
        }

        // The path's placeholders, each filled by an argument of its name.
        var placeholders: [String] = []
        var rest = Substring(path)
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else {
                report(pathArgument.expression, InterfaceDiagnostic("unclosedPlaceholder", "the path \(path) of \(selector) has a { without its }"), [])
                return nil
            }
            let placeholder = String(rest[rest.index(after: open)..<close])
            if placeholder.isEmpty || placeholder.contains("{") {
                report(pathArgument.expression, InterfaceDiagnostic("badPlaceholder", "the path \(path) of \(selector) has an empty or nested placeholder"), [])
                return nil
            }
            placeholders.append(placeholder)
            rest = rest[rest.index(after: close)...]
        }
        for placeholder in placeholders where !arguments.contains(where: { $0.wireName == placeholder && $0.role == .parameter }) {
            let named = arguments.first { $0.wireName == placeholder }
            let detail =
                named != nil
                ? "its argument \(placeholder) is a \(named!.type.trimmedDescription), not a plain argument"
                : "it has no argument of that name" + (arguments.isEmpty ? "" : " (its arguments: " + arguments.map(\.wireName).joined(separator: ", ") + ")")
            report(pathArgument.expression, InterfaceDiagnostic("unfilledPlaceholder", "the path \(path) of \(selector) has {\(placeholder)}, and \(detail)"), [])
            ok = false
        }

        // One body at most, none on GET or HEAD.
        let bodies = arguments.filter { $0.role == .body || $0.role == .form }
        let parts = arguments.filter { $0.role == .part }
        let sent = bodies + parts
        if bodies.count + (parts.isEmpty ? 0 : 1) > 1 {
            report(function.signature.parameterClause, InterfaceDiagnostic(
                "twoBodies", "\(selector) has two bodies (\(sent.map(\.wireName).joined(separator: ", "))); a request sends one: make one of them a Part, a Query, or a plain argument"), [])
            ok = false
        }
        if (httpMethod == "GET" || httpMethod == "HEAD"), let first = sent.first {
            report(function.signature.parameterClause, InterfaceDiagnostic(
                "bodyOnGET", "\(selector) sends a body (\(first.wireName)) with \(httpMethod), which carries none: send it with @POST or @PUT, or as plain arguments (the query)"), [])
            ok = false
        }
        let targets = arguments.filter { $0.role == .download }
        if case .download = result {
            if targets.count != 1 {
                report(function.signature, InterfaceDiagnostic(
                    "downloadTarget", "\(selector) returns a FileDownload.File and needs exactly one FileDownload argument, saying where the file goes (it has \(targets.count))"), [])
                ok = false
            }
        } else if !targets.isEmpty {
            report(function.signature, InterfaceDiagnostic(
                "targetWithoutDownload", "\(selector) has a FileDownload argument (\(targets[0].wireName)) but does not return a FileDownload.File; only a download writes to a file"), [])
            ok = false
        }
        switch result {
        case .download, .stream, .lines, .events:
            if let part = (arguments.filter { $0.role == .form } + parts).first {
                report(function.signature.parameterClause, InterfaceDiagnostic(
                    "formWithTransfer", "\(selector) sends a multipart form (\(part.wireName)) and \(result.isDownload ? "downloads to a file" : "streams its answer"); a call does one or the other"), [])
                ok = false
            }
        default: break
        }
        guard ok else { return nil }
        return Method(
            declaration: function, selector: selector, httpMethod: httpMethod.lowercased(), path: pathArgument.expression,
            options: options(of: mark, httpMethod: httpMethod, returnsPages: result.isPages, note: note), arguments: arguments, placeholders: placeholders, result: result, answerProperty: answerProperty(function))
    }

    /// The options an HTTP method attribute takes after its path.
    static func optionLabels(of httpMethod: String) -> [String] {
        switch httpMethod {
        case "GET": ["headers", "cache", "retry", "timeouts", "authenticated", "coalesces", "paging"]
        case "HEAD": ["headers", "retry", "timeouts", "authenticated"]
        case "POST": ["headers", "encoding", "retry", "timeouts", "authenticated", "paging"]
        default: ["headers", "encoding", "retry", "timeouts", "authenticated"]
        }
    }

    /// The attribute's options after its path; one the method takes no such option for is
    /// reported on itself, with what to do and a fix-it that removes it, and left out (as is
    /// `paging:` on a method that returns no pages).
    private static func options(
        of attribute: AttributeSyntax, httpMethod: String, returnsPages: Bool, note: (any SyntaxProtocol, InterfaceDiagnostic, [FixIt]) -> Void
    ) -> [LabeledExprSyntax] {
        guard let list = attribute.arguments?.as(LabeledExprListSyntax.self) else { return [] }
        let allowed = optionLabels(of: httpMethod)
        var kept: [LabeledExprSyntax] = []
        for argument in list.dropFirst() {
            let label = argument.label?.text ?? ""
            if allowed.contains(label), label != "paging" || returnsPages {
                kept.append(argument)
                continue
            }
            let advice =
                switch label {
                case "cache": "cache: keeps the answers of a GET; a \(httpMethod)'s answer is never served from the cache: remove it, or make the method @GET if it only reads"
                case "coalesces": "coalesces: shares one transfer among identical GETs in flight; each \(httpMethod) is sent on its own: remove it"
                case "encoding": "encoding: says how a body is encoded, and a \(httpMethod) sends none: remove it"
                case "paging" where allowed.contains("paging"):
                    "paging: says how the pages of a listing are asked for, and this method returns one answer: return Paging.Pages<Page> to page through it, or remove paging:"
                case "paging": "paging: pages a listing read with GET (or a search sent with POST); a \(httpMethod) is not paged: remove it"
                case "": "an option of @\(httpMethod) after the path has a label (\(allowed.joined(separator: ":, ")):)"
                default: "\(label): is not an option of @\(httpMethod); its options after the path: \(allowed.joined(separator: ", "))"
                }
            var without = list.filter { $0.id != argument.id }
            if let last = without.indices.last { without[last] = without[last].with(\.trailingComma, nil) }
            let fixIt = FixIt(
                message: InterfaceFixIt(message: "remove \(label.isEmpty ? "it" : label + ":")"),
                changes: [.replace(oldNode: Syntax(list), newNode: Syntax(without))])
            note(argument, InterfaceDiagnostic("unusedOption", advice), [fixIt])
        }
        return kept
    }

    /// `goods(id:)`.
    static func selector(of function: FunctionDeclSyntax) -> String {
        function.name.text + "(" + function.signature.parameterClause.parameters.map { $0.firstName.text + ":" }.joined() + ")"
    }

    /// `onGoodsId` for `goods(id:)`.
    static func answerProperty(_ function: FunctionDeclSyntax) -> String {
        let words = [String(function.name.text.filter { $0 != "`" })]
            + function.signature.parameterClause.parameters.compactMap { $0.firstName.tokenKind == .wildcard ? nil : String($0.firstName.text.filter { $0 != "`" }) }
        return "on" + words.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    /// A header's name for an argument's: `requestID` → `Request-ID`, `ifNoneMatch` → `If-None-Match`.
    static func headerName(_ name: String) -> String {
        var words: [String] = []
        var current = ""
        let characters = Array(name)
        for (index, character) in characters.enumerated() {
            if character == "_" {
                if !current.isEmpty { words.append(current) }
                current = ""
                continue
            }
            if character.isUppercase, let previous = current.last {
                let nextIsLower = index + 1 < characters.count && characters[index + 1].isLowercase
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && nextIsLower) {
                    words.append(current)
                    current = ""
                }
            }
            current.append(character)
        }
        if !current.isEmpty { words.append(current) }
        return words.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: "-")
    }

    /// The name an attribute or a type is known by, without its module (`GET` for `AIFNetworkingInterfaces.GET`).
    static func baseName(_ type: TypeSyntax) -> String {
        if let member = type.as(MemberTypeSyntax.self), ["AIFNetworkingInterfaces", "AIFNetworking", "AIFServices", "AIFTransport"].contains(member.baseType.trimmedDescription) {
            return member.name.text
        }
        if let identifier = type.as(IdentifierTypeSyntax.self) { return identifier.name.text }
        return type.trimmedDescription
    }

    /// What a call does with an argument of this type; `name` as written (in backticks or not).
    private static func role(of type: TypeSyntax, name: String) -> Argument.Role {
        let written = unqualified(type)
        if written.hasPrefix("Body<") { return .body }
        if written.hasPrefix("Query<") { return .query }
        // A name in backticks is the header's, exactly (`X-Request-ID`, `api_key`).
        if written.hasPrefix("Header<") { return .header(name.hasPrefix("`") ? String(name.filter { $0 != "`" }) : headerName(name)) }
        if written.hasPrefix("Part<") { return .part }
        switch written {
        case "HTTPRequest.MultipartForm", "MultipartForm": return .form
        case "Parameters", "[String: JSONValue]": return .parameters
        case "FileDownload": return .download
        case "TransferControl": return .control
        default: return .parameter
        }
    }

    /// What a method with this return type returns.
    private static func result(of type: TypeSyntax?) -> Result {
        guard let type else { return .nothing }
        let written = unqualified(type)
        switch written {
        case "Void", "()": return .nothing
        case "NoContent": return .noContent
        case "FileDownload.File": return .download
        case "HTTPResponse.Streaming": return .stream
        case "HTTPResponse.Streaming.Body.ServerSentEvents": return .events
        case "HTTPResponse.Streaming.Body.Lines", "ResponseBodyStream.Lines": return .lines
        default:
            if written.hasPrefix("Paging.Pages<"), written.hasSuffix(">") {
                return .pages(String(written.dropFirst("Paging.Pages<".count).dropLast()))
            }
            if written.hasPrefix("APIResponse<"), written.hasSuffix(">") {
                let content = String(written.dropFirst("APIResponse<".count).dropLast())
                return content == "NoContent" ? .response("AIFNetworking.NoContent") : .response(content)
            }
            return .content(type.trimmedDescription)
        }
    }

    /// The type as written, without a leading module name of the library.
    private static func unqualified(_ type: TypeSyntax) -> String {
        var text = type.trimmedDescription
        for module in ["AIFNetworkingInterfaces.", "AIFNetworking.", "AIFServices.", "AIFTransport."] where text.hasPrefix(module) {
            text.removeFirst(module.count)
        }
        return text
    }

    /// A member that is not a method, in words.
    private static func describe(_ declaration: DeclSyntax) -> String {
        if let variable = declaration.as(VariableDeclSyntax.self) { return "a property (\(variable.bindings.trimmedDescription))" }
        if let type = declaration.as(AssociatedTypeDeclSyntax.self) { return "an associated type (\(type.name.text))" }
        if declaration.is(InitializerDeclSyntax.self) { return "an initializer" }
        if declaration.is(SubscriptDeclSyntax.self) { return "a subscript" }
        return "a \(declaration.kind)"
    }
}

extension InterfaceDeclaration.Result {
    var isDownload: Bool {
        if case .download = self { return true }
        return false
    }

    var isPages: Bool {
        if case .pages = self { return true }
        return false
    }
}
#endif
