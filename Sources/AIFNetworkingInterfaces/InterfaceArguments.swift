#if Interfaces
import Foundation

/// A call's arguments, as a generated client gathers them: parameters, query items, headers,
/// a body or multipart parts, a download's target.
public struct InterfaceArguments: Sendable {
    var call = CallArguments()

    /// No arguments yet.
    public init() {}

    /// A parameter: it fills the path's `{name}` placeholder, and goes in the query (GET,
    /// HEAD, DELETE) or the body (POST, PUT, PATCH), as a manager's parameters do. `nil` is
    /// left out.
    ///
    /// - Parameters:
    ///   - name: The parameter's name.
    ///   - value: Its value: text, a number, a flag, a date (ISO 8601), a list, or any
    ///     `Encodable` value (as its JSON).
    public mutating func parameter(_ name: String, _ value: some Encodable & Sendable) {
        if let converted = convert(value, name: name) { call.parameters[name] = converted }
    }

    /// A parameter given as a ``/AIFServices/ParameterValue``.
    ///
    /// - Parameters:
    ///   - name: The parameter's name.
    ///   - value: Its value.
    public mutating func parameter(_ name: String, _ value: ParameterValue) {
        call.parameters[name] = value
    }

    /// Parameters given as a map, over those before.
    ///
    /// - Parameter parameters: The parameters.
    public mutating func parameters(_ parameters: Parameters) {
        call.parameters.merge(parameters) { _, new in new }
    }

    /// A query item (one per element of a list), whatever the method; `nil` is left out.
    ///
    /// - Parameters:
    ///   - name: The item's name.
    ///   - value: Its value.
    public mutating func query(_ name: String, _ value: some Encodable & Sendable) {
        guard let converted = convert(value, name: name) else { return }
        switch converted {
        case .array(let elements): call.query += elements.compactMap(\.textValue).map { URLQueryItem(name: name, value: $0) }
        default: if let text = text(of: converted, name: name) { call.query.append(URLQueryItem(name: name, value: text)) }
        }
    }

    /// A header; `nil` is left out, a list's elements are joined with commas (a field's list
    /// form).
    ///
    /// - Parameters:
    ///   - name: The header's name.
    ///   - value: Its value, as text.
    public mutating func header(_ name: String, _ value: some Encodable & Sendable) {
        guard let converted = convert(value, name: name) else { return }
        if case .array(let elements) = converted {
            call.headers.set(name: name, value: elements.compactMap(\.textValue).joined(separator: ", "))
        } else if let text = text(of: converted, name: name) {
            call.headers.set(name: name, value: text)
        }
    }

    /// The body, encoded as JSON or as the method's encoding says.
    ///
    /// - Parameter value: The body's value.
    public mutating func body(_ value: some Encodable & Sendable) {
        call.body = value
    }

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
    public mutating func part(_ name: String, _ value: MultipartForm.Part) {
        append { $0.parts.append(value) }
    }

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
    public mutating func form(_ form: MultipartForm) {
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

    private mutating func append(_ add: (inout MultipartForm) -> Void) {
        var form = call.form ?? MultipartForm()
        add(&form)
        call.form = form
    }

    /// `value` as a parameter value, `nil` for `nil`; a value that cannot be encoded is kept as
    /// the call's failure.
    private mutating func convert(_ value: some Encodable & Sendable, name: String) -> ParameterValue? {
        do {
            return try ParameterConversion.value(of: value)
        } catch {
            if call.failure == nil { call.failure = "the argument \(name) (\(type(of: value))) cannot be sent: \(error)" }
            return nil
        }
    }

    /// `value` as text for a query item or a header; a list or an object is the call's failure.
    private mutating func text(of value: ParameterValue, name: String) -> String? {
        if let text = value.textValue { return text }
        if value != .null, call.failure == nil { call.failure = "the argument \(name) is a list or an object, which a query item or a header cannot carry" }
        return nil
    }
}
#endif
