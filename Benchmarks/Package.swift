// swift-tools-version: 6.1
// Benchmarks for NearbyFusion, a package of their own so that the library's `swift test`
// never builds the benchmark framework. Run from this folder:
//   swift package benchmark
import PackageDescription

let package = Package(
    name: "NearbyFusionBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "NearbyFusion", path: ".."),
        // The retain/release and object-allocation metrics crash on this toolchain; only the
        // malloc interposer is enabled.
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        /// The tracked-object fixture both executables below step through, and the C reference
        /// step on the same updates.
        .target(
            name: "BenchmarkFixtures",
            dependencies: [
                "CReferenceEKF",
                .product(name: "NearbyFusion", package: "NearbyFusion"),
                .product(name: "NearbyFusionSimulation", package: "NearbyFusion"),
            ],
            path: "Benchmarks/BenchmarkFixtures"
        ),
        /// The hand-written C EKF step the engine's per-update cost is compared with.
        .target(name: "CReferenceEKF", path: "Benchmarks/CReferenceEKF"),
        .executableTarget(
            name: "FusionBenchmarks",
            dependencies: [
                "BenchmarkFixtures",
                "CReferenceEKF",
                .product(name: "NearbyFusion", package: "NearbyFusion"),
                .product(name: "NearbyFusionRecording", package: "NearbyFusion"),
                .product(name: "NearbyFusionSimulation", package: "NearbyFusion"),
                .product(name: "NearbyFusionTestSupport", package: "NearbyFusion"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/FusionBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        /// Steady-state engine updates in a loop, counted by `instructions.sh` under callgrind
        /// (instructions do not vary with the machine's load, unlike the times above).
        .executableTarget(
            name: "SteadyStateUpdates",
            dependencies: ["BenchmarkFixtures"],
            path: "Tools/SteadyStateUpdates"
        ),
    ]
)
