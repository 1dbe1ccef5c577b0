public import AppCacheKit
public import Foundation

/// A dish on a hotel restaurant's menu: the model of the book chapter's example app.
public struct MenuItem: CacheableModel, Hashable {
    /// The server's id of the dish.
    public var itemId: String
    /// Where the dish's picture is.
    public var imageURL: URL
    /// The dish's name.
    public var name: String
    /// How hot it is, from 0 (mild) to 5.
    public var spicyLevel: Int
    /// The average guest rating, from 0 to 5.
    public var rating: Double
    /// What the dish is.
    public var itemDescription: String
    /// How long the kitchen takes, in minutes.
    public var waitingTime: Int
    /// How many guests rated it.
    public var reviewCount: Int

    /// Creates a menu item.
    public init(
        itemId: String, imageURL: URL, name: String, spicyLevel: Int, rating: Double,
        itemDescription: String, waitingTime: Int, reviewCount: Int
    ) {
        self.itemId = itemId
        self.imageURL = imageURL
        self.name = name
        self.spicyLevel = spicyLevel
        self.rating = rating
        self.itemDescription = itemDescription
        self.waitingTime = waitingTime
        self.reviewCount = reviewCount
    }

    /// Menu items are cached for ten minutes before they count as stale.
    public static var stalenessThreshold: Duration? { .seconds(600) }
}

extension MenuItem {
    /// A menu of `count` items, the same for the same `count` and `seed`: what the examples'
    /// simulated server returns and what tests and benchmarks cache.
    public static func sampleMenu(count: Int, seed: Int = 0) -> [MenuItem] {
        let dishes = ["Laksa", "Pad Kra Pao", "Rendang", "Mapo Tofu", "Bún Chả", "Dal Makhani", "Pho", "Sambal Udang"]
        return (0..<count).map { index in
            let dish = dishes[(index + seed) % dishes.count]
            return MenuItem(
                itemId: "item-\(seed)-\(index)",
                imageURL: URL(string: "https://images.example.com/menu/\(seed)/\(index).jpg")!,
                name: "\(dish) \(index + 1)",
                spicyLevel: (index * 7 + seed) % 6,
                rating: Double((index * 13 + seed) % 50) / 10,
                itemDescription: "House \(dish.lowercased()) with seasonal vegetables, cooked to order (serves \(index % 4 + 1)).",
                waitingTime: 10 + (index * 3 + seed) % 30,
                reviewCount: (index * 37 + seed) % 1000)
        }
    }
}
