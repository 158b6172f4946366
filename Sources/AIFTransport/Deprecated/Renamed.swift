// Types that became nested in the type they belong to. Each name forwards to its new place and
// goes in a later major version.

/// The former name of ``CurlTransport/SharedInstanceError``.
@available(*, deprecated, renamed: "CurlTransport.SharedInstanceError")
public typealias SharedInstanceError = CurlTransport.SharedInstanceError

/// The former name of ``CurlTransport/Library``.
@available(*, deprecated, renamed: "CurlTransport.Library")
public typealias CurlLibrary = CurlTransport.Library

/// The former name of ``HTTPRequest/BodyReceiver``.
@available(*, deprecated, renamed: "HTTPRequest.BodyReceiver")
public typealias ResponseBodyReceiver = HTTPRequest.BodyReceiver

/// The former name of ``HTTPRequest/BodyStream``.
@available(*, deprecated, renamed: "HTTPRequest.BodyStream")
public typealias RequestBodyStream = HTTPRequest.BodyStream

/// The former name of ``HTTPRequest/MultipartForm``.
@available(*, deprecated, renamed: "HTTPRequest.MultipartForm")
public typealias MultipartForm = HTTPRequest.MultipartForm

/// The former name of ``StreamingResponse/Body``.
@available(*, deprecated, renamed: "StreamingResponse.Body")
public typealias ResponseBodyStream = StreamingResponse.Body

/// The former name of ``FileDownload/Failure``.
@available(*, deprecated, renamed: "FileDownload.Failure")
public typealias DownloadError = FileDownload.Failure
