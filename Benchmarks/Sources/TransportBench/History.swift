import Foundation

/// The benchmarks' history: `history/runs.jsonl`, one JSON object a run, oldest first, and the
/// picture drawn from it, `history/ratios.svg`. `make bench` appends its run's row
/// (`TransportBench history append LOG`) and draws the picture again (`history draw`).
///
/// A row holds the run's date, commit and host pace (`host`: the C loop's requests a second),
/// every `RATIO` figure (`ratios`, keyed by scenario and pair, as `c=16 transport/libcurl-c`), every
/// `COUNTS` and `COUNT-RATIOS` figure (`counts`), the other summary lines as they were printed
/// (`lines`: `SERVER`, `MEMORY`, `SCALE` …) and, for the rows written before the file existed, the
/// words of the README's table (`run`, `cells`, `note`).
struct History {
    /// One run, as far as the picture needs it; the file's other members are kept as written.
    struct Run: Codable {
        var date: String?
        var commit: String?
        /// The arguments `run.sh` was given (empty for a whole run).
        var arguments: String?
        var run: String?
        var host: [String: Double]?
        var ratios: [String: Double]?
        var counts: [String: Double]?
        var lines: [String]?
        var note: String?
    }

    let file: URL

    /// The row of a run's output: every summary line it printed, read as `make bench` prints
    /// them.
    static func row(fromOutput output: String, date: String, commit: String, arguments: String) -> Run {
        var run = Run(date: date, commit: commit, arguments: arguments)
        var host: [String: Double] = [:]
        var ratios: [String: Double] = [:]
        var counts: [String: Double] = [:]
        var lines: [String] = []
        for line in output.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            let words = line.split(separator: " ").map(String.init)
            guard let kind = words.first else { continue }
            switch kind {
            case "RATIO", "HOST":
                // `RATIO c=16 transport/libcurl-c=0.84 …`: the words without a figure name the
                // scenario; a figure is a pair (`a/b=…`) or a growth (`…-mib=…`, `…/s=…`).
                let figures = words.dropFirst().filter(isFigure)
                let scenario = words.dropFirst().filter { !isFigure($0) }.joined(separator: " ")
                for figure in figures {
                    guard let (name, value) = split(figure) else { continue }
                    if kind == "HOST" { host[scenario + " " + name] = value } else { ratios[scenario + " " + name] = value }
                }
            case "COUNTS", "COUNT-RATIOS":
                // `COUNTS instructions/request transport=85866 … syscalls/request …`
                var measure = kind == "COUNTS" ? "" : "ratio"
                for word in words.dropFirst() {
                    guard let (name, value) = split(word) else {
                        measure = word
                        continue
                    }
                    counts[measure + " " + name] = value
                }
            case "SERVER":
                // `SERVER c=16 sdk/ahc=1.06 p50-ms …`: the ratio among the ratios, the line as printed.
                if words.count > 2, let (name, value) = split(words[2]), name.contains("/") { ratios["server \(words[1]) \(name)"] = value }
                lines.append(line)
            case "CLIENT-SHARE", "MEMORY", "SCALE", "TIMEOUTS", "DISKCACHE", "CONFIG":
                lines.append(line)
            default:
                continue
            }
        }
        run.host = host.isEmpty ? nil : host
        run.ratios = ratios.isEmpty ? nil : ratios
        run.counts = counts.isEmpty ? nil : counts
        run.lines = lines.isEmpty ? nil : lines
        return run
    }

    private static func isFigure(_ word: String) -> Bool {
        guard let (name, _) = split(word) else { return false }
        return name.contains("/") || name.hasSuffix("-mib")
    }

    private static func split(_ word: String) -> (String, Double)? {
        guard let equals = word.firstIndex(of: "="), let value = Double(word[word.index(after: equals)...]) else { return nil }
        return (String(word[..<equals]), value)
    }

    /// Appends `run` to the file, one line.
    func append(_ run: Run) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var line = try encoder.encode(run)
        line.append(UInt8(ascii: "\n"))
        if !FileManager.default.fileExists(atPath: file.path) {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        }
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: line)
    }

    /// Every run in the file, oldest first; a line that is not a run stops the reading with its
    /// number.
    func runs() throws -> [Run] {
        let text = try String(contentsOf: file, encoding: .utf8)
        let decoder = JSONDecoder()
        return try text.split(separator: "\n").enumerated().map { number, line in
            do {
                return try decoder.decode(Run.self, from: Data(line.utf8))
            } catch {
                throw HistoryError(message: "\(file.path):\(number + 1): not a run: \(error)")
            }
        }
    }

    struct HistoryError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}

extension History {
    /// A series the picture draws: its label, its colour and where each run keeps its figure.
    struct Series: Sendable {
        var label: String
        var color: String
        var value: @Sendable (Run) -> Double?
    }

