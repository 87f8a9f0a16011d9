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
        case (0x28de, 0x1205): self = .steamDeck
        default: self = .generic
        }
    }

    /// The kind of a pad that the kernel's xpad driver has bound, whatever its ids: xpad drives only pads that speak
    /// an Xbox protocol (those of its id table, and any vendor-class 255/93/1 or 255/71/208 interface of a vendor in
    /// it), so a third-party pad such as the Logitech F310 (046d:c21d) has an Xbox pad's buttons and axes.
    /// `interfaceClass` is udev's `INTERFACE` property of the USB interface ("255/71/208", class/subclass/protocol
    /// in decimal): 255/71/208 is the Xbox One's protocol (GIP); every other interface xpad takes (255/93/1 wired
    /// Xbox 360, 255/93/129 its wireless receiver, 88/66/0 the original Xbox) reads as an Xbox 360 pad.
    /// nil when `driver` is not xpad.
    public init?(usbInterfaceDriver driver: String?, interfaceClass: String?) {
        guard driver == "xpad" else { return nil }
        self = interfaceClass == "255/71/208" ? .xboxOne : .xbox360
    }

    /// The Sony pads whose feedback padbridge writes over hidraw.
    public var isPlayStation: Bool { self == .dualSense || self == .dualSenseEdge || self == .dualShock4 }
}
