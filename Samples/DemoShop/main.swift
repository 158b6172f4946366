import AIFNetworking
import AIFNetworkingTesting
import DemoServer
import Foundation

// The demo shop on its own, for the README's quick start and for trying `aif` by hand: the
// online catalogue on 127.0.0.1:8080 and the offline one on 8081 (or the ports given), signed
// with the demo keys, until interrupted. Usage: DemoShop [ONLINE-PORT [OFFLINE-PORT]]

let ports = CommandLine.arguments.dropFirst().map { Int($0) }
guard ports.allSatisfy({ $0 != nil }), ports.count <= 2 else {
    FileHandle.standardError.write(Data("usage: DemoShop [ONLINE-PORT [OFFLINE-PORT]]\n".utf8))
    exit(64)
}
let online = try await DemoShopServer.start(environment: .online, port: ports.first.flatMap { $0 } ?? 8080)
let offline = try await DemoShopServer.start(environment: .offline, port: ports.dropFirst().first.flatMap { $0 } ?? 8081)
// Written straight to the descriptor: a print would wait in a buffer when the output is a pipe.
FileHandle.standardOutput.write(Data("""
    The demo shop is listening: online at \(online.baseURL()), offline at \(offline.baseURL()).
    Configs/shop.json reads these variables:

    export SHOP_ONLINE_URL=\(online.baseURL()) SHOP_OFFLINE_URL=\(offline.baseURL())
    export SHOP_PUBLIC_KEY=\(ShopRoutes.publicKey) SHOP_PRIVATE_KEY=\(ShopRoutes.privateKey)

    Stop it with Ctrl-C.

    """.utf8))
while true {
    try await Task.sleep(for: .seconds(3600))
}
