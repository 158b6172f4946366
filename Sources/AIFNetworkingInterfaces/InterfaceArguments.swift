#if Interfaces
import Foundation

/// A call's arguments, as a generated client gathers them: parameters, query items, headers,
/// a body or multipart parts, a download's target.
public struct InterfaceArguments: Sendable {
    var call = CallArguments()

    /// No arguments yet.
    public init() {}

    /// A parameter: it fills the path's `{name}` placeholder, and goes in the query (GET,
    /// HEAD, DELETE) or the body (POST, PUT, PATCH), as a manager's parameters do — or where
    /// the method places it (a `Query`'s in the query, a `Header`'s in a header). `nil` is left
    /// out.
    ///
    /// - Parameters:
    ///   - name: The parameter's name.
    ///   - value: Its value: text, a number, a flag, a date (ISO 8601), a list, or any
    ///     `Encodable` value (as its JSON).
    public mutating func parameter(_ name: String, _ value: some Encodable & Sendable) {
        if let converted = convert(value, name: name) { call.parameters[name] = converted }
    }

    /// An argument whose type cannot be sent: a compile-time error, reported on the argument's
    /// line in the protocol, saying what to do.
    @available(
        *, unavailable,
        message: "an argument of an @API method is sent as its value, so its type must be Encodable and Sendable: conform it, or pass what the server reads (its ID, its text)"
    )
    public mutating func parameter<Value>(_ name: String, _ value: Value) {}

    /// A parameter given as a ``/AIFServices/JSONValue``.
    ///
    /// - Parameters:
    ///   - name: The parameter's name.
    ///   - value: Its value.
    public mutating func parameter(_ name: String, _ value: JSONValue) {
        call.parameters[name] = value
    }

    /// Parameters given as a map, over those before.
    ///
    /// - Parameter parameters: The parameters.
    public mutating func parameters(_ parameters: Parameters) {
        call.parameters.merge(parameters) { _, new in new }
    }

    /// The body, encoded as JSON or as the method's encoding says.
    ///
    /// - Parameter value: The body's value.
    public mutating func body(_ value: some Encodable & Sendable) {
        call.body = value
    }

    /// A body whose type cannot be encoded: a compile-time error on the argument's line.
    @available(*, unavailable, message: "a Body<T> argument is encoded as JSON or a form, so T must be Encodable and Sendable")
    public mutating func body<Value>(_ value: Value) {}

    /// A text part of a multipart form.
    ///
    /// - Parameters:
    ///   - name: The part's name.
    ///   - value: Its text.
    public mutating func part(_ name: String, _ value: String) {
        append { $0.append(name, value) }
    }

    /// A part of bytes, sent as a file named after the part.
    ///
    /// - Parameters:
    ///   - name: The part's name.
    ///   - value: Its bytes.
    public mutating func part(_ name: String, _ value: Data) {
        append { $0.appendFile(name, data: value, filename: name) }
    }

    /// A file part, read from disk as it is sent.
    ///
    /// - Parameters:
    ///   - name: The part's name.
    ///   - value: The file's URL.
    public mutating func part(_ name: String, _ value: URL) {
        append { $0.appendFile(name, at: value.path) }
    }

    /// A part given whole.
    ///
    /// - Parameters:
    ///   - name: The argument's name (the part keeps its own).
    ///   - value: The part.
    public mutating func part(_ name: String, _ value: HTTPRequest.MultipartForm.Part) {
        append { $0.parts.append(value) }
    }

    /// A part of a type a form cannot carry: a compile-time error on the argument's line.
    @available(*, unavailable, message: "a Part<T> argument is text (String), bytes (Data), a file (URL) or a whole HTTPRequest.MultipartForm.Part")
    public mutating func part<Value>(_ name: String, _ value: Value) {}

    /// A part that may be absent; `nil` is left out.
    ///
    /// - Parameters:
    ///   - name: The part's name.
    ///   - value: Its content.
    public mutating func part(_ name: String, _ value: String?) {
        if let value { part(name, value) }
    }

    /// A whole multipart form as the body.
    ///
    /// - Parameter form: The form.
    public mutating func form(_ form: HTTPRequest.MultipartForm) {
        call.form = form
    }

    /// Where the response body is downloaded to.
    ///
    /// - Parameter target: The destination and its options.
    public mutating func download(to target: FileDownload) {
        call.download = target
    }

    /// Suspends, resumes and paces the call's transfer.
    ///
    /// - Parameter control: The control.
    public mutating func control(_ control: TransferControl) {
        call.control = control
    }

    private mutating func append(_ add: (inout HTTPRequest.MultipartForm) -> Void) {
        var form = call.form ?? HTTPRequest.MultipartForm()
        add(&form)
        call.form = form
    }

    /// `value` as a parameter value, `nil` for `nil`; a value that cannot be encoded is kept as
    /// the call's failure.
    private mutating func convert(_ value: some Encodable & Sendable, name: String) -> JSONValue? {
        do {
            return try ParameterConversion.value(of: value)
        } catch {
            if call.failure == nil { call.failure = "the argument \(name) (\(type(of: value))) cannot be sent: \(error)" }
            return nil
        }
    }
}
#endif
