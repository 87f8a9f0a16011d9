/// Text that comes from another machine (a pad's name, a host's reason, a machine's name in pairing) and reaches
/// terminals, logs and files. One rule for all of it, so that no text is cleaned one way here and another there
/// (docs/protocol.md, section 1):
///
/// - a **control character** is a C0 control (U+0000 ... U+001F), DEL (U+007F), a C1 control (U+0080 ... U+009F:
///   CSI, U+009B, starts a terminal escape as ESC [ does), or a bidirectional control: the embeddings and overrides
///   U+202A ... U+202E, the isolates U+2066 ... U+2069, the marks U+200E, U+200F and U+061C (they reorder what a
///   terminal shows after them: a name could show as another); each becomes a space;
/// - bytes that are not UTF-8 are read as Unicode's recommended practice says: each maximal ill-formed subpart
///   becomes one U+FFFD (Swift's `String(decoding:as:)`), so a text is never refused for its encoding.
public enum LinkText {
    /// Whether `scalar` is a control character in the sense above.
    @inlinable public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// `text` with every control character a space.
    public static func printable(_ text: some StringProtocol) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return String(text) }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { isControl($0) ? " " : $0 }))
    }

    /// Bytes from the network as text (ill-formed UTF-8 as U+FFFD), its control characters spaces.
    public static func printable(decoding bytes: some Collection<UInt8>) -> String {
        printable(String(decoding: bytes, as: UTF8.self))
    }

    /// At most `limit` bytes of `text`'s UTF-8, cut before the first Unicode scalar that does not fit (as
    /// `LinkByteWriter.text` cuts), with `…` after it when something was cut (the ellipsis within the limit).
    public static func shortened(_ text: String, toBytes limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        let ellipsis = "…"
        var kept = ""
        var count = 0
        for scalar in text.unicodeScalars {
            let size = String(scalar).utf8.count
            guard count + size + ellipsis.utf8.count <= limit else { break }
            kept.unicodeScalars.append(scalar)
            count += size
        }
        return kept + ellipsis
    }
}
