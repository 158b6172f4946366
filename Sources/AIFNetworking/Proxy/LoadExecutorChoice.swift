/// Where a proxy's delegate-face loads (`loadData`) do their own work — signing, decoding,
/// validation, hooks and `.immediate` delivery — between the transport's I/O. A speed
/// mechanism, offered to the benchmarks as SPI (`@_spi(Performance) import AIFNetworking`);
/// proxies use ``automatic``. The async face's loads do theirs in the task that awaits them,
/// whatever the choice.
@_spi(Performance)
public enum LoadExecutorChoice: Sendable, Hashable {
    /// The library's load executor, a concurrent Dispatch queue: the transport's thread puts
    /// each load's next step on the queue. Decoding and delegates then run beside the I/O, on
    /// Dispatch's workers, at the price of thread hand-offs.
    case loadExecutor
    /// The ``/AIFTransport/CurlTransport``'s own thread: no hand-off at all, so less CPU per load, but the
    /// work shares one thread with all I/O (it must not block). Over another transport, the
    /// load executor.
    case transportThread
    /// ``transportThread`` when the process can use only one processor (its CPU affinity allows
    /// one, or its control group's CPU quota is one or less): another thread could not run
    /// beside the transport's, and a hand-off would cost context switches and nothing else.
    /// ``loadExecutor`` otherwise. Decided when the proxy is made.
    case automatic
}

extension LoadExecutorChoice {
    /// Whether the delegate face's loads go to the transport's thread, for a process that can
    /// use `processors` processors.
    func onTransportThread(processors: Int) -> Bool {
        switch self {
        case .loadExecutor: false
        case .transportThread: true
        case .automatic: processors == 1
        }
    }
}
