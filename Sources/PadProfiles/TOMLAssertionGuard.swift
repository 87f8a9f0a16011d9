/// Inputs that the toml++ parser inside TOMLKit 0.6.0 does not reject but only asserts against (an abort in a
/// debug build, undefined behaviour in a release one): a value position holding a closing bracket or a comma
/// (`a = ]`, `[0.5, }0.3]`, `{ x = , }`). Found by `RemapProfileFileRobustnessTests`. Such text is refused as a
/// syntax error before TOMLKit sees it; everything else is left to TOMLKit.
enum TOMLAssertionGuard {
    /// The 1-based line of the first such value position, or nil.
    static func firstUnparseableLine(in text: String) -> Int? {
        var line = 1
        var previous: Character?  // the last significant character outside strings and comments
        var inComment = false
        var quote: Character?
        var escaped = false
        for character in text {
            if character == "\n" {
                line += 1
                inComment = false
                continue
            }
            if inComment { continue }
            if let open = quote {
                if escaped {
                    escaped = false
                } else if character == "\\" && open == "\"" {
                    escaped = true
                } else if character == open {
                    quote = nil
                    previous = open
                }
                continue
            }
            switch character {
            case " ", "\t", "\r":
                continue
            case "\"", "'":
                quote = character
            case "}":
                if let previous, "[,=".contains(previous) { return line }
            case "]", ",":
                if previous == "=" { return line }
            case "#":
                if previous == "=" { return line }
                inComment = true
                continue
            default:
                break
            }
            previous = character
        }
        return nil
    }
}
