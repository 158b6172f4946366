#if Interfaces
import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@API(service:)` on a protocol: generates its client (`…Client`) and its mock (`…Mock`),
/// after checking every method — each misuse is a compile-time error where it is written.
public struct APIMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let protocolDeclaration = declaration.as(ProtocolDeclSyntax.self) else {
            throw InterfaceDiagnostic("notAProtocol", "@API declares a service's endpoints as a protocol; attach it to a protocol")
        }
        guard let interface = InterfaceDeclaration.read(protocolDeclaration, attribute: node, in: context) else { return [] }
        return [ClientGenerator(interface).declaration, MockGenerator(interface).declaration]
    }

    /// Whether an attribute is `@API`.
    static func isAPIAttribute(_ element: AttributeListSyntax.Element) -> Bool {
        guard let attribute = element.as(AttributeSyntax.self) else { return false }
        return InterfaceDeclaration.baseName(attribute.attributeName) == "API"
    }
}
#endif
