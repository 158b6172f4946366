// The layers below are modules of their own (each knows nothing of those above it); importing
// AIFNetworking imports them too, so a user's code names their types as before.
@_exported import AIFServices
@_exported import AIFTransport
