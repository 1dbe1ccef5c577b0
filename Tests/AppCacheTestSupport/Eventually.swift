import Foundation

/// Waits until `condition` holds, checking often, for at most `seconds`; returns whether it
/// held. For waiting on another task's or process's progress, never for ageing data. Generous:
/// the tests share two cores with tests that block theirs (running example programs). Runs on
/// the caller's actor, so `condition` may read the main actor's state.
public func eventually(
    within seconds: Double = 30, isolation: isolated (any Actor)? = #isolation, _ condition: () -> Bool
) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return condition()
}
