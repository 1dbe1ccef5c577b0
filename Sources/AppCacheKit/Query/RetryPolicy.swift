import Foundation

/// How a failed fetch of ``AppCache/load(_:forKey:policy:retry:fetch:)-(_,_,_,_,(LoadContext<Model>)->FetchResult<Model>)`` is tried again:
/// exponential backoff with full jitter, a bounded number of attempts, and no attempt burnt
/// while the device is offline.
///
/// Between attempt `n` and `n + 1` (counting from 1) the load waits a random moment between
/// zero and `initialDelay * 2^(n - 1)`, capped at `maximumDelay` ("full jitter": many clients
/// that failed together do not retry together). It stops after `maxAttempts` attempts, when
/// `retryIf` says an error is final, and never retries a cancellation. When an attempt fails
/// because there is no network (`URLError` or `NSError` of `NSURLErrorDomain` with code
/// -1009 not connected, -1005 connection lost or -1020 data not allowed), the load waits for
/// ``AppCache/networkDidBecomeAvailable()`` (on Apple platforms also the system's path monitor)
/// instead, without counting the attempt. A load whose every stream ended stops waiting.
///
/// ```swift
/// let retry = RetryPolicy.exponentialBackoff(
///     maxAttempts: 5, initialDelay: .milliseconds(500), maximumDelay: .seconds(20),
///     retryIf: { error in (error as? APIError)?.isTemporary ?? true })
/// for try await loaded in cache.load(Post.self, forKey: "top", retry: retry, fetch: { _ in .items(try await api.top()) }) {
///     show(loaded.items)
/// }
/// ```
///
/// Thread safety: a value; `retryIf` may run on any thread.
public struct RetryPolicy: Sendable {
    /// The most attempts, the first included (at least 1).
    public let maxAttempts: Int
    /// The cap of the first wait.
    public let initialDelay: Duration
    /// The cap of every wait.
    public let maximumDelay: Duration
    let retryIf: @Sendable (any Error) -> Bool

    /// One attempt, no retry.
    public static let none = RetryPolicy(maxAttempts: 1, initialDelay: .zero, maximumDelay: .zero, retryIf: { _ in false })

    /// Three attempts, waits of up to 1 s then 2 s (full jitter), retrying every error but a
    /// cancellation.
    public static let `default` = exponentialBackoff(maxAttempts: 3, initialDelay: .seconds(1), maximumDelay: .seconds(30))

    /// Exponential backoff with full jitter.
    ///
    /// - Parameters:
    ///   - maxAttempts: the most attempts, the first included; values below 1 count as 1.
    ///   - initialDelay: the cap of the wait after the first failure; it doubles with each.
    ///   - maximumDelay: the cap of every wait.
    ///   - retryIf: whether an error may be retried (cancellations never are).
    public static func exponentialBackoff(
        maxAttempts: Int, initialDelay: Duration, maximumDelay: Duration,
        retryIf: @escaping @Sendable (any Error) -> Bool = { _ in true }
    ) -> RetryPolicy {
        RetryPolicy(
            maxAttempts: max(maxAttempts, 1), initialDelay: max(initialDelay, .zero), maximumDelay: max(maximumDelay, .zero),
            retryIf: retryIf)
    }

    private init(maxAttempts: Int, initialDelay: Duration, maximumDelay: Duration, retryIf: @escaping @Sendable (any Error) -> Bool) {
        self.maxAttempts = maxAttempts
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.retryIf = retryIf
    }

    /// The most the wait after `failures` failed attempts (1 or more) may be:
    /// `initialDelay * 2^(failures - 1)`, capped at `maximumDelay`.
    func delayCap(afterFailures failures: Int) -> Duration {
        let doublings = min(max(failures - 1, 0), 62)
        let seconds = initialDelay.timeInterval * pow(2, Double(doublings))
        return min(.seconds(min(seconds, maximumDelay.timeInterval)), maximumDelay)
    }

    /// The wait after `failures` failed attempts: `fraction` (in 0...1, random) of the cap.
    func delay(afterFailures failures: Int, fraction: Double) -> Duration {
        .seconds(delayCap(afterFailures: failures).timeInterval * min(max(fraction, 0), 1))
    }

    /// Runs `operation` as this policy says: again after a failure `retryIf` accepts, after the
    /// policy's delay, up to `maxAttempts` in all; offline (an error of no network) it waits for
    /// `network` instead of spending an attempt. The one retry loop of loads, watches and pages.
    ///
    /// - Returns: the operation's value or its last error; `nil` when the calling task was
    ///   cancelled (nobody waits for the answer).
    func run<Value: Sendable>(
        network: NetworkSignal, timers: CacheTimers = .system, onRetry: (_ attempt: Int, _ delay: Duration) -> Void = { _, _ in },
        _ operation: () async throws -> Value
    ) async -> Swift.Result<Value, any Error>? {
        var failures = 0
        while true {
            do {
                return .success(try await operation())
            } catch {
                if Task.isCancelled { return nil }
                if Self.isCancellation(error) { return .failure(error) }
                if maxAttempts > 1, Self.isNoNetwork(error) {
                    // Offline: wait for the network rather than burn an attempt.
                    await network.waitForAvailability()
                    if Task.isCancelled { return nil }
                    continue
                }
                failures += 1
                guard failures < maxAttempts, retryIf(error) else { return .failure(error) }
                let wait = delay(afterFailures: failures, fraction: .random(in: 0...1))
                onRetry(failures, wait)
                await timers.sleep(for: wait)
                if Task.isCancelled { return nil }
            }
        }
    }

    /// This policy, or ``none`` when the configuration turns retries off
    /// (``AppCache/Configuration/retriesFailedFetches``).
    func unlessOff(_ configuration: AppCache.Configuration) -> RetryPolicy {
        configuration.retriesFailedFetches ? self : .none
    }

    /// Whether `error` says the device has no network: `NSURLErrorDomain` -1009 (not connected
    /// to the internet), -1005 (the connection was lost), -1020 (data not allowed), however it
    /// arrives (`URLError`, `NSError`, or one wrapped as another's underlying error).
    static func isNoNetwork(_ error: any Error) -> Bool {
        let codes: Set<Int> = [-1009, -1005, -1020]
        if let error = error as? URLError { return codes.contains(error.errorCode) }
        let bridged = error as NSError
        if bridged.domain == NSURLErrorDomain, codes.contains(bridged.code) { return true }
        if let underlying = bridged.userInfo[NSUnderlyingErrorKey] as? NSError, underlying !== bridged {
            return underlying.domain == NSURLErrorDomain && codes.contains(underlying.code)
        }
        return false
    }

    /// Whether `error` is a cancellation (`CancellationError`, `URLError.cancelled`): never retried.
    static func isCancellation(_ error: any Error) -> Bool {
        if error is CancellationError { return true }
        if let error = error as? URLError { return error.code == .cancelled }
        let bridged = error as NSError
        return bridged.domain == NSURLErrorDomain && bridged.code == NSURLErrorCancelled
    }
}
