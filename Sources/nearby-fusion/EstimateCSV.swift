import NearbyFusion
import NearbyFusionRecording

/// The estimate stream as CSV: one row per published update (and per session-level
/// change, with an empty `object`). Missing outputs are empty cells; `world_transform_0`…`15`
/// are the 16 column-major elements; `reasons` are separated by `|`; `guidance_direction` and
/// `guidance_distance` (metres) the guidance, empty when there is none.
enum EstimateCSV {
    static let header = (["t", "object", "distance", "direction_x", "direction_y", "direction_z", "horizontal_angle",
                          "vertical_direction_estimate"] + (0..<16).map { "world_transform_\($0)" } + ["status", "reasons", "guidance_direction", "guidance_distance"])
        .joined(separator: ",")

    static func cell(_ d: Double?) -> String { d.map(JSONLines.number) ?? "" }

    static func row(_ line: EstimateStreamLine) -> String {
        switch line {
        case .session(let s):
            return ([JSONLines.number(s.timestamp), ""] + Array(repeating: "", count: 22)
                    + [s.convergence.status.name, s.convergence.status.reasons.names.joined(separator: "|"), "", ""]).joined(separator: ",")
        case .object(let e):
            var cells = [JSONLines.number(e.timestamp), csvEscaped(e.objectID), cell(e.distance),
                         cell(e.direction?.x), cell(e.direction?.y), cell(e.direction?.z), cell(e.horizontalAngle),
                         e.verticalDirectionEstimate?.rawValue ?? ""]
            cells += e.worldTransform.map { $0.columnMajor.map(JSONLines.number) } ?? Array(repeating: "", count: 16)
            cells += [e.convergence?.status.name ?? "", e.convergence?.status.reasons.names.joined(separator: "|") ?? ""]
            cells += [e.guidance?.direction.rawValue ?? "", cell(e.guidance?.distanceMetres)]
            return cells.joined(separator: ",")
        }
    }

    /// RFC 4180 quoting for an identifier containing a comma, quote or newline.
    static func csvEscaped(_ s: String) -> String {
        guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) else { return s }
        return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
