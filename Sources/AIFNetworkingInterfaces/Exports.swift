// A typed interface's generated client names the library's types (endpoints, managers, errors):
// importing AIFNetworkingInterfaces imports the library too.
@_exported import AIFNetworking
