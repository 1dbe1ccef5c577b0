import Foundation

/// The flights under way, by user, model type and key.
final class FlightTable: Sendable {
    struct Key: Hashable {
        var session: CacheSession
        var type: ObjectIdentifier
        var key: String?
        /// For a next page's flight: the cursor it fetches from (`nil`: a refresh).
        var pageCursor: String? = nil
    }

    private let flights = Locked<[Key: AnyObject]>([:])

    /// Joins the flight for `key`, starting one with `work` when none takes waiters, and
    /// returns its outcome for this waiter.
    ///
    /// A flight abandoned by its last waiter takes no new ones: a load that finds one starts a
    /// new flight, so it never gets another load's cancellation.
    ///
    /// - Returns: the flight's outcome; `.cancelled` only when the calling task was cancelled.
    func join<Model: CacheableModel>(
        _ key: Key, as type: Model.Type, work: @escaping @Sendable () async -> Flight<Model>.Outcome
    ) async -> Flight<Model>.Outcome {
        while true {
            let (flight, isNew) = flights.withLock { flights -> (Flight<Model>, Bool) in
                if let existing = flights[key] as? Flight<Model> { return (existing, false) }
                let flight = Flight<Model>()
                flights[key] = flight
                return (flight, true)
            }
            if isNew {
                flight.start { [weak self] in
                    let outcome = await work()
                    self?.flights.withLock { flights in
                        if flights[key] === flight { flights[key] = nil }
                    }
                    return outcome
                }
            }
            if let outcome = await flight.join() { return outcome }
            // Abandoned by its last waiter just before this one came: forget it, start afresh.
            flights.withLock { flights in
                if flights[key] === flight { flights[key] = nil }
            }
            if Task.isCancelled { return .cancelled }
        }
    }

    /// How many flights are under way, and how many loads wait for them in all.
    var census: (flights: Int, waiters: Int) {
        let all = flights.withLock { Array($0.values) }
        return (all.count, all.reduce(0) { $0 + (($1 as? any FlightCounting)?.waiterCount ?? 0) })
    }
}

/// A flight of any model type, as far as counting goes.
protocol FlightCounting: AnyObject {
    var waiterCount: Int { get }
}

extension Flight: FlightCounting {}
