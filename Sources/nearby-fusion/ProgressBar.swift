import Foundation

/// A progress bar on standard error, drawn only when standard error is a terminal
/// (silent when redirected, so logs and pipes stay clean).
final class ProgressBar {
    private let total: Int
    private let enabled: Bool
    /// What is counted, shown as `done/total` after the percentage (`nil` for bytes).
    private let items: String?
    private var lastDraw = Date.distantPast
    private var drawn = false

    /// - Parameters:
    ///   - total: the size of the work, in bytes.
    ///   - minimumTotal: below this size no bar is drawn (small files finish at once).
    ///   - items: for work counted in items (recordings, runs): their name, shown with the count.
    init(total: Int, minimumTotal: Int = 1 << 20, items: String? = nil, forceEnabled: Bool = false) {
        self.total = max(total, 1)
        self.items = items
        enabled = forceEnabled || (isatty(STDERR_FILENO) == 1 && total >= minimumTotal)
    }

    func update(_ done: Int) {
        guard enabled, Date().timeIntervalSince(lastDraw) >= 0.1 else { return }
        lastDraw = Date()
        draw(done)
    }

    private func draw(_ done: Int) {
        let fraction = min(max(Double(done) / Double(total), 0), 1)
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let count = items.map { " \(min(done, total))/\(total) \($0)" } ?? ""
        FileHandle.standardError.write(Data("\r\(bar) \(Int(fraction * 100))%\(count)".utf8))
        drawn = true
    }

    func finish() {
        guard enabled else { return }
        draw(total)
        if drawn { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
