public import PadCore

/// Feedback as JSON lines: what `padbridge virtual` prints and `padbridge feedback --stdin` applies.
///
///     {"type":"rumble","strong":0.5,"weak":0.25}
///     {"type":"rumble","strong":0.5,"weak":0.25,"leftTrigger":0.3,"rightTrigger":0}   (trigger motors running)
///     {"type":"lightbar","red":255,"green":0,"blue":64}
///     {"type":"playerLeds","mask":4}
///     {"type":"micLed","on":true}
///     {"type":"trigger","trigger":"right","effect":{"mode":"feedback",...},"raw":"21..."}
///
/// A trigger line's `raw` is the 11-byte DualSense block in hex and is what a reader applies;
/// `effect` is its decoded, human-readable form.
public enum FeedbackLines {
    public static func line(for event: FeedbackEvent) -> String {
        switch event {
        case let .rumble(rumble):
            let grips = #""type":"rumble","strong":\#(JSONNumberFormat.decimal(rumble.strong)),"weak":\#(JSONNumberFormat.decimal(rumble.weak))"#
            guard rumble.hasTriggerRumble else { return "{\(grips)}" }
            return #"{\#(grips),"leftTrigger":\#(JSONNumberFormat.decimal(rumble.leftTrigger)),"rightTrigger":\#(JSONNumberFormat.decimal(rumble.rightTrigger))}"#
        case let .lightbar(color):
            return #"{"type":"lightbar","red":\#(color.red),"green":\#(color.green),"blue":\#(color.blue)}"#
        case let .playerLeds(mask):
            return #"{"type":"playerLeds","mask":\#(mask)}"#
        case let .micLed(on):
            return #"{"type":"micLed","on":\#(on)}"#
        case let .trigger(side, effect):
            return #"{"type":"trigger","trigger":"\#(side.rawValue)","effect":\#(effectObject(effect)),"raw":"\#(effect.block.hex)"}"#
        }
    }

    static func effectObject(_ effect: TriggerEffect) -> String {
        var members = [#""mode":"\#(effect.modeName)""#]
        if let zones = effect.zoneStrengths {
            let values = (0..<10).map { String(zones[$0]) }.joined(separator: ",")
            members.append(#""zones":[\#(values)]"#)
        }
        for (name, value) in effect.parameters {
            members.append(#""\#(name)":\#(value)"#)
        }
        return "{" + members.joined(separator: ",") + "}"
    }

    public static func event(from line: String) throws(JSONLineError) -> FeedbackEvent {
        let fields: Fields = try decodeLine(line)
        switch fields.type {
        case "rumble":
            let strong = try required(fields.strong, "strong", allowed: ["0...1"])
            let weak = try required(fields.weak, "weak", allowed: ["0...1"])
            // The trigger motors are optional: absent is off (the line of a pad without them).
            let left = fields.leftTrigger ?? 0, right = fields.rightTrigger ?? 0
            for (key, value) in [("strong", strong), ("weak", weak), ("leftTrigger", left), ("rightTrigger", right)]
            where !(value.isFinite && (0...1).contains(value)) {
                throw JSONLineError("\"\(key)\" \(JSONNumberFormat.decimal(value)) is out of range: allowed 0...1")
            }
            return .rumble(Rumble(strong: strong, weak: weak, leftTrigger: left, rightTrigger: right))
        case "lightbar":
            return .lightbar(
                LightbarColor(
                    red: try byte(fields.red, "red"), green: try byte(fields.green, "green"),
                    blue: try byte(fields.blue, "blue")))
        case "playerLeds":
            let mask = try required(fields.mask, "mask", allowed: ["0...31"])
            guard (0...31).contains(mask) else { throw JSONLineError("\"mask\" \(mask) is out of range: allowed 0...31") }
            return .playerLeds(mask: UInt8(mask))
        case "micLed":
            return .micLed(on: try required(fields.on, "on", allowed: ["true", "false"]))
        case "trigger":
            let sideName = try required(fields.trigger, "trigger", allowed: ["left", "right"])
            guard let side = TriggerSide(rawValue: sideName) else {
                throw unknown("trigger", sideName, allowed: ["left", "right"])
            }
            let hex = try required(fields.raw, "raw", allowed: ["22 hex digits: the 11-byte effect block"])
            guard let block = TriggerEffectBlock(hex: hex) else {
                throw JSONLineError("\"raw\" must be 22 hex digits (the 11-byte effect block), got \"\(hex)\"")
            }
            return .trigger(side, TriggerEffect(block: block))
        default:
            throw unknown("type", fields.type, allowed: ["rumble", "lightbar", "playerLeds", "micLed", "trigger"])
        }
    }

    private static func byte(_ value: Int?, _ key: String) throws(JSONLineError) -> UInt8 {
        let value = try required(value, key, allowed: ["0...255"])
        guard (0...255).contains(value) else { throw JSONLineError("\"\(key)\" \(value) is out of range: allowed 0...255") }
        return UInt8(value)
    }

    private struct Fields: Decodable {
        var type: String
        var strong: Double?
        var weak: Double?
        var leftTrigger: Double?
        var rightTrigger: Double?
        var red: Int?
        var green: Int?
        var blue: Int?
        var mask: Int?
        var on: Bool?
        var trigger: String?
        var raw: String?
    }
}
