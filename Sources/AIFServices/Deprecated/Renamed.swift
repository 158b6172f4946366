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

/// The former name of ``Parameters/Convertible``.
@available(*, deprecated, renamed: "Parameters.Convertible")
public typealias ParameterConvertible = Parameters.Convertible

/// The former name of ``Parameters/Placement``.
@available(*, deprecated, renamed: "Parameters.Placement")
public typealias ParameterPlacement = Parameters.Placement

/// The former name of ``Parameters/ArrayEncoding``.
@available(*, deprecated, renamed: "Parameters.ArrayEncoding")
public typealias ArrayEncoding = Parameters.ArrayEncoding

/// The former name of ``Parameters/ArrayWriter``.
@available(*, deprecated, renamed: "Parameters.ArrayWriter")
public typealias ArrayWriter = Parameters.ArrayWriter

/// The former name of ``SigningContext/Credentials``.
@available(*, deprecated, renamed: "SigningContext.Credentials")
public typealias SigningCredentials = SigningContext.Credentials

/// The former name of ``FixtureTransport/Recorder``.
@available(*, deprecated, renamed: "FixtureTransport.Recorder")
public typealias FixtureRecorder = FixtureTransport.Recorder

/// The former name of ``ServiceRegistry/ConfigurationError``.
@available(*, deprecated, renamed: "ServiceRegistry.ConfigurationError")
public typealias ConfigurationError = ServiceRegistry.ConfigurationError

/// The former name of ``ServiceEnvironment/MockBehavior``.
@available(*, deprecated, renamed: "ServiceEnvironment.MockBehavior")
public typealias MockBehavior = ServiceEnvironment.MockBehavior

/// The former name of ``ServiceVeto/Rule``.
@available(*, deprecated, renamed: "ServiceVeto.Rule")
public typealias ApplicationErrorRule = ServiceVeto.Rule

/// The former name of ``Parameters/BodyEncoding``.
@available(*, deprecated, renamed: "Parameters.BodyEncoding")
public typealias BodyEncoding = Parameters.BodyEncoding
