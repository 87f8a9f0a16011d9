/// Where each key of a TOML text is written, by dotted key path: TOMLKit reports lines for syntax errors only,
/// so error messages find the line of a setting here.
///
/// A light reading of the text, enough for profile files: table headers (`[a.b]`, `[[a.b]]`), `key = value`
/// lines with bare, quoted and dotted keys, one level of inline tables (`x = { period_ms = 80 }`), comments and
/// values spread over several lines (multi-line arrays). Each key path keeps the first line it appears on; a
/// header also stands for the tables above it.
struct TOMLKeyLines {
    private var lineOfKeyPath: [String: Int] = [:]
    /// The first table header whose key does not start with a bare-key character or a quote (`[}toggle]`).
    /// The toml++ inside TOMLKit 0.6.0 only asserts this (an abort in debug builds, undefined behaviour in release
    /// ones), so the file is refused before TOMLKit sees it.
    private(set) var malformedHeaderLine: Int?

    init(text: String) {
        var header: [String] = []
        var openBrackets = 0
        var number = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            let line = String(Self.withoutComment(rawLine).trimmingWhitespace)
            if openBrackets > 0 {
                openBrackets += Self.bracketBalance(line)
                continue
            }
            if line.isEmpty { continue }
            if line.hasPrefix("[") {
                var inner = Substring(line).dropFirst()
                if inner.first == "[" { inner = inner.dropFirst() }
                let keyStart = inner.first { $0 != " " && $0 != "\t" }
                if malformedHeaderLine == nil, !(keyStart.map(Self.canStartKey) ?? false) {
                    malformedHeaderLine = number
                }
                while inner.last == "]" { inner = inner.dropLast() }
                header = Self.keyParts(inner)
                record(header, line: number, from: 1)
                continue
            }
            guard let equals = Self.firstIndexOutsideQuotes(of: "=", in: Substring(line)) else { continue }
            let key = header + Self.keyParts(line[..<equals])
            record(key, line: number, from: header.count + 1)
            let value = line[line.index(after: equals)...]
            openBrackets = max(0, Self.bracketBalance(value))
            recordInlineTable(value, under: key, line: number)
        }
    }

    /// The line of `keyPath`, or of the nearest table or key above it that the text names.
    func line(for keyPath: String) -> Int? {
        var parts = keyPath.split(separator: ".").map(String.init)
        while !parts.isEmpty {
            if let line = lineOfKeyPath[parts.joined(separator: ".")] { return line }
            parts.removeLast()
        }
        return nil
    }

    private mutating func record(_ parts: [String], line: Int, from first: Int) {
        guard !parts.isEmpty else { return }
        for count in max(1, first)...parts.count {
            let path = parts.prefix(count).joined(separator: ".")
            if lineOfKeyPath[path] == nil { lineOfKeyPath[path] = line }
        }
    }

    private mutating func recordInlineTable(_ value: Substring, under key: [String], line: Int) {
        let value = value.trimmingWhitespace
        guard value.hasPrefix("{") else { return }
        var body = Substring(value).dropFirst()
        if body.last == "}" { body = body.dropLast() }
        for entry in Self.splitOutsideQuotesAndBrackets(body, on: ",") {
            guard let equals = Self.firstIndexOutsideQuotes(of: "=", in: entry) else { continue }
            let inner = key + Self.keyParts(entry[..<equals])
            record(inner, line: line, from: key.count + 1)
            recordInlineTable(entry[entry.index(after: equals)...], under: inner, line: line)
        }
    }

    /// A bare-key character (A-Z a-z 0-9 _ -) or a quote.
    static func canStartKey(_ character: Character) -> Bool {
        guard let ascii = character.asciiValue else { return false }
        return (ascii >= 0x30 && ascii <= 0x39) || (ascii >= 0x41 && ascii <= 0x5A) || (ascii >= 0x61 && ascii <= 0x7A)
            || character == "_" || character == "-" || character == "\"" || character == "'"
    }

    /// `a."leftx+".b` -> ["a", "leftx+", "b"].
    static func keyParts(_ key: Substring) -> [String] {
        splitOutsideQuotesAndBrackets(key, on: ".").map { part in
            var text = part.trimmingWhitespace
            if text.count >= 2, let first = text.first, first == "\"" || first == "'", text.last == first {
                text = text.dropFirst().dropLast()
            }
            return String(text)
        }
    }

    static func withoutComment(_ line: Substring) -> Substring {
        firstIndexOutsideQuotes(of: "#", in: line).map { line[..<$0] } ?? line
    }

    static func firstIndexOutsideQuotes(of character: Character, in text: Substring) -> Substring.Index? {
        var quote: Character?
        var escaped = false
        for index in text.indices {
            let c = text[index]
            if let open = quote {
                if escaped { escaped = false } else if c == "\\" && open == "\"" { escaped = true } else if c == open { quote = nil }
            } else if c == "\"" || c == "'" {
                quote = c
            } else if c == character {
                return index
            }
        }
        return nil
    }

    /// Opening minus closing `[` `{` brackets outside strings.
    static func bracketBalance(_ text: some StringProtocol) -> Int {
        var balance = 0
        var quote: Character?
        for c in text {
            if let open = quote {
                if c == open { quote = nil }
            } else if c == "\"" || c == "'" {
                quote = c
            } else if c == "[" || c == "{" {
                balance += 1
            } else if c == "]" || c == "}" {
                balance -= 1
            }
        }
        return balance
    }

    static func splitOutsideQuotesAndBrackets(_ text: Substring, on separator: Character) -> [Substring] {
        var parts: [Substring] = []
        var start = text.startIndex
        var depth = 0
        var quote: Character?
        for index in text.indices {
            let c = text[index]
            if let open = quote {
                if c == open { quote = nil }
            } else if c == "\"" || c == "'" {
                quote = c
            } else if c == "[" || c == "{" {
                depth += 1
            } else if c == "]" || c == "}" {
                depth -= 1
            } else if c == separator, depth == 0 {
                parts.append(text[start..<index])
                start = text.index(after: index)
            }
        }
        parts.append(text[start...])
        return parts
    }
}
