// swift-tools-version: 6.0
import PackageDescription

/// AppCache side by side with SQLite through GRDB, in one process: a package of its own so that
/// the root package stays free of dependencies and of system libraries.
let package = Package(
    name: "GRDBComparison",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [
        .package(name: "AppCache", path: "../.."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "GRDBComparison",
            dependencies: [
                .product(name: "AppCacheKit", package: "AppCache"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
