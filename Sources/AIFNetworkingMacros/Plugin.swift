#if Interfaces
import AIFNetworkingInterfaceMacros
import SwiftCompilerPlugin
import SwiftSyntax
import SwiftSyntaxMacros

/// The compiler plug-in that expands `@API` and the HTTP method attributes of its protocols.
@main
struct InterfacesPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [APIMacro.self, HTTPMethodMacro.self]
}

/// `@API`, as `#externalMacro(module: "AIFNetworkingMacros", type: "APIMacro")` names it: the
/// compiler finds a macro by its module's name and its type's, so the plug-in names each macro
/// of ``AIFNetworkingInterfaceMacros`` again.
struct APIMacro: PeerMacro {
    static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        try AIFNetworkingInterfaceMacros.APIMacro.expansion(of: node, providingPeersOf: declaration, in: context)
    }
}

/// `@GET`, `@POST` and the other method attributes, named as for ``APIMacro``.
struct HTTPMethodMacro: PeerMacro {
    static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        try AIFNetworkingInterfaceMacros.HTTPMethodMacro.expansion(of: node, providingPeersOf: declaration, in: context)
    }
}
#else
/// Without the `Interfaces` trait the plug-in is not used, and has nothing to expand.
@main
enum InterfacesPlugin {
    static func main() {}
}
#endif