    /// The ratios to the C loop (upper panel) and the instructions a request (lower panel), one
    /// point a run that has the figure, runs in the file's order along the x axis.
    static let ratioSeries: [Series] = [
        Series(label: "transport c=16", color: "#1f77b4") { $0.ratios?["c=16 transport/libcurl-c"] },
        Series(label: "transport c=64", color: "#6baed6") { $0.ratios?["c=64 transport/libcurl-c"] },
        Series(label: "transport-async c=16", color: "#2ca02c") { $0.ratios?["c=16 transport-async/libcurl-c"] },
        Series(label: "manager c=16", color: "#d62728") { $0.ratios?["c=16 manager/libcurl-c"] },
        Series(label: "manager-async c=16", color: "#ff7f0e") { $0.ratios?["c=16 manager-async/libcurl-c"] },
        Series(label: "transport POST c=16", color: "#9467bd") { $0.ratios?["c=16-post transport/libcurl-c"] },
    ]

    static let countSeries: [Series] = [
        Series(label: "transport", color: "#1f77b4") { $0.counts?["instructions/request transport"] },
        Series(label: "transport-async", color: "#2ca02c") { $0.counts?["instructions/request transport-async"] },
        Series(label: "manager", color: "#d62728") { $0.counts?["instructions/request manager"] },
        Series(label: "manager-async", color: "#ff7f0e") { $0.counts?["instructions/request manager-async"] },
        Series(label: "libcurl-c", color: "#7f7f7f") { $0.counts?["instructions/request libcurl-c"] },
    ]

    /// The picture of `runs` as SVG: two panels sharing the x axis (one slot a run).
    static func picture(of runs: [Run]) -> String {
        let width = 960.0, panel = 260.0, left = 70.0, right = 190.0, top = 30.0, gap = 60.0
        let plotWidth = width - left - right
        let height = top + panel + gap + panel + 50
        let step = runs.count > 1 ? plotWidth / Double(runs.count - 1) : 0
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" font-family="sans-serif" font-size="11">
            <rect width="100%" height="100%" fill="white"/>

            """
        func panelSVG(_ title: String, _ series: [Series], originY: Double, format: (Double) -> String) {
            let values = series.flatMap { s in runs.compactMap(s.value) }
            guard let low = values.min(), let high = values.max() else {
                svg += "<text x=\"\(left)\" y=\"\(originY + 20)\">\(title): no figures yet</text>\n"
                return
            }
            let span = max(high - low, high * 0.05)
            let floor = max(0, low - span * 0.1), ceiling = high + span * 0.1
            func y(_ value: Double) -> Double { originY + panel - (value - floor) / (ceiling - floor) * panel }
            svg += "<text x=\"\(left)\" y=\"\(originY - 8)\" font-size=\"13\">\(title)</text>\n"
            svg += "<rect x=\"\(left)\" y=\"\(originY)\" width=\"\(plotWidth)\" height=\"\(panel)\" fill=\"none\" stroke=\"#999\"/>\n"
            for tick in 0...4 {
                let value = floor + (ceiling - floor) * Double(tick) / 4
                let ty = y(value)
                svg += "<line x1=\"\(left)\" x2=\"\(left + plotWidth)\" y1=\"\(ty)\" y2=\"\(ty)\" stroke=\"#eee\"/>"
                svg += "<text x=\"\(left - 6)\" y=\"\(ty + 4)\" text-anchor=\"end\">\(format(value))</text>\n"
            }
            for (index, s) in series.enumerated() {
                let points = runs.enumerated().compactMap { position, run in s.value(run).map { (left + Double(position) * step, y($0)) } }
                guard !points.isEmpty else { continue }
                let path = points.map { String(format: "%.1f,%.1f", $0.0, $0.1) }.joined(separator: " ")
                svg += "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(s.color)\" stroke-width=\"1.5\"/>"
                for point in points {
                    svg += String(format: "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%@\"/>", point.0, point.1, s.color)
                }
                let legendY = originY + 14 + Double(index) * 16
                svg += "<line x1=\"\(left + plotWidth + 12)\" x2=\"\(left + plotWidth + 30)\" y1=\"\(legendY - 4)\" y2=\"\(legendY - 4)\" stroke=\"\(s.color)\" stroke-width=\"2\"/>"
                svg += "<text x=\"\(left + plotWidth + 36)\" y=\"\(legendY)\">\(s.label)</text>\n"
            }
        }
        panelSVG("Requests a second, × the C libcurl loop (make bench, medians of rounds)", ratioSeries, originY: top) { String(format: "%.2f", $0) }
        panelSVG("Instructions a request (counts.sh, callgrind)", countSeries, originY: top + panel + gap) { String(format: "%.0fk", $0 / 1000) }
        // The x axis: the first and the last run, and each new date in between when there is room.
        let axisY = top + panel + gap + panel + 16
        var lastDate: String?
        var lastX = -100.0
        for (position, run) in runs.enumerated() {
            let x = left + Double(position) * step
            guard let date = run.date, date != lastDate, x - lastX > 70 || position == runs.count - 1 else { continue }
            svg += "<text x=\"\(x)\" y=\"\(axisY)\" text-anchor=\"middle\">\(date.dropFirst(5))</text>"
            lastDate = date
            lastX = x
        }
        svg += "\n<text x=\"\(left)\" y=\"\(axisY + 20)\" fill=\"#555\">runs in history/runs.jsonl, oldest left; a run without a figure leaves no point</text>\n</svg>\n"
        return svg
    }
}
