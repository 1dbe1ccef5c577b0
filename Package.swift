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
        .executable(name: "appcache-inspect", targets: ["appcache-inspect"]),
    ],
    targets: [
        .target(name: "AppCacheKit"),
        // The read-only inspector, a tool users run on their own caches.
        .executableTarget(name: "appcache-inspect", dependencies: ["AppCacheKit"]),
        // The sample model shared by the examples and the tests.
        .target(name: "MenuModel", dependencies: ["AppCacheKit"]),

        .executableTarget(
            name: "hotel-menu",
            dependencies: ["AppCacheKit", "MenuModel"],
            path: "Examples/hotel-menu",
            exclude: ["README.md"]
        ),
        .executableTarget(
            name: "switch-user",
            dependencies: ["AppCacheKit", "MenuModel"],
            path: "Examples/switch-user",
            exclude: ["README.md"]
        ),
        .executableTarget(
            name: "spill-to-disk",
            dependencies: ["AppCacheKit", "MenuModel"],
            path: "Examples/spill-to-disk",
            exclude: ["README.md"]
        ),
        .executableTarget(
            name: "schema-bump",
            dependencies: ["AppCacheKit", "MenuModel"],
            path: "Examples/schema-bump",
            exclude: ["README.md"]
        ),

        .executableTarget(
            name: "AppCacheBenchmarks",
            dependencies: ["AppCacheKit", "MenuModel"],
            path: "Benchmarks/AppCacheBenchmarks"
        ),

        .testTarget(
            name: "AppCacheKitTests",
            dependencies: ["AppCacheKit", "MenuModel"],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "ExampleTests",
            // Depending on the executables makes `swift test` build them first.
            dependencies: ["hotel-menu", "switch-user", "schema-bump", "spill-to-disk", "appcache-inspect", "AppCacheKit", "MenuModel"]
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
