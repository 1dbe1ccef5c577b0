import AppCacheKit
import Foundation

/// Liking a story, offline or not: shown at once in every cached list holding the story (the
/// feed, its detail screen), kept on disk until the server has it, sent by the outbox.
struct LikeStory: ItemMutation {
    static let mutationName = "like-story"
    var storyID: Story.ID
    var isLiked: Bool
    var itemIDs: [Story.ID] { [storyID] }

    func apply(to story: inout Story) {
        guard story.isLiked != isLiked else { return }
        story.isLiked = isLiked
        story.likes += isLiked ? 1 : -1
    }
}
