/// The object's vertical position relative to the device (as
/// `NINearbyObject.VerticalDirectionEstimate`), from its height difference
/// `Δy = y_object − y_device` (world +Y) and the level tolerance `τ` (default 2 m):
/// `same` when `|Δy| ≤ τ`, `above`/`below` when outside it with the sign established
/// (≥ 95 % probability), `aboveOrBelow` when outside it with the sign not established,
/// `unknown` when not yet estimable.
public enum VerticalDirectionEstimate: String, Sendable, Hashable, CaseIterable {
    case unknown, same, above, below, aboveOrBelow
}
