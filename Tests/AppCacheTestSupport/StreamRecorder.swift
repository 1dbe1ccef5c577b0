/// Follows a stream on a task of its own, keeping every value it yields: how tests watch
/// `updates(of:forKey:)` without sleeping.
public final class StreamRecorder<Element: Sendable>: Sendable {
    private let values = TestLock<[Element]>([])
    private let task = TestLock<Task<Void, Never>?>(nil)

    private let failure = TestLock<(any Error)?>(nil)
    private let finished = TestLock(false)

    public init(_ stream: AsyncStream<Element>) {
        let values = values
        let finished = finished
        task.withLock {
            $0 = Task {
                for await value in stream { values.withLock { $0.append(value) } }
                finished.withLock { $0 = true }
            }
        }
    }

    /// Follows a throwing stream; its error, if it throws, is in ``error``.
    public init(_ stream: AsyncThrowingStream<Element, any Error>) {
        let values = values
        let failure = failure
        task.withLock {
            $0 = Task {
                do {
                    for try await value in stream { values.withLock { $0.append(value) } }
                } catch {
                    failure.withLock { $0 = error }
                }
            }
        }
    }

    /// Whether a non-throwing stream has ended (finished by its producer, or stopped).
    public var hasFinished: Bool { finished.withLock { $0 } }

    /// The error the stream ended with; `nil` while it runs or when it finished normally.
    public var error: (any Error)? { failure.withLock { $0 } }

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
