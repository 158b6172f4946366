public import Foundation
@_spi(CrossModule) import AIFTransport

extension ServiceRegistry {
    /// Registers the APIs defined in every define file of a folder (see ``APIDefine``): the
    /// `*.apis.json` files, and those of `formats` (`*.apis.yaml` with `AIFNetworkingYAML`'s
    /// `YAMLDefineFormat`), after its services: each define must name a registered service.
    ///
    /// - Parameters:
    ///   - directory: The folder, for example `Configs/`.
    ///   - environment: Where `${NAME}` references are looked up.
    ///   - formats: Formats besides JSON. A YAML define file in the folder without a YAML format
    ///     is an error, not skipped.
    /// - Returns: The names registered, sorted.
    /// - Throws: ``ServiceRegistry/ConfigurationError`` for the first file that is wrong — its syntax, a key or
    ///   value, a define naming a service not registered, a name another file defines too —;
    ///   nothing is registered then.
    @discardableResult
    public func registerAPIs(
        inDirectory directory: URL, environment: [String: String] = ProcessInfo.processInfo.environment, formats: [any APIDefine.Format] = []
    ) throws(ServiceRegistry.ConfigurationError) -> [String] {
        let files: [URL]
        do {
            files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
                .filter { formats.isDefineFile($0) }
                .sorted { $0.path < $1.path }
        } catch {
            throw ServiceRegistry.ConfigurationError(file: directory.path, key: nil, problem: "cannot be listed: \(error.localizedDescription)")
        }
        return try registerAPIs(from: files, environment: environment, formats: formats)
    }

    /// Registers the APIs defined in files, each read in the format its name says.
    ///
    /// - Parameters:
    ///   - files: The files.
    ///   - environment: Where `${NAME}` references are looked up.
    ///   - formats: Formats besides JSON.
    /// - Returns: The names registered, sorted.
    /// - Throws: ``ServiceRegistry/ConfigurationError`` for the first file that is wrong; nothing is registered then.
    @discardableResult
    public func registerAPIs(
        from files: [URL], environment: [String: String] = ProcessInfo.processInfo.environment, formats: [any APIDefine.Format] = []
    ) throws(ServiceRegistry.ConfigurationError) -> [String] {
        var read: [APIDefineFile.Read] = []
        var documents: [String: APIDefine.Document] = [:]
        for file in files {
            let contents = try APIDefineFile.read(file, environment: environment, formats: formats)
            read += contents.defines
            documents[file.path] = contents.document
        }
        try register(read, documents: documents)
        return read.map(\.define.name).sorted()
    }

    /// Registers defines made in code, replacing earlier ones of the same names.
    ///
    /// - Parameter defines: The defines.
    /// - Throws: ``ServiceRegistry/ConfigurationError`` when one names a service that is not registered, or two
    ///   share a name; nothing is registered then.
    public func register(_ defines: [APIDefine]) throws(ServiceRegistry.ConfigurationError) {
        try register(defines.map { APIDefineFile.Read(define: $0, keyPath: $0.name, serviceKeyPath: "\($0.name).service") }, documents: [:])
    }

    /// The define registered as `name`.
    ///
    /// - Throws: ``ServiceError/unknownAPI(_:known:)`` naming it and listing the defined names.
    public func api(named name: String) throws(ServiceError) -> APIDefine {
        let (define, known) = state.withLock { state in (state.defines[name], state.defines.isEmpty ? [] : state.defines.keys.sorted()) }
        guard let define else { throw .unknownAPI(name, known: known) }
        return define
    }

    /// Every registered define, in name order.
    public var apis: [APIDefine] {
        state.withLock { $0.defines.values.sorted { $0.name < $1.name } }
    }

    /// Checks defines against the services and against each other and the defines of other
    /// files, then registers them all, or none; an error is located in its file's document.
    private func register(_ defines: [APIDefineFile.Read], documents: [String: APIDefine.Document]) throws(ServiceRegistry.ConfigurationError) {
        let services = Set(registeredNames)
        var seen: [String: APIDefine] = [:]
        for read in defines {
            let define = read.define
            try APIDefineFile.checkServices([read], are: services, in: documents[define.file])
            if let other = seen[define.name] {
                let place = documents[define.file]?.place(of: read.keyPath)
                throw ServiceRegistry.ConfigurationError(
                    file: define.file, key: read.keyPath, problem: "defines \(define.name), which \(other.file.isEmpty ? "code" : other.file) defines too",
                    line: place?.line, column: place?.column)
            }
            seen[define.name] = define
        }
        let clash: (APIDefine, APIDefine)? = state.withLock { state in
            for define in seen.values {
                // A file read again replaces its own defines; another file's are a clash.
                if let existing = state.defines[define.name], existing.file != define.file { return (define, existing) }
            }
            for define in seen.values { state.defines[define.name] = define }
            return nil
        }
        if let (define, existing) = clash {
            let keyPath = defines.first { $0.define.name == define.name }?.keyPath ?? define.name
            let place = documents[define.file]?.place(of: keyPath)
            throw ServiceRegistry.ConfigurationError(
                file: define.file, key: keyPath, problem: "defines \(define.name), which \(existing.file.isEmpty ? "code" : existing.file) defines too",
                line: place?.line, column: place?.column)
        }
    }
}
