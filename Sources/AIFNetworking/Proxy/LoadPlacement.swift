/// Where a proxy's loads do their own work — signing, decoding, validation, hooks and
/// `.immediate` delivery — between the transport's I/O. A speed mechanism, offered to the
/// benchmarks as SPI (`@_spi(Performance) import AIFNetworking`); proxies use ``automatic``.
@_spi(Performance)
public enum LoadPlacement: Sendable, Hashable {
    /// The library's load executor, a concurrent Dispatch queue: the transport's thread hands
    /// each batch of finished responses to one Dispatch block, which puts each load's next step
    /// on the queue. Decoding and delegates then run beside the I/O, on Dispatch's workers, at
    /// the price of thread hand-offs.
    case loadExecutor
    /// The ``/AIFTransport/CurlTransport``'s own thread: no hand-off at all, so less CPU per load, but the
    /// work shares one thread with all I/O (it must not block). Over another transport, the
    /// load executor.
    case transportThread
    /// For the delegate face's loads, ``transportThread`` when the process can use only one
    /// processor (its CPU affinity allows one, or its control group's CPU quota is one or
    /// less): another thread could not run beside the transport's, and a hand-off would cost
    /// context switches and nothing else. ``loadExecutor`` otherwise, and always for the async
    /// face's loads, whose awaiting callers are resumed on their own executors whatever the
    /// placement: from the load executor's threads, where the transport's thread would stop
    /// its I/O to wake each (measured on one processor at c=16: 47 µs a load against 55).
    /// Decided when the proxy is made.
    case automatic
}

extension LoadPlacement {
    /// Whether the delegate face's loads and the async face's tasks go to the transport's
    /// thread, for a process that can use `processors` processors.
    func onTransportThread(processors: Int) -> (loads: Bool, tasks: Bool) {
        switch self {
        case .loadExecutor: (false, false)
        case .transportThread: (true, true)
        case .automatic: (processors == 1, false)
        }
    }
}
