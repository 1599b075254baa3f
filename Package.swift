// swift-tools-version: 6.1
// The 6.1 tools are required by ordo-one/benchmark (see Benchmarks/).
//
// Layers, each depending only on those above it (see README "Layout"):
//
//   NearbyFusion                  the pure core: maths, measurements, estimator, convergence,
//                                 outputs, engine. No file, thread, clock or global.
//   NearbyFusionRecording         the edge: the recording format and replay.
//   NearbyFusionSimulation        the seeded simulator (writes recordings).
//   NearbyFusionEvaluation        scoring against truth: recordings, scenarios, targets,
//                                 the bound, the exact posterior, the fleet, the report.
//   NearbyFusionSession           the NISession-shaped API and its data sources.
//   ARKit                         a stand-in for the ARKit types camera assistance checks
//                                 (Linux and macOS have no ARKit), for setARSession(_:).
//   NearbyFusionSimulatedSources  simulated sources for sessions (only for those who ask).
//   nearby-fusion                 the command.
//   nearby-fusion-fuzz            libFuzzer targets (.ci/fuzz) / a corpus replayer.
//   NearbyFusionTestSupport       LAPACK reference for tests and benchmarks.
//   TestHelpers                   paths, commands and scratch files the test targets share.
import PackageDescription

let package = Package(
    name: "NearbyFusion",
    platforms: [.macOS(.v13)],
    // MARK: - Public API
    products: [
        .library(name: "NearbyFusion", targets: ["NearbyFusion"]),
        .library(name: "NearbyFusionRecording", targets: ["NearbyFusionRecording"]),
        .library(name: "NearbyFusionSimulation", targets: ["NearbyFusionSimulation"]),
        .library(name: "NearbyFusionEvaluation", targets: ["NearbyFusionEvaluation"]),
        .library(name: "NearbyFusionSession", targets: ["NearbyFusionSession"]),
        .library(name: "ARKit", targets: ["ARKit"]),
        .library(name: "NearbyFusionSimulatedSources", targets: ["NearbyFusionSimulatedSources"]),
        .library(name: "NearbyFusionTestSupport", targets: ["NearbyFusionTestSupport"]),
        .executable(name: "nearby-fusion", targets: ["nearby-fusion"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // `swift package generate-documentation` (DocC catalogues of the library targets).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // MARK: - System libraries
        /// LAPACK (reference or OpenBLAS, through Debian's `liblapack.so` alternative).
        .systemLibrary(
            name: "CLAPACK",
            path: "Sources/CLAPACK",
            providers: [.apt(["liblapack-dev", "libopenblas-dev"])]
        ),

        /// Counts the process's heap allocations for `nearby-fusion bench` (glibc Linux).
        .target(name: "CMallocCounter", path: "Sources/CMallocCounter"),

        // MARK: - Core
        .target(name: "NearbyFusion"),

        // MARK: - Edge
        .target(name: "NearbyFusionRecording", dependencies: ["NearbyFusion"]),
        .target(name: "NearbyFusionSimulation", dependencies: ["NearbyFusion", "NearbyFusionRecording"]),
        /// Scoring against truth: recordings, simulated scenarios and their targets, the
        /// Cramér–Rao bound, the exact posterior, the fleet's pool, the report's model and page.
        .target(
            name: "NearbyFusionEvaluation",
            dependencies: ["NearbyFusion", "NearbyFusionRecording", "NearbyFusionSimulation"]
        ),
        /// ARKit's configuration and session types as far as Nearby Interaction reads them, so
        /// that an app's `import ARKit` and `setARSession(_:)` build where Apple ships no ARKit.
        .target(name: "ARKit"),
        .target(name: "NearbyFusionSession", dependencies: ["NearbyFusion", "NearbyFusionRecording", "ARKit"]),
        .target(
            name: "NearbyFusionSimulatedSources",
            dependencies: ["NearbyFusion", "NearbyFusionSession", "NearbyFusionSimulation"]
        ),
        .executableTarget(
            name: "nearby-fusion",
            dependencies: [
                "NearbyFusion",
                "NearbyFusionRecording",
                "NearbyFusionSimulation",
                "NearbyFusionEvaluation",
                "CMallocCounter",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        /// The fuzz targets (`.ci/fuzz`): libFuzzer when built with `-sanitize=fuzzer,address
        /// -DFUZZING`, a corpus replayer otherwise.
        .target(name: "CLibFuzzer", path: "Sources/CLibFuzzer"),
        .executableTarget(
            name: "nearby-fusion-fuzz",
            dependencies: [
                "NearbyFusion", "NearbyFusionRecording", "NearbyFusionSession", "NearbyFusionSimulation",
                "NearbyFusionEvaluation", "CLibFuzzer",
            ]
        ),

        // MARK: - Tests
        /// LAPACK's `dsyev`, the reference the core's closed-form eigen-decomposition is
        /// tested and benchmarked against. Only tests and benchmarks link LAPACK.
        .target(name: "NearbyFusionTestSupport", dependencies: ["NearbyFusion", "CLAPACK"]),
        /// An app written exactly as for Apple's Nearby Interaction (only the import differs;
        /// the harness sets `NISession.defaultDataSource`), run on a recording and a peer link.
        .testTarget(
            name: "AppleStyleAppTests",
            dependencies: ["NearbyFusion", "NearbyFusionSession", "NearbyFusionSimulatedSources", "NearbyFusionSimulation", "ARKit",
                           "TestHelpers"]
        ),
        /// What the test targets share: the package's paths, running the built commands, a
        /// scratch folder. Not a product.
        .target(name: "TestHelpers", dependencies: ["NearbyFusionRecording"], path: "Tests/TestHelpers"),
        // The tests, by the module whose behaviour they check (the estimator's through the
        // simulator, the command's end to end).
        .testTarget(
            name: "NearbyFusionCoreTests",
            dependencies: [
                "NearbyFusion", "NearbyFusionRecording", "NearbyFusionSimulation", "NearbyFusionEvaluation",
                "NearbyFusionTestSupport", "TestHelpers",
            ]
        ),
        .testTarget(
            name: "NearbyFusionRecordingTests",
            dependencies: ["NearbyFusion", "NearbyFusionRecording", "NearbyFusionSimulation", "TestHelpers"]
        ),
        .testTarget(
            name: "NearbyFusionSimulationTests",
            dependencies: ["NearbyFusion", "NearbyFusionRecording", "NearbyFusionSimulation", "NearbyFusionEvaluation", "TestHelpers"]
        ),
        .testTarget(
            name: "NearbyFusionEvaluationTests",
            dependencies: ["NearbyFusion", "NearbyFusionRecording", "NearbyFusionSimulation", "NearbyFusionEvaluation", "TestHelpers"]
        ),
        .testTarget(
            name: "NearbyFusionSessionTests",
            dependencies: [
                "NearbyFusion", "NearbyFusionRecording", "NearbyFusionSimulation", "NearbyFusionEvaluation", "NearbyFusionSession",
                "NearbyFusionSimulatedSources", "TestHelpers",
            ]
        ),
        .testTarget(
            name: "NearbyFusionCommandTests",
            dependencies: ["NearbyFusion", "NearbyFusionRecording", "NearbyFusionSimulation", "NearbyFusionEvaluation", "TestHelpers"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
