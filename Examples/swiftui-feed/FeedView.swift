#if canImport(SwiftUI, _version: 5.0)
import AppCacheKit
import SwiftUI

/// The feed: cached stories at once, refreshed when stale, pulled to refresh, paged at the
/// bottom, liked through the outbox.
struct FeedView: View {
    let feed: Feed
    @CachedItems<Story> var stories: [Story]

    init(feed: Feed) {
        self.feed = feed
        _stories = CachedItems(
            Story.self, forKey: Feed.key, in: feed.cache, animation: .default, maxCount: Feed.maxCount,
            nextPage: feed.nextPage, fetch: feed.firstPage)
    }

    var body: some View {
        List {
            ForEach(stories) { story in
                NavigationLink(value: story.id) {
                    StoryRow(story: story) { _ = try? feed.like(story, !story.isLiked) }
                }
            }
            if $stories.hasNextPage {
                ProgressView()
                    .frame(maxWidth: .infinity)
                    .task { try? await $stories.loadNextPage() }
            }
        }
        .overlay {
            if stories.isEmpty && $stories.isLoading { ProgressView() }
        }
        .refreshable { await $stories.refresh() }
        .navigationTitle("Top stories")
        .navigationDestination(for: Story.ID.self) { id in
            StoryDetailView(feed: feed, id: id)
        }
        .safeAreaInset(edge: .bottom) {
            if let error = $stories.refreshError {
                Text("Showing saved stories: \(error.localizedDescription)")
                    .font(.footnote)
                    .padding(8)
            } else if $stories.hasPendingMutations {
                Text("Likes are waiting for the network").font(.footnote).padding(8)
            }
        }
    }
}

/// One story in the list, with its like button.
struct StoryRow: View {
    let story: Story
    let toggleLike: () -> Void

    var body: some View {
        HStack {
            VStack(alignment: .leading) {
                Text(story.title).font(.headline)
                Text(story.author).font(.subheadline).foregroundColor(.secondary)
            }
            Spacer()
            Button(action: toggleLike) {
                Label("\(story.likes)", systemImage: story.isLiked ? "heart.fill" : "heart")
            }
            .buttonStyle(.borderless)
        }
    }
}
#endif
