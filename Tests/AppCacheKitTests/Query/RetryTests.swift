import AppCacheTestSupport
import Foundation
import Testing

@testable import AppCacheKit

/// Retrying a failed fetch: exponential backoff with full jitter, a bounded number of attempts,
/// no retry of a cancellation or of what `retryIf` refuses, and no attempt burnt offline. Short
/// real delays (a millisecond) where a wait happens; waits that must not happen are a minute.
@Suite struct RetryTests {
    struct Offline: Error {}

    /// A fetch that fails with the given errors, one per attempt, then answers `items`.
    final class Script: Sendable {
        private let state: Locked<(attempts: Int, failures: [any Error])>
        let items: [Note]

        init(failures: [any Error], items: [Note] = [Note.make(1)]) {
            state = Locked((0, failures))
            self.items = items
        }

        var attempts: Int { state.withLock { $0.attempts } }

        var fetch: @Sendable (CacheValidators?) async throws -> FetchResult<Note> {
            { [self] _ in
                let failure = state.withLock { state -> (any Error)? in
                    state.attempts += 1
                    return state.failures.isEmpty ? nil : state.failures.removeFirst()
                }
                if let failure { throw failure }
                return .items(items)
            }
        }
    }

    static let quick = RetryPolicy.exponentialBackoff(maxAttempts: 3, initialDelay: .milliseconds(1), maximumDelay: .milliseconds(2))
    static let slow = RetryPolicy.exponentialBackoff(maxAttempts: 3, initialDelay: .seconds(60), maximumDelay: .seconds(60))

    @Test func waitsGrowExponentiallyWithFullJitterUpToTheCap() {
        let policy = RetryPolicy.exponentialBackoff(maxAttempts: 9, initialDelay: .milliseconds(100), maximumDelay: .seconds(1))
        #expect(policy.delayCap(afterFailures: 1) == .milliseconds(100))
        #expect(policy.delayCap(afterFailures: 2) == .milliseconds(200))
        #expect(policy.delayCap(afterFailures: 4) == .milliseconds(800))
        #expect(policy.delayCap(afterFailures: 5) == .seconds(1), "capped")
        #expect(policy.delayCap(afterFailures: 500) == .seconds(1), "no overflow")
        #expect(policy.delay(afterFailures: 3, fraction: 0) == .zero)
        #expect(policy.delay(afterFailures: 3, fraction: 0.5) == .milliseconds(200))
        #expect(RetryPolicy.default.maxAttempts == 3 && RetryPolicy.none.maxAttempts == 1)
        #expect(RetryPolicy.exponentialBackoff(maxAttempts: 0, initialDelay: .zero, maximumDelay: .zero).maxAttempts == 1)
    }

    @Test func noNetworkAndCancellationAreRecognisedHoweverTheyArrive() {
        #expect(RetryPolicy.isNoNetwork(URLError(.notConnectedToInternet)))
        #expect(RetryPolicy.isNoNetwork(URLError(.networkConnectionLost)))
        #expect(RetryPolicy.isNoNetwork(URLError(.dataNotAllowed)))
        #expect(RetryPolicy.isNoNetwork(NSError(domain: NSURLErrorDomain, code: -1009)))
        #expect(RetryPolicy.isNoNetwork(NSError(domain: "API", code: 1, userInfo: [NSUnderlyingErrorKey: NSError(domain: NSURLErrorDomain, code: -1005)])))
        #expect(!RetryPolicy.isNoNetwork(URLError(.timedOut)))
        #expect(!RetryPolicy.isNoNetwork(Offline()))
        #expect(RetryPolicy.isCancellation(CancellationError()))
        #expect(RetryPolicy.isCancellation(URLError(.cancelled)))
        #expect(!RetryPolicy.isCancellation(URLError(.timedOut)))
    }

    @Test func aFailedFetchIsTriedAgainUntilItSucceeds() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        let script = Script(failures: [Offline(), Offline()])
        let (answers, error) = await collect(cache.load(Note.self, retry: Self.quick, fetch: script.fetch))
        #expect(error == nil)
        #expect(answers.map(\.items) == [[Note.make(1)]])
        #expect(script.attempts == 3)
        #expect(try cache.getCachedItems(Note.self) == [Note.make(1)])
    }

    @Test func attemptsStopAtTheLimitAndTheCachedItemsCarryTheLastError() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try cache.cacheItems([Note.make(0)])
        fixture.clock.advance(by: .seconds(7200))  // stale
        let script = Script(failures: [Offline(), Offline(), FakeServer.TestFailure(reason: "third"), Offline()])
        let (answers, error) = await collect(cache.load(Note.self, retry: Self.quick, fetch: script.fetch))
        #expect(error == nil)
        #expect(script.attempts == 3)
        #expect(answers.map(\.items) == [[Note.make(0)], [Note.make(0)]], "the cached items stay shown")
        #expect((answers.last?.refreshError as? FakeServer.TestFailure)?.reason == "third", "the last error")
    }

    @Test func whatRetryIfRefusesAndCancellationsAreNotRetried() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        let refusing = RetryPolicy.exponentialBackoff(
            maxAttempts: 5, initialDelay: .seconds(60), maximumDelay: .seconds(60), retryIf: { !($0 is Offline) })
        let final = Script(failures: [Offline()])
        let (_, error) = await collect(cache.load(Note.self, forKey: "a", retry: refusing, fetch: final.fetch))
        #expect(error is Offline)
        #expect(final.attempts == 1)

        let cancelled = Script(failures: [CancellationError()])
        let (_, cancellation) = await collect(cache.load(Note.self, forKey: "b", retry: Self.slow, fetch: cancelled.fetch))
        #expect(cancellation is CancellationError)
        #expect(cancelled.attempts == 1)

        let none = Script(failures: [Offline()])
        _ = await collect(cache.load(Note.self, forKey: "c", retry: .none, fetch: none.fetch))
        #expect(none.attempts == 1)
    }

    @Test func offlineTheFetchWaitsForTheNetworkWithoutBurningAttempts() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        // Three times offline, with a minute's backoff: were those attempts counted (or waited
        // out), the load would fail or take minutes.
        let script = Script(failures: [URLError(.notConnectedToInternet), NSError(domain: NSURLErrorDomain, code: -1005), URLError(.dataNotAllowed)])
        let load = Task { await collect(cache.load(Note.self, retry: Self.slow, fetch: script.fetch)) }
        for attempt in 1...3 {
            #expect(await eventually { cache.queries.network.waiterCount == 1 && script.attempts == attempt }, "waiting after offline attempt \(attempt)")
            cache.networkDidBecomeAvailable()
        }
        let (answers, error) = await load.value
        #expect(error == nil)
        #expect(answers.map(\.items) == [[Note.make(1)]])
        #expect(script.attempts == 4)
    }

    @Test func aLoadWhoseStreamEndsStopsWaitingAndRetrying() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try cache.cacheItems([Note.make(0)])
        fixture.clock.advance(by: .seconds(7200))
        let script = Script(failures: [URLError(.notConnectedToInternet)])
        let consumer = Task {
            for try await _ in cache.load(Note.self, retry: Self.slow, fetch: script.fetch) {}
        }
        #expect(await eventually { cache.queries.network.waiterCount == 1 })
        consumer.cancel()
        #expect(await eventually { cache.queries.network.waiterCount == 0 }, "the flight stopped waiting")
        cache.networkDidBecomeAvailable()
        #expect(script.attempts == 1, "and never tried again")
        // The consumer (and the cache it holds) ends before the fixture's directory goes.
        _ = await consumer.result
    }
}
