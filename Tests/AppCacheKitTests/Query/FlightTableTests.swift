import AppCacheTestSupport
import Foundation
import Testing

@testable import AppCacheKit

/// The single flight of loads (``FlightTable``, ``Flight``): loads of one collection share one
/// fetch; collections, users, sessions and pages do not; a load that leaves takes only itself
/// away, unless it is the last, when the fetch is cancelled and the next load starts afresh.
@Suite struct FlightTableTests {
    static let date = Date(timeIntervalSince1970: 1_800_000_000)

    /// A fetch that counts its runs and holds until its gate opens (ignoring cancellation, as a
    /// request already sent does), then notes whether its task was cancelled meanwhile.
    final class HeldFetch: Sendable {
        let gate = Gate()
        let items: [Plain]
        private let state = Locked<(runs: Int, ended: Int, cancelled: Int)>((0, 0, 0))

        init(_ items: [Plain]) {
            self.items = items
        }

        var runs: Int { state.withLock { $0.runs } }
        var ended: Int { state.withLock { $0.ended } }
        var cancelled: Int { state.withLock { $0.cancelled } }

        var work: @Sendable () async -> Flight<Plain>.Outcome {
            { [self] in
                state.withLock { $0.runs += 1 }
                await gate.wait()
                let cancelled = Task.isCancelled
                state.withLock { state in
                    state.ended += 1
                    if cancelled { state.cancelled += 1 }
                }
                return cancelled ? .cancelled : .items(items, cachedDate: FlightTableTests.date)
            }
        }
    }

    static func key(_ session: CacheSession = UserTable(user: "alice").current, _ key: String? = "top", cursor: String? = nil) -> FlightTable.Key {
        FlightTable.Key(session: session, type: ObjectIdentifier(Plain.self), key: key, pageCursor: cursor)
    }

    static func items(_ outcome: Flight<Plain>.Outcome) -> [Plain]? {
        if case .items(let items, _) = outcome { items } else { nil }
    }

    static func isCancelled(_ outcome: Flight<Plain>.Outcome) -> Bool {
        if case .cancelled = outcome { true } else { false }
    }

    @Test func loadsOfOneCollectionShareOneFetchAndALaterLoadFetchesAgain() async {
        let table = FlightTable()
        let fetch = HeldFetch([Plain(value: 1)])
        let loads = (0..<3).map { _ in Task { await table.join(Self.key(), as: Plain.self, work: fetch.work) } }
        #expect(await eventually { table.census == (1, 3) }, "one flight, three waiting")
        fetch.gate.open()
        for load in loads { #expect(Self.items(await load.value) == [Plain(value: 1)]) }
        #expect(fetch.runs == 1)
        #expect(table.census == (0, 0), "an ended flight leaves the table")

        // Its outcome is not kept for the next load.
        let again = HeldFetch([Plain(value: 2)])
        again.gate.open()
        #expect(Self.items(await table.join(Self.key(), as: Plain.self, work: again.work)) == [Plain(value: 2)])
        #expect(again.runs == 1 && fetch.runs == 1)
    }

    @Test func otherCollectionsUsersSessionsAndPagesFlyApart() async {
        let table = FlightTable()
        var sessions = UserTable(user: "alice")
        let before = sessions.current
        sessions.didRemoveData(of: "alice")
        let keys = [
            Self.key(before), Self.key(before, "other"), Self.key(UserTable(user: "bob").current),
            Self.key(sessions.current), Self.key(before, cursor: "page-2"),
            FlightTable.Key(session: before, type: ObjectIdentifier(Note.self), key: "top"),
        ]
        let fetch = HeldFetch([Plain(value: 1)])
        let loads = keys.map { key in Task { await table.join(key, as: Plain.self, work: fetch.work) } }
        #expect(await eventually { table.census == (keys.count, keys.count) })
        fetch.gate.open()
        for load in loads { #expect(Self.items(await load.value) == [Plain(value: 1)]) }
        #expect(fetch.runs == keys.count, "one fetch each")
    }

    @Test func aLoadThatLeavesTakesOnlyItselfAway() async {
        let table = FlightTable()
        let fetch = HeldFetch([Plain(value: 1)])
        let leaving = Task { await table.join(Self.key(), as: Plain.self, work: fetch.work) }
        let staying = Task { await table.join(Self.key(), as: Plain.self, work: fetch.work) }
        #expect(await eventually { table.census == (1, 2) })
        leaving.cancel()
        #expect(Self.isCancelled(await leaving.value), "at once, with the fetch still under way")
        #expect(table.census == (1, 1))
        fetch.gate.open()
        #expect(Self.items(await staying.value) == [Plain(value: 1)])
        #expect(fetch.runs == 1 && fetch.cancelled == 0, "the fetch ran on for the load still waiting")
    }

    @Test func theLastLoadLeavingCancelsTheFetchAndTheNextStartsAfresh() async {
        let table = FlightTable()
        let abandoned = HeldFetch([Plain(value: 1)])
        let only = Task { await table.join(Self.key(), as: Plain.self, work: abandoned.work) }
        #expect(await eventually { table.census == (1, 1) })
        only.cancel()
        #expect(Self.isCancelled(await only.value))
        #expect(table.census == (1, 0), "abandoned; its fetch has not returned yet")

        // A load now takes no part in the abandoned flight (it would get its cancellation).
        let fresh = HeldFetch([Plain(value: 2)])
        let next = Task { await table.join(Self.key(), as: Plain.self, work: fresh.work) }
        #expect(await eventually { fresh.runs == 1 && table.census == (1, 1) })
        fresh.gate.open()
        #expect(Self.items(await next.value) == [Plain(value: 2)])

        abandoned.gate.open()
        #expect(await eventually { abandoned.ended == 1 })
        #expect(abandoned.cancelled == 1, "the abandoned fetch's task was cancelled")
        #expect(abandoned.runs == 1)
        #expect(table.census == (0, 0))
    }

    /// A load that took an abandoned flight from the table just before its fetch returned (its
    /// cancellation) gets `nil` from the flight, so the table starts a new one: it never hands
    /// the abandoned fetch's cancellation to a load nobody cancelled.
    @Test func anAbandonedFlightsEndIsNobodysOutcome() async {
        let flight = Flight<Plain>()
        let fetch = HeldFetch([Plain(value: 1)])
        flight.start(fetch.work)
        let only = Task { await flight.join() }
        #expect(await eventually { flight.waiterCount == 1 })
        only.cancel()
        #expect(await only.value.map(Self.isCancelled) == true)
        fetch.gate.open()
        #expect(await eventually { flight.hasEnded }, "the fetch returned, cancelled")
        #expect(fetch.cancelled == 1)
        let late = await flight.join()
        #expect(late == nil, "a flight abandoned before it ended takes no waiter, and gives none its cancellation")
    }
}
