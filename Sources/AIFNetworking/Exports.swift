// The transport is a module of its own (it knows nothing of the layers above); importing
// AIFNetworking imports it too, so a user's code names its types as before.
@_exported import AIFTransport
