// Types that became nested in the type they belong to. Each name forwards to its new place and
// goes in a later major version.

/// The former name of ``CurlTransport/SharedInstanceError``.
@available(*, deprecated, renamed: "CurlTransport.SharedInstanceError")
public typealias SharedInstanceError = CurlTransport.SharedInstanceError

/// The former name of ``CurlTransport/Library``.
@available(*, deprecated, renamed: "CurlTransport.Library")
public typealias CurlLibrary = CurlTransport.Library
