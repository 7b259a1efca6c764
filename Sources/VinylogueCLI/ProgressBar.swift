import Foundation

/// A one-line progress bar on standard error, drawn only when standard
/// error is a terminal (so logs and pipes stay clean), at most ten times a
/// second.
struct ProgressBar {
    let enabled: Bool
    let width = 30
    private var lastDraw: ContinuousClock.Instant?
    private var drawn = false

    init(enabled: Bool) {
        self.enabled = enabled
    }

    /// Redraws with `fraction` (0...1) done and `text` after the bar.
    mutating func update(_ fraction: Double, _ text: String) {
        guard enabled else { return }
        let now = ContinuousClock.now
        if let lastDraw, now - lastDraw < .milliseconds(100), fraction < 1 { return }
        lastDraw = now
        let clamped = min(1, max(0, fraction.isFinite ? fraction : 0))
        let filled = Int(clamped * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let percent = String(Int(clamped * 100)).leftPadded(3)
        Terminal.standardError.write("\r\u{1B}[2K\(bar) \(percent)%  \(text)")
        drawn = true
    }

    /// Ends the line the bar was drawn on.
    mutating func finish() {
        guard enabled, drawn else { return }
        Terminal.standardError.write("\r\u{1B}[2K")
        drawn = false
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

