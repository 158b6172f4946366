// The `aif` executable: the command line of AIFCommandLine, built with the package's
// `CommandLineTool` trait (which brings swift-argument-parser); without it, a note saying so, so
// that a package depending on the library alone never resolves the tool's dependencies.
#if CommandLineTool
import AIFCommandLine

await AifCommandLine.run()
#else
import Foundation

FileHandle.standardError.write(Data("""
    aif was built without the AIFNetworking package's CommandLineTool trait, which it needs: \
    depend on the package with traits: ["CommandLineTool"] (and "YAML" to read YAML defines), \
    or run `make install` in its checkout.

    """.utf8))
exit(2)
#endif
