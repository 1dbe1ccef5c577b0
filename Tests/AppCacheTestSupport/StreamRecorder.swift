/// Follows a stream on a task of its own, keeping every value it yields: how tests watch
/// `updates(of:forKey:)` without sleeping.
public final class StreamRecorder<Element: Sendable>: Sendable {
    private let values = TestLock<[Element]>([])
    private let task = TestLock<Task<Void, Never>?>(nil)

    public init(_ stream: AsyncStream<Element>) {
        let values = values
        task.withLock { $0 = Task { for await value in stream { values.withLock { $0.append(value) } } } }
    }

    /// Every value yielded so far, oldest first.
    public var seen: [Element] { values.withLock { $0 } }
    /// The latest value; `nil` when none has been yielded yet.
    public var last: Element? { values.withLock { $0.last } }

    /// Stops following (the stream ends).
    public func stop() {
        task.withLock { $0?.cancel() }
    }

    deinit {
        task.withLock { $0?.cancel() }
    }
}
