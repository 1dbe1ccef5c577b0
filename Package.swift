// swift-tools-version: 6.0
import PackageDescription

/// The example programs, one folder each under Examples/, each with a README. swiftui-feed is a
/// SwiftUI app where SwiftUI exists (its views are `#if canImport(SwiftUI)`) and a headless run
/// of its model layer elsewhere (Linux), which ExampleTests runs.
let examples = ["hotel-menu", "news-feed", "switch-user", "schema-bump", "spill-to-disk", "swiftui-feed"]

/// Set by `Scripts/sanitize --quick` (what CI runs): its sanitizer builds compile the library,
/// the sample models and the library's own test target, which hold every suite the quick runs
/// pick; the tools, the benchmarks, the examples and the test targets that run them are left
/// out, about a fifth of what each sanitizer build would otherwise compile.
let libraryTestsOnly = Context.environment["APPCACHE_LIBRARY_TESTS_ONLY"] != nil

/// Set by `Scripts/sanitize --quick` too: the files of the library's test target (paths under
/// Tests/AppCacheKitTests, comma-separated) that hold the suites its sanitizer runs. The target
/// then compiles those and its helpers (Support/) only: each sanitizer's quick run is every
/// test those files hold.
let quickTestSources = Context.environment["APPCACHE_TEST_SOURCES"].map { $0.split(separator: ",").map(String.init) }

let package = Package(
    name: "AppCache",
    platforms: [
        // `Duration` sets the floor.
        .iOS(.v16), .macOS(.v13), .tvOS(.v16), .watchOS(.v9),
    ],
    products: [
        .library(name: "AppCacheKit", targets: ["AppCacheKit"]),
        .executable(name: "appcache-inspect", targets: ["appcache-inspect"]),
        .executable(name: "appcache-torture", targets: ["appcache-torture"]),
        // A product too, so that the comparison package under Benchmarks/ (and CI through it)
        // builds the benchmark program on the same release build of the library as its own.
        .executable(name: "AppCacheBenchmarks", targets: ["AppCacheBenchmarks"]),
    ],
    targets: [
        .target(name: "AppCacheKit", dependencies: ["AppCacheAtomics"]),
        // C11 atomics for the words the lock file shares between processes (not a package
        // dependency: four inline functions, see its header).
        .target(name: "AppCacheAtomics"),
        // The read-only inspector, a tool users run on their own caches.
        .executableTarget(name: "appcache-inspect", dependencies: ["AppCacheKit"]),
        // Kills, starves and feeds garbage to the cache: `swift run -c release appcache-torture`.
        .executableTarget(name: "appcache-torture", dependencies: ["AppCacheKit", "MenuModel"]),
        // The sample models shared by the examples, the tests, the benchmarks and the torture
        // program, with their sample data (and a payload fuzzer).
        .target(name: "MenuModel", dependencies: ["AppCacheKit"]),

        .executableTarget(
            name: "AppCacheBenchmarks",
            dependencies: ["AppCacheKit", "MenuModel"],
            path: "Benchmarks/AppCacheBenchmarks"
        ),

        // Helpers both test targets use: temporary directories, waiting on a condition,
        // recording a stream.
        .target(name: "AppCacheTestSupport", path: "Tests/AppCacheTestSupport"),
        .testTarget(
            name: "AppCacheKitTests",
            dependencies: ["AppCacheKit", "MenuModel", "AppCacheTestSupport"],
            exclude: ["Disk/Fixtures"]
        ),
        // An app's tests of its own screens: the public API and the testing kit, nothing else.
        .testTarget(name: "AppStyleTests", dependencies: ["AppCacheKit"]),
        .testTarget(
            name: "ExampleTests",
            // Depending on the executables makes `swift test` build them first.
            dependencies: ["appcache-inspect", "appcache-torture", "AppCacheKit", "MenuModel", "AppCacheTestSupport"] + examples.map { .target(name: $0) }
        ),
    ] + examples.map { name in
        .executableTarget(
            name: name,
            dependencies: ["AppCacheKit", "MenuModel"],
            path: "Examples/\(name)",
            exclude: ["README.md"]
        )
    },
    swiftLanguageModes: [.v6]
)

if libraryTestsOnly {
    let kept: Set<String> = ["AppCacheKit", "AppCacheAtomics", "MenuModel", "AppCacheTestSupport", "AppCacheKitTests"]
    package.targets.removeAll { !kept.contains($0.name) }
    package.products.removeAll { $0.name != "AppCacheKit" }
    if let quickTestSources, let tests = package.targets.first(where: { $0.name == "AppCacheKitTests" }) {
        tests.sources = ["Support"] + quickTestSources
    }
}

for target in package.targets where target.name != "AppCacheAtomics" {
    var settings = target.swiftSettings ?? []
    settings.append(contentsOf: [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("InternalImportsByDefault"),
    ])
    target.swiftSettings = settings
}
