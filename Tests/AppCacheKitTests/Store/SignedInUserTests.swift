import Foundation
import Testing

@testable import AppCacheKit

/// An extension's cache follows the user the app signed in (`followsSignedInUser`).
@Suite struct SignedInUserTests {
    func widgetConfiguration(_ fixture: Fixture) -> AppCache.Configuration {
        var configuration = fixture.configuration(user: nil, memory: .layer(writeBackDelay: nil))
        configuration.followsSignedInUser = true
        return configuration
    }

    @Test func aWidgetOpensWithTheAppsUserAndFollowsItsSwitches() async throws {
        let fixture = try Fixture()
        let app = try fixture.openCache(user: nil)  // write-through
        try app.switchUser(to: "alice")  // the sign-in, recorded for extensions
        try app.cacheItems([Plain(value: 1)], forKey: "feed")
        app.store.waitForBackgroundWork()

        let widget = try AppCache(configuration: widgetConfiguration(fixture))
        #expect(widget.user == "alice")
        #expect(try widget.getCachedItems(Plain.self, forKey: "feed") == [Plain(value: 1)])

        let follower = StreamRecorder(widget.updates(Plain.self, forKey: "feed"))
        defer { follower.stop() }
        #expect(await eventually { follower.last == .some([Plain(value: 1)]) })

        try app.switchUser(to: "bob")
        try app.cacheItems([Plain(value: 2)], forKey: "feed")
        #expect(await eventually { widget.user == "bob" }, "the app's switch reaches the widget without polling")
        #expect(await eventually { follower.last == .some([Plain(value: 2)]) }, "and its streams show bob's items")

        try app.signOut(removingData: true)
        #expect(await eventually { widget.user == nil })
        #expect(await eventually { follower.last == .some(nil) })
    }

    /// A refresh the widget began for alice lands in alice's space after the app switched to
    /// bob, never in bob's.
    @Test func aWriteBoundToThePreviousUserStaysTheirs() async throws {
        let fixture = try Fixture()
        let app = try fixture.openCache(user: nil)
        try app.switchUser(to: "alice")
        app.store.waitForBackgroundWork()
        let widget = try AppCache(configuration: widgetConfiguration(fixture))
        let session = widget.session
        #expect(session.user == "alice")
        try app.switchUser(to: "bob")
        #expect(await eventually { widget.user == "bob" })
        #expect(try widget.cacheItems([Plain(value: 9)], forKey: "feed", for: session))
        #expect(try widget.getCachedItems(Plain.self, forKey: "feed") == nil, "bob does not see alice's refresh")
        #expect(fixture.hasArchive(Plain.self, key: "feed", user: "alice"))
    }

    @Test func aDamagedRecordIsIgnored() throws {
        let fixture = try Fixture()
        _ = try fixture.openCache(user: nil)
        let path = fixture.layout().absolutePath(SignedInUserRecord.path)
        for garbage in [Data(), Data([0xFF, 0xFE]), Data("x".utf8), Data("u".utf8) + Data([0xC3]), Data(repeating: 0x75, count: 70_000)] {
            try garbage.write(to: URL(filePath: path))
            let widget = try AppCache(configuration: widgetConfiguration(fixture))
            #expect(widget.user == nil, "the configuration's user when the record cannot be read")
        }
    }

    @Test func theRecordRoundTrips() {
        for user in [nil, "alice", "ünï/cødé", String(repeating: "x", count: 1000)] as [String?] {
            #expect(SignedInUserRecord.decode(SignedInUserRecord.encode(user)) == .some(user))
        }
    }
}
