#if Interfaces
import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@GET`, `@POST`, `@PUT`, `@PATCH`, `@DELETE`, `@HEAD`: they mark a method of an `@API`
/// protocol, which reads them; on their own they add nothing. Anywhere else they are an error.
public struct HTTPMethodMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        let name = node.attributeName.trimmedDescription
        guard declaration.is(FunctionDeclSyntax.self) else {
            throw InterfaceDiagnostic("notOnAMethod", "@\(name) marks a method of a protocol declared with @API")
        }
        let enclosing = context.lexicalContext.first?.as(ProtocolDeclSyntax.self)
        guard let enclosing, enclosing.attributes.contains(where: { APIMacro.isAPIAttribute($0) }) else {
            throw InterfaceDiagnostic("outsideAnInterface", "@\(name) marks a method of a protocol declared with @API; this method is not in one")
        }
        return []
    }
}
#endif
