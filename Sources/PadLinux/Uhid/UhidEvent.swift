import CPadLinux

/// What the kernel tells a uhid device's owner: one `struct uhid_event` read from /dev/uhid, decoded by the byte
/// offsets the C shim exports (the struct is packed, so Swift never relies on an imported layout).
enum UhidEvent: Hashable, Sendable {
    /// The driver started the device; bit 0-2 of `deviceFlags`: numbered feature/output/input reports.
    case start(deviceFlags: UInt64)
    case stop
    /// Someone opened the device (hid-playstation does at probe and keeps it open).
    case open
    case close
    /// An output (or feature/input) report the driver or a hidraw writer sent to the device. Byte 0 is the report ID.
    case output(report: [UInt8], reportType: UInt8)
    /// Must be answered with `UhidRequest.getReportReply(id:)` within 5 s.
    case getReport(id: UInt32, reportNumber: UInt8, reportType: UInt8)
    /// Must be answered with `UhidRequest.setReportReply(id:)` within 5 s.
    case setReport(id: UInt32, reportNumber: UInt8, reportType: UInt8, report: [UInt8])
    /// A type this owner does not act on.
    case other(type: UInt32)

    static var featureReportType: UInt8 { UInt8(UHID_FEATURE_REPORT.rawValue) }
    static var outputReportType: UInt8 { UInt8(UHID_OUTPUT_REPORT.rawValue) }

    /// Decodes one event; nil if `bytes` is too short to hold its type.
    static func decode(_ bytes: UnsafeRawBufferPointer) -> UhidEvent? {
        guard bytes.count >= 4 else { return nil }
        func load<Value: FixedWidthInteger>(_ offset: Int, as _: Value.Type) -> Value? {
            guard offset + MemoryLayout<Value>.size <= bytes.count else { return nil }
            return bytes.loadUnaligned(fromByteOffset: offset, as: Value.self)
        }
        func slice(_ offset: Int, count: Int) -> [UInt8] {
            let end = min(offset + min(count, Int(CPadLinux_UHID_DATA_MAX)), bytes.count)
            return offset < end ? Array(bytes[offset..<end]) : []
        }
        let type = bytes.loadUnaligned(as: UInt32.self)
        switch type {
        case UHID_START.rawValue:
            return .start(deviceFlags: load(Int(CPadLinux_UHID_START_DEV_FLAGS), as: UInt64.self) ?? 0)
        case UHID_STOP.rawValue:
            return .stop
        case UHID_OPEN.rawValue:
            return .open
        case UHID_CLOSE.rawValue:
            return .close
        case UHID_OUTPUT.rawValue:
            guard let size = load(Int(CPadLinux_UHID_OUTPUT_SIZE), as: UInt16.self),
                let reportType = load(Int(CPadLinux_UHID_OUTPUT_RTYPE), as: UInt8.self)
            else { return nil }
            return .output(report: slice(Int(CPadLinux_UHID_OUTPUT_DATA), count: Int(size)), reportType: reportType)
        case UHID_GET_REPORT.rawValue:
            guard let id = load(Int(CPadLinux_UHID_GET_REPORT_ID), as: UInt32.self),
                let number = load(Int(CPadLinux_UHID_GET_REPORT_RNUM), as: UInt8.self),
                let reportType = load(Int(CPadLinux_UHID_GET_REPORT_RTYPE), as: UInt8.self)
            else { return nil }
            return .getReport(id: id, reportNumber: number, reportType: reportType)
        case UHID_SET_REPORT.rawValue:
            guard let id = load(Int(CPadLinux_UHID_SET_REPORT_ID), as: UInt32.self),
                let number = load(Int(CPadLinux_UHID_SET_REPORT_RNUM), as: UInt8.self),
                let reportType = load(Int(CPadLinux_UHID_SET_REPORT_RTYPE), as: UInt8.self),
                let size = load(Int(CPadLinux_UHID_SET_REPORT_SIZE), as: UInt16.self)
            else { return nil }
            return .setReport(
                id: id, reportNumber: number, reportType: reportType,
                report: slice(Int(CPadLinux_UHID_SET_REPORT_DATA), count: Int(size)))
        default:
            return .other(type: type)
        }
    }
}

/// What a uhid device's owner writes to the kernel: complete `struct uhid_event` images, built by offset.
/// Each is as long as its payload needs; the kernel zero-fills the rest of the struct.
enum UhidRequest {
    struct DeviceDescription: Sendable, Hashable {
        var name: String
        var phys: String
        var uniq: String
        var bus: UInt16
        var vendor: UInt32
        var product: UInt32
        var version: UInt32
        var country: UInt32 = 0
        var reportDescriptor: [UInt8]
    }

