import Foundation

/// Waits until `condition` holds, checking often, for at most `seconds`; returns whether it
/// held. For waiting on another task's or process's progress, never for ageing data. Generous:
/// the tests share two cores, and the cooperative pool's two threads, with synchronous tests
/// that hold one for up to a minute (the pack damage and disk budget sweeps, the example
/// programs): an asynchronous test may make no progress at all for that long, and a wait
/// measures progress, not speed. Runs on the caller's actor, so `condition` may read the main
/// actor's state.
public func eventually(
    within seconds: Double = 120, isolation: isolated (any Actor)? = #isolation, _ condition: () -> Bool
) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds * sanitizerSlowdown)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return condition()
}

/// How much longer waits are under the sanitizers (`Scripts/sanitize` builds with
/// `APPCACHE_SANITIZED`), where everything runs several times slower and tests that compute
/// hold the two threads of the cooperative pool for longer: a wait measures progress, not speed.
public let sanitizerSlowdown: Double = {
    #if APPCACHE_SANITIZED
    return 4
    #else
    return 1
    #endif
}()
