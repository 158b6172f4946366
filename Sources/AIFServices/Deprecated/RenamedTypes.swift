// Types that became nested in the type they belong to. Each name forwards to its new place and
// goes in a later major version.

/// The former name of ``APIDefine/Format``.
@available(*, deprecated, renamed: "APIDefine.Format")
public typealias APIDefineFormat = APIDefine.Format

/// The former name of ``APIDefine/Document``.
@available(*, deprecated, renamed: "APIDefine.Document")
public typealias APIDefineDocument = APIDefine.Document

/// The former name of ``APIDefine/JSONFormat``.
@available(*, deprecated, renamed: "APIDefine.JSONFormat")
public typealias JSONDefineFormat = APIDefine.JSONFormat
