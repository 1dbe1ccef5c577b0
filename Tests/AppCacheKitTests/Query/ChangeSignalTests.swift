import AppCacheTestSupport
import Foundation
import Testing

@testable import AppCacheKit

/// ``ChangeSignal``, the wake-up call every observer, watch and sender waits on: fires coalesce
/// into one pending wake-up, a wait without one runs to its timeout, a cancelled wait returns.
/// Its timer is the system's (uptime), so a timeout is waited for in real time, a few tens of
/// milliseconds; a wake-up is checked by the wait returning.
@Suite struct ChangeSignalTests {
    static let timeout = Duration.milliseconds(30)

    /// How long `body` took.
    static func elapsed(_ body: () async -> Void) async -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        await body()
        return clock.now - start
    }

    @Test func firesWhileNobodyWaitsWakeTheNextWaitOnce() async {
        let signal = ChangeSignal()
        for _ in 1...3 { signal.fire() }
        #expect(signal.fireCount == 3)
        #expect(await Self.elapsed { await signal.wait(timeout: .seconds(20)) } < .seconds(20), "pending: at once")
        // The three were one wake-up: the next wait runs to its timeout.
        #expect(await Self.elapsed { await signal.wait(timeout: Self.timeout) } >= Self.timeout)
        #expect(signal.fireCount == 3, "a timed-out wait: the count did not move")
    }

    @Test func aWaitWithoutAFireEndsAtItsTimeout() async {
        let signal = ChangeSignal()
        #expect(await Self.elapsed { await signal.wait(timeout: Self.timeout) } >= Self.timeout)
        await signal.wait(timeout: .zero)  // "step again at once"
        #expect(signal.fireCount == 0)
    }

    @Test func aFireWakesTheWaiterAndLeavesNothingPending() async {
        let signal = ChangeSignal()
        let waiter = Task { await signal.wait(timeout: nil) }
        signal.fire()
        await waiter.value
        #expect(await Self.elapsed { await signal.wait(timeout: Self.timeout) } >= Self.timeout)
    }

    @Test func cancellingTheWaitingTaskEndsOnlyItsWait() async {
        let signal = ChangeSignal()
        let returned = TestLock(false)
        let waiter = Task {
            await signal.wait(timeout: nil)
            returned.withLock { $0 = true }
        }
        waiter.cancel()
        #expect(await eventually { returned.withLock { $0 } })
        #expect(await Self.elapsed { await signal.wait(timeout: Self.timeout) } >= Self.timeout, "no wake-up left for the next")
        signal.fire()  // lets a wait that ignored its cancellation go
        await waiter.value
    }
}
