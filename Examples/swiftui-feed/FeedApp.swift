#if canImport(SwiftUI, _version: 5.0)
import AppCacheKit
import Foundation
import SwiftUI

/// The app: one feed, its cache opened once at launch.
@main
struct FeedApp: App {
    /// The model layer, shared by every screen (an app keeps one cache for its life).
    static let feed: Feed = {
        let root = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask)[0].appending(path: "swiftui-feed")
        do {
            return try Feed(root: root, server: StoryServer())
        } catch {
            fatalError("The cache cannot be opened: \(error)")
        }
    }()

    var body: some Scene {
        WindowGroup {
            NavigationStack {
                FeedView(feed: Self.feed)
            }
        }
    }
}
#endif
