// libFuzzer entry point for PadCore's decoders. Built by scripts/fuzz into one module together with
// Sources/PadCore/**/*.swift (so no `import PadCore`). Besides "never traps", it checks the decode laws the unit
// tests state, so libFuzzer reports a logic bug as a crash:
//   * every decoder returns or throws ReportDecodingError;
//   * what decodes re-encodes to bytes that decode to the same value (DualSense input: battery error states excepted,
//     as documented; DualSense output: an empty Feedback excepted, it encodes to the rumble-stop report);
//   * TriggerEffect(block: b).block == b;
//   * the command-line parser returns or throws TriggerEffectError;
//   * the trust files' parsers (identity, paired hosts, paired clients) return or throw TextLineError, and what they
//     read writes back to lines that read the same; a typed pairing code reads back from its printed form;
//   * the forwarding link's decoders (snapshot, client message, host message) return or throw LinkDecodingError,
//     and what decodes encodes to bytes that decode to the same value;
//   * a DNS-SD announcement's TXT records (the bytes split at each 0 byte into records) give a record or throw
//     HostAnnouncementError, and a record's own TXT strings read back the same; its service name decodes or throws
//     AnnouncedServiceNameError, and a decoded name has no control or format (Cf) characters (announcements are
//     unauthenticated); a name made publishable has none either.

@_cdecl("LLVMFuzzerTestOneInput")
public func padCoreFuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size)
    checkDecoders(bytes)
    // Random bytes almost never carry a valid CRC: also try the first 78 bytes re-sealed with each seed, so the
    // Bluetooth paths behind the CRC check are fuzzed too.
    if bytes.count >= 78 {
        var sealed = Array(bytes[0..<78])
        for seed in [PlayStationCRC32.inputSeed, PlayStationCRC32.outputSeed] {
            sealed.withUnsafeMutableBytes { PlayStationCRC32.seal($0, seed: seed) }
            sealed.withUnsafeBytes { checkDecoders($0) }
        }
    }
    return 0
}

func checkDecoders(_ bytes: UnsafeRawBufferPointer) {
    if let snapshot = try? DualSenseInputReport.decode(bytes) {
        for transport in HIDTransport.allCases {
            var again = try? DualSenseInputReport.decode(DualSenseInputReport.encoded(snapshot, transport: transport))
            if snapshot.battery.percent == 0 { again?.battery = snapshot.battery }
            precondition(again == snapshot, "DualSenseInputReport round trip (\(transport))")
        }
    }
    if let snapshot = try? DualShock4InputReport.decode(bytes) {
        for transport in HIDTransport.allCases {
            let again = try? DualShock4InputReport.decode(DualShock4InputReport.encoded(snapshot, transport: transport))
            precondition(again == snapshot, "DualShock4InputReport round trip (\(transport))")
        }
    }
    if let feedback = try? DualSenseOutputReport.decode(bytes), !feedback.isEmpty {
        for layout in DualSenseOutputLayout.allCases {
            let again = try? DualSenseOutputReport.decode(DualSenseOutputReport.encoded(feedback, layout: layout))
            precondition(again == feedback, "DualSenseOutputReport round trip (\(layout))")
        }
    }
    if let feedback = try? DualShock4OutputReport.decode(bytes) {
        for transport in HIDTransport.allCases {
            let again = try? DualShock4OutputReport.decode(DualShock4OutputReport.encoded(feedback, transport: transport))
            precondition(again == feedback, "DualShock4OutputReport round trip (\(transport))")
        }
    }

    _ = PlayStationCRC32.isValid(bytes, seed: PlayStationCRC32.inputSeed)
    let block = TriggerEffectBlock(unsafe: bytes)
    precondition(TriggerEffect(block: block).block == block, "TriggerEffect block round trip")

    let text = String(decoding: bytes, as: UTF8.self)
    _ = TriggerEffectBlock(hex: text)
    if let effect = try? TriggerEffect(commandLine: text) {
        precondition(TriggerEffect(block: effect.block) == effect, "command-line effect round trip")
    }

    checkTrustFiles(text)
    checkLinkMessages(bytes)
    checkRecording(text)
    checkAnnouncement(bytes)
    checkDSURequest(bytes)  // Tests/Fuzz/DSURequestFuzzer.swift
}

func checkAnnouncement(_ bytes: UnsafeRawBufferPointer) {
    let entries = bytes.split(separator: 0, omittingEmptySubsequences: false).map { Array($0) }
    do {
        let record = try HostAnnouncementRecord(txt: entries)
        precondition((try? HostAnnouncementRecord(txt: record.txtEntries)) == record, "announcement TXT round trip")
    } catch {
        _ = error.description
    }
    precondition(
        !AnnouncedServiceName.publishable(String(decoding: bytes, as: UTF8.self)).unicodeScalars.contains {
            AnnouncedServiceName.isFormat($0) || AnnouncedServiceName.isControl($0)
        }, "a published name has no control or format characters")
    do {
        let name = try AnnouncedServiceName.decode(Array(bytes))
        precondition(!name.unicodeScalars.contains { AnnouncedServiceName.isControl($0) }, "a shown name has no control characters")
        precondition(!name.unicodeScalars.contains { AnnouncedServiceName.isFormat($0) }, "a shown name has no format characters")
        precondition(AnnouncedServiceName.publishable(name).utf8.count <= AnnouncedServiceName.maximumBytes, "publishable length")
    } catch {
        _ = error.description
    }
}

func checkRecording(_ text: String) {
    guard let recording = try? PadRecordingFormat.recording(from: text) else { return }
    let again = try? PadRecordingFormat.recording(from: PadRecordingFormat.text(of: recording))
    precondition(again == recording, "recording round trip")
}

func checkLinkMessages(_ bytes: UnsafeRawBufferPointer) {
    if let snapshot = try? LinkSnapshotCodec.decode(bytes) {
        // Non-canonical bytes (a clamped trigger, a part present but at rest) encode differently, to the same value.
        precondition((try? LinkSnapshotCodec.decode(LinkSnapshotCodec.encode(snapshot))) == snapshot, "link snapshot round trip")
    }
    if let message = try? LinkClientMessage(decoding: bytes) {
        precondition((try? LinkClientMessage(decoding: message.encoded)) == message, "client message round trip")
    }
    if let message = try? LinkHostMessage(decoding: bytes) {
        precondition((try? LinkHostMessage(decoding: message.encoded)) == message, "host message round trip")
    }
}

func checkTrustFiles(_ text: String) {
    if let hosts = try? TrustFileFormat.pairedHosts(from: text) {
        let again = try? TrustFileFormat.pairedHosts(from: hosts.map(TrustFileFormat.line).joined(separator: "\n"))
        precondition(again?.map(\.key) == hosts.map(\.key), "paired-hosts round trip")
    }
    if let clients = try? TrustFileFormat.pairedClients(from: text) {
        let again = try? TrustFileFormat.pairedClients(from: clients.map(TrustFileFormat.line).joined(separator: "\n"))
        precondition(again?.map(\.key) == clients.map(\.key), "paired-clients round trip")
    }
    if let key = try? TrustFileFormat.privateKey(fromIdentity: text) {
        precondition(key.count == 32, "identity key length")
    }
    if let code = PairingCode(typed: text) {
        precondition(PairingCode(typed: code.description) == code, "pairing code round trip")
    }
}