    /// UHID_CREATE2. Strings are truncated to their fields (127/63/63 bytes, NUL-terminated).
    static func create(_ device: DeviceDescription) -> [UInt8] {
        precondition((1...Int(CPadLinux_UHID_DATA_MAX)).contains(device.reportDescriptor.count))
        var event = header(UHID_CREATE2.rawValue, length: Int(CPadLinux_UHID_CREATE2_RD_DATA) + device.reportDescriptor.count)
        putString(device.name, at: CPadLinux_UHID_CREATE2_NAME, capacity: CPadLinux_UHID_CREATE2_NAME_SIZE, in: &event)
        putString(device.phys, at: CPadLinux_UHID_CREATE2_PHYS, capacity: CPadLinux_UHID_CREATE2_PHYS_SIZE, in: &event)
        putString(device.uniq, at: CPadLinux_UHID_CREATE2_UNIQ, capacity: CPadLinux_UHID_CREATE2_UNIQ_SIZE, in: &event)
        put(UInt16(device.reportDescriptor.count), at: CPadLinux_UHID_CREATE2_RD_SIZE, in: &event)
        put(device.bus, at: CPadLinux_UHID_CREATE2_BUS, in: &event)
        put(device.vendor, at: CPadLinux_UHID_CREATE2_VENDOR, in: &event)
        put(device.product, at: CPadLinux_UHID_CREATE2_PRODUCT, in: &event)
        put(device.version, at: CPadLinux_UHID_CREATE2_VERSION, in: &event)
        put(device.country, at: CPadLinux_UHID_CREATE2_COUNTRY, in: &event)
        event.replaceSubrange(
            Int(CPadLinux_UHID_CREATE2_RD_DATA)..<event.count, with: device.reportDescriptor)
        return event
    }

    static func destroy() -> [UInt8] {
        header(UHID_DESTROY.rawValue, length: 4)
    }

    /// UHID_INPUT2 carrying one input report (byte 0 = report ID).
    static func input(_ report: UnsafeRawBufferPointer) -> [UInt8] {
        let count = min(report.count, Int(CPadLinux_UHID_DATA_MAX))
        var event = header(UHID_INPUT2.rawValue, length: Int(CPadLinux_UHID_INPUT2_DATA) + count)
        put(UInt16(count), at: CPadLinux_UHID_INPUT2_SIZE, in: &event)
        for index in 0..<count { event[Int(CPadLinux_UHID_INPUT2_DATA) + index] = report[index] }
        return event
    }

    /// UHID_GET_REPORT_REPLY: `report` (byte 0 = report ID) with `error` 0, or an errno value and no data.
    static func getReportReply(id: UInt32, error: UInt16, report: [UInt8]) -> [UInt8] {
        let count = min(report.count, Int(CPadLinux_UHID_DATA_MAX))
        var event = header(UHID_GET_REPORT_REPLY.rawValue, length: Int(CPadLinux_UHID_GET_REPORT_REPLY_DATA) + count)
        put(id, at: CPadLinux_UHID_GET_REPORT_REPLY_ID, in: &event)
        put(error, at: CPadLinux_UHID_GET_REPORT_REPLY_ERR, in: &event)
        put(UInt16(count), at: CPadLinux_UHID_GET_REPORT_REPLY_SIZE, in: &event)
        event.replaceSubrange(Int(CPadLinux_UHID_GET_REPORT_REPLY_DATA)..<event.count, with: report.prefix(count))
        return event
    }

    static func setReportReply(id: UInt32, error: UInt16) -> [UInt8] {
        var event = header(UHID_SET_REPORT_REPLY.rawValue, length: Int(CPadLinux_UHID_SET_REPORT_REPLY_ERR) + 2)
        put(id, at: CPadLinux_UHID_SET_REPORT_REPLY_ID, in: &event)
        put(error, at: CPadLinux_UHID_SET_REPORT_REPLY_ERR, in: &event)
        return event
    }

    private static func header(_ type: UInt32, length: Int) -> [UInt8] {
        var event = [UInt8](repeating: 0, count: length)
        put(type, at: 0, in: &event)
        return event
    }

    /// Native byte order, as the kernel reads the struct.
    private static func put<Value: FixedWidthInteger>(_ value: Value, at offset: Int, in event: inout [UInt8]) {
        withUnsafeBytes(of: value) { bytes in
            for (index, byte) in bytes.enumerated() { event[offset + index] = byte }
        }
    }

    private static func putString(_ text: String, at offset: Int, capacity: Int, in event: inout [UInt8]) {
        for (index, byte) in text.utf8.prefix(capacity - 1).enumerated() { event[offset + index] = byte }
    }
}
