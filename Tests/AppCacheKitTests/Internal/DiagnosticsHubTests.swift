import Foundation
import Testing

@testable import AppCacheKit

/// What the store finds while the first instance is still opening reaches that instance's
/// diagnostics; later instances hear only what comes after them.
@Suite struct DiagnosticsHubTests {
    static func problem(_ number: Int) -> AppCacheError {
        AppCacheError(code: .corruptArchive, message: "problem \(number)")
    }

    @Test func problemsFoundBeforeTheFirstHookReachIt() {
        let hub = DiagnosticsHub()
        hub.deliver(Self.problem(1))
        hub.deliver(Self.problem(2))
        let first = DiagnosticsRecorder()
        let second = DiagnosticsRecorder()
        let owners = (NSObject(), NSObject())
        hub.add(ObjectIdentifier(owners.0), first.record)
        hub.add(ObjectIdentifier(owners.1), second.record)
        hub.deliver(Self.problem(3))
        #expect(first.errors.map(\.message) == ["problem 1", "problem 2", "problem 3"])
        #expect(second.errors.map(\.message) == ["problem 3"])
        hub.remove(ObjectIdentifier(owners.0))
        hub.deliver(Self.problem(4))
        #expect(first.errors.count == 3 && second.errors.count == 2)
    }

    @Test func anInstanceWithoutAHookEndsTheKeeping() {
        let hub = DiagnosticsHub()
        let owner = NSObject()
        hub.add(ObjectIdentifier(owner), nil)
        for number in 1...100 { hub.deliver(Self.problem(number)) }
        let later = DiagnosticsRecorder()
        hub.add(ObjectIdentifier(NSObject()), later.record)
        #expect(later.errors.isEmpty, "nothing was kept once an instance had opened")
    }
}
