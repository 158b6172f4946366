// Services build requests for the transport and read its responses; importing AIFServices
// imports the transport too.
@_exported import AIFTransport
