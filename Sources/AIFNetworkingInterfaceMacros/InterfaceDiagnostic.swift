#if Interfaces
import SwiftDiagnostics

/// A misuse of `@API` or of an HTTP method attribute, reported where it is written.
struct InterfaceDiagnostic: DiagnosticMessage, Error {
    let message: String
    let diagnosticID: MessageID
    var severity: DiagnosticSeverity { .error }

    init(_ id: String, _ message: String) {
        self.message = message
        diagnosticID = MessageID(domain: "AIFNetworkingMacros", id: id)
    }
}

/// A change the compiler offers to make.
struct InterfaceFixIt: FixItMessage {
    let message: String
    var fixItID: MessageID { MessageID(domain: "AIFNetworkingMacros", id: message) }
}
#endif
