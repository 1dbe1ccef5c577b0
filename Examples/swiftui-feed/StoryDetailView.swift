#if canImport(SwiftUI, _version: 5.0)
import AppCacheKit
import SwiftUI

/// One story: read from the feed's collection, so a like shows here and in the list at once.
struct StoryDetailView: View {
    let feed: Feed
    let id: Story.ID
    /// The list's collection, in a state of its own: `.cacheFirst`, so what the list cached
    /// shows at once (from memory) and nothing is fetched again.
    @CachedItems<Story> var stories: [Story]

    init(feed: Feed, id: Story.ID) {
        self.feed = feed
        self.id = id
        _stories = CachedItems(Story.self, forKey: Feed.key, in: feed.cache, policy: .cacheFirst, fetch: feed.firstPage)
    }

    var body: some View {
        if let story = stories.first(where: { $0.id == id }) {
            VStack(alignment: .leading, spacing: 12) {
                Text(story.title).font(.largeTitle)
                Text("by \(story.author)")
                Button(story.isLiked ? "Unlike (\(story.likes))" : "Like (\(story.likes))") {
                    _ = try? feed.like(story, !story.isLiked)
                }
                Spacer()
            }
            .padding()
            .navigationTitle(story.title)
        } else {
            ProgressView()
        }
    }
}
#endif
