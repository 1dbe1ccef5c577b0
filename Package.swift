// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "AppCache",
    platforms: [
        // `Duration` sets the floor.
        .iOS(.v16), .macOS(.v13), .tvOS(.v16), .watchOS(.v9),
    ],
    products: [
        .library(name: "AppCacheKit", targets: ["AppCacheKit"]),
    ],
    targets: [
        .target(name: "AppCacheKit"),
        // The sample model shared by the examples and the tests.
        .target(name: "MenuModel", dependencies: ["AppCacheKit"]),

        .testTarget(
            name: "AppCacheKitTests",
            dependencies: ["AppCacheKit", "MenuModel"],
            exclude: ["Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets {
    var settings = target.swiftSettings ?? []
    settings.append(contentsOf: [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("InternalImportsByDefault"),
    ])
    target.swiftSettings = settings
}
