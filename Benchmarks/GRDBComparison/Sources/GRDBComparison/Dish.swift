import AppCacheKit
import Foundation

/// A dish of a menu: the shape of the root package's sample `MenuItem` (which its examples
/// and benchmarks share), redeclared here because this package depends on the library only.
struct Dish: CacheableModel, Equatable {
    var itemId: String
    var imageURL: URL
    var name: String
    var spicyLevel: Int
    var rating: Double
    var itemDescription: String
    var waitingTime: Int
    var ratingCount: Int

    static func menu(count: Int, seed: Int = 0) -> [Dish] {
        (0..<count).map { index in
            Dish(
                itemId: "item-\(seed)-\(index)", imageURL: URL(string: "https://images.example.com/dishes/\(seed)/\(index).jpg")!,
                name: "Dish \(index) of menu \(seed)", spicyLevel: index % 6, rating: Double(index % 50) / 10,
                itemDescription: "A generous plate of the kitchen's dish number \(index), with a long description of what is in it.",
                waitingTime: 5 + index % 40, ratingCount: index * 7)
        }
    }
}
