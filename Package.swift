// swift-tools-version: 6.1
// The 6.1 tools are required by ordo-one/benchmark (see Benchmarks/).
import PackageDescription

let package = Package(
    name: "NearbyFusion",
    platforms: [.macOS(.v13)],
    // MARK: - Public API
    products: [
        .library(name: "NearbyFusion", targets: ["NearbyFusion"]),
        .library(name: "NearbyFusionSimulation", targets: ["NearbyFusionSimulation"]),
        .library(name: "NearbyFusionSession", targets: ["NearbyFusionSession"]),
        .executable(name: "nearby-fusion", targets: ["nearby-fusion"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
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

        // MARK: - Implementation
        .target(
            name: "NearbyFusion",
            dependencies: ["CLAPACK"]
        ),
        .target(
            name: "NearbyFusionSimulation",
            dependencies: ["NearbyFusion"]
        ),
        .target(
            name: "NearbyFusionSession",
            dependencies: ["NearbyFusion", "NearbyFusionSimulation"]
        ),
        .executableTarget(
            name: "nearby-fusion",
            dependencies: [
                "NearbyFusion",
                "NearbyFusionSimulation",
                "CMallocCounter",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // MARK: - Tests
        .testTarget(
            name: "NearbyFusionTests",
            dependencies: ["NearbyFusion", "NearbyFusionSimulation", "NearbyFusionSession"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
