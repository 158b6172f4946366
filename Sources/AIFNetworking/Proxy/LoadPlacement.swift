/// Where a proxy's loads do their own work — signing, decoding, validation, hooks and
/// `.immediate` delivery — between the transport's I/O.
public enum LoadPlacement: Sendable, Hashable {
    /// The library's load executor: the transport's thread hands each batch of finished
    /// responses to one Dispatch worker, which runs the loads they resume one after another (at
    /// most one worker per usable processor, less one for the transport). Decoding and delegates
    /// then run beside the I/O, at the price of a thread hand-off per batch.
    case loadExecutor
    /// The ``CurlTransport``'s own thread: no hand-off at all, so less CPU per load, but the
    /// work shares one thread with all I/O (it must not block). Over another transport, the
    /// load executor.
    case transportThread
    /// ``transportThread`` when the process can use only one processor (its CPU affinity allows
    /// one, or its control group's CPU quota is one or less), where another thread could not
    /// run beside the transport's and a hand-off would cost context switches and nothing
    /// else; ``loadExecutor`` otherwise. Decided when the proxy is made.
    case automatic
}
