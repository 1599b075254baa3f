#if canImport(simd)
@_exported import simd
#else
/// `simd_float3` where the `simd` module does not exist (Linux): Swift's own `SIMD3<Float>`,
/// which is what `simd_float3` is on Apple platforms too (`x`, `y`, `z`, arithmetic).
public typealias simd_float3 = SIMD3<Float>
/// `simd_float4`: Swift's `SIMD4<Float>`, as on Apple platforms.
public typealias simd_float4 = SIMD4<Float>

/// A 4×4 single-precision matrix stored as four columns, with the members Apple's
/// `simd_float4x4` has and Nearby Interaction code uses: `columns`, `init(columns:)`,
/// `init(_:_:_:_:)`, `init(diagonal:)`, `subscript(column)` and `matrix_identity_float4x4`.
/// A `worldTransform`'s translation is `columns.3` (x, y, z, 1).
public struct simd_float4x4: Sendable, Hashable {
    /// The four columns (the fourth holds the translation).
    public var columns: (simd_float4, simd_float4, simd_float4, simd_float4)

    /// The matrix with these columns.
    public init(columns: (simd_float4, simd_float4, simd_float4, simd_float4)) { self.columns = columns }
    /// The matrix with columns `c0`…`c3`.
    public init(_ c0: simd_float4, _ c1: simd_float4, _ c2: simd_float4, _ c3: simd_float4) { columns = (c0, c1, c2, c3) }
    /// The diagonal matrix `diag(d)`.
    public init(diagonal d: simd_float4) {
        columns = (simd_float4(d.x, 0, 0, 0), simd_float4(0, d.y, 0, 0), simd_float4(0, 0, d.z, 0), simd_float4(0, 0, 0, d.w))
    }
    /// The zero matrix.
    public init() { self.init(diagonal: simd_float4(repeating: 0)) }

    /// Column `index` (0…3).
    public subscript(column: Int) -> simd_float4 {
        get {
            switch column {
            case 0: return columns.0
            case 1: return columns.1
            case 2: return columns.2
            case 3: return columns.3
            default: preconditionFailure("simd_float4x4 has columns 0…3, not \(column)")
            }
        }
        set {
            switch column {
            case 0: columns.0 = newValue
            case 1: columns.1 = newValue
            case 2: columns.2 = newValue
            case 3: columns.3 = newValue
            default: preconditionFailure("simd_float4x4 has columns 0…3, not \(column)")
            }
        }
    }

    /// Equal when every column is.
    public static func == (a: simd_float4x4, b: simd_float4x4) -> Bool {
        a.columns.0 == b.columns.0 && a.columns.1 == b.columns.1 && a.columns.2 == b.columns.2 && a.columns.3 == b.columns.3
    }

    /// Hashes the columns.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(columns.0); hasher.combine(columns.1); hasher.combine(columns.2); hasher.combine(columns.3)
    }
}

/// The 4×4 identity, as Apple's `matrix_identity_float4x4`.
public let matrix_identity_float4x4 = simd_float4x4(diagonal: simd_float4(repeating: 1))
#endif

import NearbyFusion

extension simd_float3 {
    /// The engine's double-precision vector as `simd_float3`.
    init(_ v: Vector3) { self.init(Float(v.x), Float(v.y), Float(v.z)) }
}

extension simd_float4x4 {
    /// A world transform (rotation and translation, metres, world frame) as `simd_float4x4`.
    init(_ transform: WorldTransform) {
        let r = transform.rotation, t = transform.translation
        self.init(simd_float4(Float(r.m00), Float(r.m10), Float(r.m20), 0),
                  simd_float4(Float(r.m01), Float(r.m11), Float(r.m21), 0),
                  simd_float4(Float(r.m02), Float(r.m12), Float(r.m22), 0),
                  simd_float4(Float(t.x), Float(t.y), Float(t.z), 1))
    }
}
