import CCurl
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Transfer {
    /// Builds the `curl_mime` of a `multipart/form-data` body: one part per form part, files
    /// named by path for libcurl to read as it sends (each checked to be a readable regular
    /// file first, so that a missing one fails here, naming the part, not mid-upload).
    ///
    /// - Throws: ``TransportError`` naming the part: a NUL in a name, a line break in a content
    ///   type or part header, a file that cannot be read.
    func makeMIME(_ form: HTTPRequest.MultipartForm, _ handle: EasyHandle) throws(TransportError) -> OpaquePointer {
        guard let mime = curl_mime_init(handle.raw) else {
            throw TransportError(.other, url: urlString, detail: "libcurl could not allocate a multipart body")
        }
        do {
            for (index, part) in form.parts.enumerated() {
                try addPart(part, number: index + 1, to: mime)
            }
        } catch {
            curl_mime_free(mime)
            throw error
        }
        return mime
    }

    private func addPart(_ part: HTTPRequest.MultipartForm.Part, number: Int, to mime: OpaquePointer) throws(TransportError) {
        let label = "multipart part \(number) (\(part.name.debugDescription))"
        func refuse(_ problem: String) -> TransportError {
            TransportError(.invalidRequest, url: urlString, detail: "\(label) \(problem)")
        }
        func check(_ code: CURLcode, _ what: String) throws(TransportError) {
            guard code == CURLE_OK else {
                throw TransportError(.other, url: urlString, detail: "\(label): libcurl refused its \(what): \(String(cString: curl_easy_strerror(code)))", curlCode: Int(code.rawValue))
            }
        }
        // libcurl takes these as C strings: a NUL would cut them short, silently.
        guard !part.name.utf8.contains(0) else { throw refuse("has a NUL byte in its name") }
        if let filename = part.filename, filename.utf8.contains(0) { throw refuse("has a NUL byte in its file name") }
        if let type = part.contentType, type.isEmpty || type.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) {
            throw refuse("has an empty content type or one with a line break")
        }
        for field in part.headers.fields where !Self.isValidHeader(field) {
            throw refuse("has a header \(field.name.debugDescription) with an invalid name or a line break in its value")
        }
        guard let added = curl_mime_addpart(mime) else {
            throw TransportError(.other, url: urlString, detail: "\(label): libcurl could not allocate it")
        }
        try check(curl_mime_name(added, part.name), "name")
        switch part.content {
        case .bytes(let data):
            // libcurl copies the bytes.
            let code = data.withUnsafeBytes { buffer in
                if let base = buffer.baseAddress, buffer.count > 0 {
                    return curl_mime_data(added, base.assumingMemoryBound(to: CChar.self), buffer.count)
                }
                return curl_mime_data(added, "", 0)
            }
            try check(code, "content")
        case .file(let path):
            let (descriptor, _) = try openBodyFile(path, for: "the file of \(label),")
            close(descriptor)
            try check(curl_mime_filedata(added, path), "file")
        }
        // `curl_mime_filedata` sent the path's last component; the part's own (or none) wins.
        try check(curl_mime_filename(added, part.filename), "file name")
        if let type = part.contentType { try check(curl_mime_type(added, type), "content type") }
        if !part.headers.isEmpty {
            var list: UnsafeMutablePointer<curl_slist>?
            for field in part.headers.fields {
                guard let appended = curl_slist_append(list, Self.curlHeaderLine(field)) else {
                    curl_slist_free_all(list)
                    throw TransportError(.other, url: urlString, detail: "\(label): out of memory building its headers")
                }
                list = appended
            }
            try check(curl_mime_headers(added, list, 1), "headers")
        }
    }
}
