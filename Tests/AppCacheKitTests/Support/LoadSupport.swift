import Foundation
@testable import AppCacheKit

/// A latch a test opens by hand: fetches wait on it, so a test decides when they answer.
final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the gate is open (at once if it is); ignores cancellation, as a network
    /// call that has already been sent would.
    func wait() async {
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state -> Bool in
                if !state.isOpen { state.waiters.append(continuation) }
                return state.isOpen
            }
            if isOpen { continuation.resume() }
        }
    }
}

/// A stand-in server for loads: counts fetches, records the validators each was given, and
/// answers what the test scripted, optionally after a gate opens.
final class FakeServer: Sendable {
    private struct State {
        var fetches = 0
        var finished = 0
        var validators: [CacheValidators?] = []
        var answer: Answer = .items([], etag: nil)
    }

    enum Answer: Sendable {
        case items([Note], etag: String?)
        case notModified
        case failure(TestFailure)
    }

    struct TestFailure: Error, Equatable {
        var reason: String
    }

    private let state = Locked(State())
    let gate: Gate?

    init(answer: Answer, gated: Bool = false) {
        gate = gated ? Gate() : nil
        state.withLock { $0.answer = answer }
    }

    var fetches: Int { state.withLock { $0.fetches } }
    var finished: Int { state.withLock { $0.finished } }
    var receivedValidators: [CacheValidators?] { state.withLock { $0.validators } }

    func answer(_ answer: Answer) {
        state.withLock { $0.answer = answer }
    }

    /// The `fetch` closure of a load.
    var fetch: @Sendable (CacheValidators?) async throws -> FetchResult<Note> {
        { [self] validators in
            let answer = state.withLock { state -> Answer in
                state.fetches += 1
                state.validators.append(validators)
                return state.answer
            }
            await gate?.wait()
            defer { state.withLock { $0.finished += 1 } }
            switch answer {
            case .items(let notes, let etag): return .items(notes, validators: etag.map { CacheValidators(etag: $0) })
            case .notModified: return .notModified
            case .failure(let failure): throw failure
            }
        }
    }
}

/// Collects everything a stream yields, and how it ended.
func collect<Model: CacheableModel>(
    _ stream: AsyncThrowingStream<LoadedItems<Model>, any Error>
) async -> (answers: [LoadedItems<Model>], error: (any Error)?) {
    var answers: [LoadedItems<Model>] = []
    do {
        for try await answer in stream { answers.append(answer) }
        return (answers, nil)
    } catch {
        return (answers, error)
    }
}
