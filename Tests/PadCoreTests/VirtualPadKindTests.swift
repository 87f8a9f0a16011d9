import PadCore
import Testing

@Suite struct VirtualPadKindTests {
    @Test(arguments: [
        (ControllerKind.dualSense, VirtualPadKind.dualSense), (.dualSenseEdge, .dualSenseEdge),
        (.dualShock4, .dualShock4), (.xbox360, .xbox360), (.xboxOne, .xboxOne), (.switchPro, .switchPro),
        (.generic, .xbox360),
    ])
    func theDefaultVirtualPadIsTheSameKindWhereOneCanBeBuilt(physical: ControllerKind, expected: VirtualPadKind) {
        #expect(VirtualPadKind.defaultKind(for: physical) == expected)
    }

    @Test func capabilitiesFollowTheKind() {
        #expect(VirtualPadKind.xbox360.capabilities == .xbox360)
        #expect(VirtualPadKind.dualSense.capabilities == .dualSense)
        #expect(!VirtualPadKind.xbox360.capabilities.touchpad && VirtualPadKind.dualSense.capabilities.touchpad)
        #expect(VirtualPadKind.dualSenseEdge.capabilities.buttons.contains(.paddle1))
        #expect(!VirtualPadKind.dualSense.capabilities.buttons.contains(.paddle1))
        #expect(VirtualPadKind.xboxOne.capabilities.buttons.contains(.misc1))
        #expect(!VirtualPadKind.xboxOne.capabilities.motion && VirtualPadKind.dualShock4.capabilities.motion)
        #expect(!VirtualPadKind.dualShock4.capabilities.buttons.contains(.misc1))
    }

    @Test func theCommandLineSpellingsStay() {
        #expect(VirtualPadKind.allCases.map(\.rawValue) == [
            "xbox360", "dualsense", "dualsense-edge", "dualshock4", "xbox-one", "switch-pro", "steam-deck",
        ])
        // They are the names `list` prints for the physical kinds.
        for kind in VirtualPadKind.allCases {
            #expect(ControllerKind.allCases.contains { $0.name == kind.rawValue }, "\(kind)")
        }
    }

    @Test func theLocalIdentitySeedDerivesFromThePadID() {
        let pad = Fingerprint(rawValue: "adc312c6744a")
        #expect(VirtualPadIdentitySeed.local(forPad: pad) == "padbridge-remap-adc312c6744a")
        #expect(DualSenseIdentity(seed: VirtualPadIdentitySeed.local(forPad: pad)).uniq
            == DualSenseIdentity(seed: "padbridge-remap-adc312c6744a").uniq)
    }
}

@Suite struct FeedbackNodeChoiceTests {
    static func controller(kind: ControllerKind, hidraw: String?, rumble: Bool, bus: ControllerBus = .usb) -> Controller {
        var capabilities = Capabilities()
        capabilities.rumble = rumble
        return Controller(
            fingerprint: Fingerprint(rawValue: "000000000001"), name: "pad", kind: kind, bus: bus, vendorID: 1,
            productID: 2, version: 0, serial: nil, portPath: nil, capabilities: capabilities,
            nodes: ControllerNodes(
                evdev: [EvdevNode(path: "/dev/input/event7", role: .pad, inputSyspath: "/sys/i7"),
                    EvdevNode(path: "/dev/input/event8", role: .motion, inputSyspath: "/sys/i8"),],
                hidraw: hidraw),
            groupSyspath: "/sys/x", driver: nil)
    }

    @Test func aPlayStationPadTakesFeedbackThroughItsHidrawNode() {
        #expect(Self.controller(kind: .dualSense, hidraw: "/dev/hidraw3", rumble: true).feedbackNodePath == "/dev/hidraw3")
        #expect(Self.controller(kind: .dualShock4, hidraw: "/dev/hidraw1", rumble: true).feedbackNodePath == "/dev/hidraw1")
    }

    /// Its rumble report reaches the trigger motors; xpad's USB pads have no hidraw node, and their force feedback
    /// is what there is.
    @Test func anXboxPadOnBluetoothTakesFeedbackThroughItsHidrawNode() {
        let bluetooth = Self.controller(kind: .xboxOne, hidraw: "/dev/hidraw4", rumble: true, bus: .bluetooth)
        #expect(bluetooth.feedbackNodePath == "/dev/hidraw4")
        #expect(Self.controller(kind: .xboxOne, hidraw: "/dev/hidraw4", rumble: true).feedbackNodePath == "/dev/input/event7")
    }

    @Test func otherwiseThePadNodeWhenItRumbles() {
        #expect(Self.controller(kind: .xbox360, hidraw: "/dev/hidraw2", rumble: true).feedbackNodePath == "/dev/input/event7")
        #expect(Self.controller(kind: .dualSense, hidraw: nil, rumble: true).feedbackNodePath == "/dev/input/event7")
    }

    @Test func aPadWithoutRumbleOrHidrawTakesNone() {
        #expect(Self.controller(kind: .generic, hidraw: nil, rumble: false).feedbackNodePath == nil)
    }
}
