extension ControllerKind {
    /// The kind of a pad from its USB/Bluetooth vendor and product ids (the ids of the kernel's `hid-ids.h`,
    /// `xpad.c` and SDL's `controller_type.c`); any other pad is `.generic`.
    public init(vendorID: UInt16, productID: UInt16) {
        switch (vendorID, productID) {
        case (0x054c, 0x0ce6): self = .dualSense
        case (0x054c, 0x0df2): self = .dualSenseEdge
        // DualShock 4 v1, v2, and the USB wireless adapter.
        case (0x054c, 0x05c4), (0x054c, 0x09cc), (0x054c, 0x0ba0): self = .dualShock4
        // Xbox 360 wired (two revisions) and the two Xbox 360 wireless receivers.
        case (0x045e, 0x028e), (0x045e, 0x028f), (0x045e, 0x0291), (0x045e, 0x0719): self = .xbox360
        // Xbox One, One (2015 firmware), Elite, One S (USB and Bluetooth), Elite 2 (USB and Bluetooth),
        // Series X|S (USB and Bluetooth), One S and Elite 2 with later Bluetooth firmware.
        case (0x045e, 0x02d1), (0x045e, 0x02dd), (0x045e, 0x02e3), (0x045e, 0x02ea), (0x045e, 0x02fd),
            (0x045e, 0x0b00), (0x045e, 0x0b05), (0x045e, 0x0b12), (0x045e, 0x0b13), (0x045e, 0x0b20),
            (0x045e, 0x0b22):
            self = .xboxOne
        case (0x057e, 0x2009): self = .switchPro
        default: self = .generic
        }
    }

    /// The Sony pads whose feedback padbridge writes over hidraw.
    public var isPlayStation: Bool { self == .dualSense || self == .dualSenseEdge || self == .dualShock4 }
}
