#if Interfaces
import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plug-in that expands `@API` and the HTTP method attributes of its protocols.
@main
struct InterfacesPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [APIMacro.self, HTTPMethodMacro.self]
}
#else
/// Without the `Interfaces` trait the plug-in is not used, and has nothing to expand.
@main
enum InterfacesPlugin {
    static func main() {}
}
#endif
