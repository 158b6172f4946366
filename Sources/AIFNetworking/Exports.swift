// The layers below are modules of their own (each knows nothing of those above it); importing
// AIFNetworking imports them too, so a user's code names their types as before. Whole modules,
// not a list of types: every public type of the two is one a user of this layer names (a
// request, a response, a service, a policy, a signer…), and they declare no other public name
// but the version — a list would repeat each of them and add nothing.
@_exported import AIFServices
@_exported import AIFTransport
