import Foundation
import VinylogueApp

extension Composition {
    /// The person's time zone: `--time-zone`, else `TZ`, else the system's.
    func timeZone(named name: String?) throws -> TimeZone {
        guard let name else { return TimeZone.current }
        guard let zone = TimeZone(identifier: name) else {
            throw CommandFailure("“\(name)” is not a time zone. Use a name such as Europe/Berlin or America/New_York.", exitCode: .usage)
        }
        return zone
    }

    /// Whether `terminal` may show colour: only on a terminal, never with
    /// `NO_COLOR` set, never on `TERM=dumb`.
    func allowsColour(on terminal: Terminal) -> Bool {
        !configuration.noColour && !configuration.dumbTerminal && terminal.isTerminal
    }

    /// A progress bar on standard error, drawn only on a real terminal.
    func progressBar() -> ProgressBar {
        ProgressBar(enabled: isatty(2) == 1 && !configuration.dumbTerminal)
    }
}
