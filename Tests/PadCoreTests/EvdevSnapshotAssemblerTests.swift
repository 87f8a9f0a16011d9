@testable import PadCore
import PadTestSupport
import Testing

/// Kernel codes used below (input-event-codes.h), spelled out so the tests do not share the code under test's names.
private let EV_SYN: UInt16 = 0, EV_KEY: UInt16 = 1, EV_ABS: UInt16 = 3, EV_MSC: UInt16 = 4
private let SYN_REPORT: UInt16 = 0, SYN_DROPPED: UInt16 = 3
private let BTN_LEFT: UInt16 = 0x110, BTN_SOUTH: UInt16 = 0x130, BTN_NORTH: UInt16 = 0x133, BTN_TL2: UInt16 = 0x138
private let ABS_X: UInt16 = 0, ABS_Y: UInt16 = 1, ABS_Z: UInt16 = 2, ABS_RX: UInt16 = 3, ABS_RY: UInt16 = 4, ABS_RZ: UInt16 = 5
private let ABS_HAT0X: UInt16 = 0x10, ABS_HAT0Y: UInt16 = 0x11
private let ABS_MT_SLOT: UInt16 = 0x2f, ABS_MT_POSITION_X: UInt16 = 0x35, ABS_MT_POSITION_Y: UInt16 = 0x36
private let ABS_MT_TRACKING_ID: UInt16 = 0x39, MSC_TIMESTAMP: UInt16 = 5

private func key(_ code: UInt16, _ value: Int32) -> EvdevEvent { EvdevEvent(type: EV_KEY, code: code, value: value) }
private func abs(_ code: UInt16, _ value: Int32) -> EvdevEvent { EvdevEvent(type: EV_ABS, code: code, value: value) }
private let report = EvdevEvent(type: EV_SYN, code: SYN_REPORT, value: 0)
private let dropped = EvdevEvent(type: EV_SYN, code: SYN_DROPPED, value: 0)

/// A layout like hid-playstation's pad node, written out by hand.
private let layout = EvdevLayout(
    keys: [BTN_SOUTH: .button(.a), BTN_NORTH: .button(.y), BTN_TL2: .trigger(.lefttrigger)],
    absolutes: [
        ABS_X: .axis(.leftx, inverted: false), ABS_Y: .axis(.lefty, inverted: true),
        ABS_RZ: .axis(.righttrigger, inverted: false),
        ABS_HAT0X: .buttons(negative: .dpleft, positive: .dpright),
        ABS_HAT0Y: .buttons(negative: .dpup, positive: .dpdown),
        ABS_RX: .buttonBeyondHalf(.back, positiveSide: true),
    ])

private let info: [EvdevNodeRole: [UInt16: EvdevAbsoluteInfo]] = [
    .pad: [
        ABS_X: EvdevAbsoluteInfo(minimum: 0, maximum: 255), ABS_Y: EvdevAbsoluteInfo(minimum: 0, maximum: 255),
        ABS_RZ: EvdevAbsoluteInfo(minimum: 0, maximum: 255), ABS_RX: EvdevAbsoluteInfo(minimum: -100, maximum: 100),
        ABS_HAT0X: EvdevAbsoluteInfo(minimum: -1, maximum: 1), ABS_HAT0Y: EvdevAbsoluteInfo(minimum: -1, maximum: 1),
    ],
    .touchpad: [
        ABS_MT_POSITION_X: EvdevAbsoluteInfo(minimum: 0, maximum: 1919),
        ABS_MT_POSITION_Y: EvdevAbsoluteInfo(minimum: 0, maximum: 1079),
    ],
    .motion: [
        ABS_X: EvdevAbsoluteInfo(minimum: -32768, maximum: 32767, resolution: 8192),
        ABS_Z: EvdevAbsoluteInfo(minimum: -32768, maximum: 32767, resolution: 8192),
        ABS_RX: EvdevAbsoluteInfo(minimum: -32768, maximum: 32767, resolution: 1024),
    ],
]

@Suite struct EvdevSnapshotAssemblerTests {
    @Test func aFrameLandsOnlyWithItsSynReport() {
        var assembler = EvdevSnapshotAssembler(layout: layout, absoluteInfo: info)
        #expect(assembler.apply(key(BTN_SOUTH, 1), from: .pad) == .pending)
        #expect(assembler.apply(abs(ABS_RZ, 255), from: .pad) == .pending)
        #expect(assembler.snapshot == .neutral)
        #expect(assembler.apply(report, from: .pad) == .frameCompleted(resynced: false))
        #expect(assembler.snapshot[.a])
        #expect(assembler.snapshot.rightTrigger == 32767)
    }

    @Test func anotherNodesSynReportDoesNotCommitAHalfFrame() {
        var assembler = EvdevSnapshotAssembler(layout: layout, absoluteInfo: info)
        assembler.apply(key(BTN_NORTH, 1), from: .pad)
        assembler.apply(abs(ABS_MT_TRACKING_ID, 3), from: .touchpad)
        assembler.apply(report, from: .touchpad)
        #expect(assembler.snapshot.touches[0].active)
        #expect(!assembler.snapshot[.y], "the pad node's frame has not ended")
        assembler.apply(report, from: .pad)
        #expect(assembler.snapshot[.y])
        #expect(assembler.snapshot.touches[0].active, "the pad node's frame keeps the touchpad's fields")
    }

    @Test(arguments: [
        (Int32(0), Int16.min), (255, Int16.max), (128, 0), (127, -256), (192, 16512), (-5, Int16.min),
        (300, Int16.max),
    ] as [(Int32, Int16)])
    func sticksScaleOntoTheFullRange(raw: Int32, expected: Int16) {
        var assembler = EvdevSnapshotAssembler(layout: layout, absoluteInfo: info)
        assembler.apply(abs(ABS_X, raw), from: .pad)
        assembler.apply(report, from: .pad)
        #expect(assembler.snapshot.leftX == expected)
    }

    @Test(arguments: [(Int32(0), Int16.max), (255, Int16.min), (128, 0)] as [(Int32, Int16)])
    func anInvertedAxisFlips(raw: Int32, expected: Int16) {
        var assembler = EvdevSnapshotAssembler(layout: layout, absoluteInfo: info)
        assembler.apply(abs(ABS_Y, raw), from: .pad)
        assembler.apply(report, from: .pad)
        #expect(assembler.snapshot.leftY == expected)
    }

    @Test func aFullRangeStickIsTakenAsIs() {
        let full = EvdevAbsoluteInfo(minimum: -32768, maximum: 32767)
        for value in [-32768, -1, 0, 1, 12345, 32767] as [Int32] {
            #expect(EvdevSnapshotAssembler.scale(value, from: full, onto: .leftx, inverted: false) == Int16(value))
        }
    }

    @Test func hatsAndDigitalTriggersAndHalfAxesDriveTheirTargets() {
        var assembler = EvdevSnapshotAssembler(layout: layout, absoluteInfo: info)
        for event in [abs(ABS_HAT0X, -1), abs(ABS_HAT0Y, 1), key(BTN_TL2, 1), abs(ABS_RX, 80), report] {
            assembler.apply(event, from: .pad)
        }
        #expect(assembler.snapshot.buttons == ButtonSet([.dpleft, .dpdown, .back]))
        #expect(assembler.snapshot.leftTrigger == 32767)
        for event in [abs(ABS_HAT0X, 1), abs(ABS_HAT0Y, 0), key(BTN_TL2, 0), abs(ABS_RX, 20), report] {
            assembler.apply(event, from: .pad)
        }
        #expect(assembler.snapshot.buttons == ButtonSet([.dpright]))
        #expect(assembler.snapshot.leftTrigger == 0)
    }

    /// SDL's `righttrigger:+a2`: the centre of the source axis is a released trigger, its top a full one.
    @Test(arguments: [(Int32(0), Int16(0)), (-20000, 0), (32767, 32767), (16384, 16384)] as [(Int32, Int16)])
    func halfAnAxisDrivesAWholeTrigger(raw: Int32, expected: Int16) {
        let halfLayout = EvdevLayout(
            keys: [:], absolutes: [ABS_Z: .halfAxis(.righttrigger, positiveSide: true, inverted: false)])
        var assembler = EvdevSnapshotAssembler(
            layout: halfLayout, absoluteInfo: [.pad: [ABS_Z: EvdevAbsoluteInfo(minimum: -32768, maximum: 32767)]])
        assembler.apply(abs(ABS_Z, raw), from: .pad)
        assembler.apply(report, from: .pad)
        #expect(Swift.abs(Int(assembler.snapshot.rightTrigger) - Int(expected)) <= 1)
    }

    @Test func touchSlotsBecomeContactsNormalisedByTheirRange() {
        var assembler = EvdevSnapshotAssembler(layout: layout, absoluteInfo: info)
        let frame = [
            abs(ABS_MT_SLOT, 1), abs(ABS_MT_TRACKING_ID, 42), abs(ABS_MT_POSITION_X, 1919),
            abs(ABS_MT_POSITION_Y, 540), key(BTN_LEFT, 1), report,
        ]
        for event in frame { assembler.apply(event, from: .touchpad) }
        #expect(!assembler.snapshot.touches[0].active)
        #expect(assembler.snapshot.touches[1] == TouchContact(trackingID: 42, active: true, x: 1, y: 540.0 / 1079))
        #expect(assembler.snapshot[.touchpad], "hid-playstation reports the click as BTN_LEFT on the touchpad node")
        for event in [abs(ABS_MT_SLOT, 1), abs(ABS_MT_TRACKING_ID, -1), key(BTN_LEFT, 0), report] {
            assembler.apply(event, from: .touchpad)
        }
        #expect(!assembler.snapshot.touches[1].active)
        #expect(!assembler.snapshot[.touchpad])
    }

    @Test func motionIsScaledByResolution() {
        var assembler = EvdevSnapshotAssembler(layout: layout, absoluteInfo: info)
        let frame = [
            abs(ABS_X, 8192), abs(ABS_Z, -4096), abs(ABS_RX, 1024 * 90),
            EvdevEvent(type: EV_MSC, code: MSC_TIMESTAMP, value: -1), report,
        ]
        for event in frame { assembler.apply(event, from: .motion) }
        let motion = assembler.snapshot.motion
        #expect(Swift.abs(motion.accelMetersPerSecondSquared.x - 9.80665) < 1e-9)
        #expect(Swift.abs(motion.accelMetersPerSecondSquared.z + 9.80665 / 2) < 1e-9)
        #expect(Swift.abs(motion.gyroRadiansPerSecond.x - Double.pi / 2) < 1e-9)
        #expect(motion.timestampMicroseconds == UInt64(UInt32.max), "the timestamp is the kernel's u32 counter")
        #expect(!assembler.snapshot[.a], "the motion node's ABS_X is not the pad's stick")
        #expect(assembler.snapshot.leftX == 0)
    }

    /// hid-nintendo's motion node points x toward the triggers, y to the left and z up out of the face (its
    /// comment in hid-nintendo.c); the model's axes are x right, y up, z toward the player.
    @Test func nintendoMotionAxesLandOnTheModelsAxes() {
        let nintendo = EvdevLayout(keys: [:], absolutes: [:], motionAxes: .nintendo)
        let imu: [EvdevNodeRole: [UInt16: EvdevAbsoluteInfo]] = [
            .motion: Dictionary(uniqueKeysWithValues: (ABS_X...ABS_RZ).map { code in
                (code, EvdevAbsoluteInfo(minimum: -32767, maximum: 32767, resolution: code < ABS_RX ? 4096 : 14247))
            })
        ]
        var assembler = EvdevSnapshotAssembler(layout: nintendo, absoluteInfo: imu)
        // Lying flat, turning left at 90 °/s (positive about its up axis), tipped forward: gravity on z, a little
        // toward the triggers on x; rotation about z, and some about x (its roll) and y (its pitch, to the left).
        let frame = [
            abs(ABS_X, 1024), abs(ABS_Y, 2048), abs(ABS_Z, 4096),
            abs(ABS_RX, 14247 * 10), abs(ABS_RY, 14247 * 20), abs(ABS_RZ, 14247 * 90), report,
        ]
        for event in frame { assembler.apply(event, from: .motion) }
        let motion = assembler.snapshot.motion
        let g = 9.80665, degree = Double.pi / 180
        #expect(Swift.abs(motion.accelMetersPerSecondSquared.x - (-0.5 * g)) < 1e-9, "the pad's left is the model's −x")
        #expect(Swift.abs(motion.accelMetersPerSecondSquared.y - g) < 1e-9, "the pad's up is the model's y")
        #expect(Swift.abs(motion.accelMetersPerSecondSquared.z - (-0.25 * g)) < 1e-9, "toward the triggers is −z")
        #expect(Swift.abs(motion.gyroRadiansPerSecond.x - (-20 * degree)) < 1e-9)
        #expect(Swift.abs(motion.gyroRadiansPerSecond.y - 90 * degree) < 1e-9, "turning left is the model's +yaw")
        #expect(Swift.abs(motion.gyroRadiansPerSecond.z - (-10 * degree)) < 1e-9)
    }

    /// libevdev's catch-up after SYN_DROPPED is relative to its own state, which already holds the partial frame:
    /// the result must be the device's state, not the last complete frame.
    @Test func aDroppedFrameIsCaughtUpNotLost() {
        var assembler = EvdevSnapshotAssembler(layout: layout, absoluteInfo: info)
        for event in [key(BTN_SOUTH, 1), report] { assembler.apply(event, from: .pad) }
        // Partial frame (north pressed), then the kernel's buffer overflowed; the device now has south released,
        // north still pressed and the trigger at 255: libevdev reports only what differs from its state.
        assembler.apply(key(BTN_NORTH, 1), from: .pad)
        #expect(assembler.apply(dropped, from: .pad) == .dropped)
        assembler.apply(key(BTN_SOUTH, 0), from: .pad)
        assembler.apply(abs(ABS_RZ, 255), from: .pad)
        #expect(assembler.apply(report, from: .pad) == .frameCompleted(resynced: true))
        #expect(assembler.snapshot.buttons == ButtonSet([.y]))
        #expect(assembler.snapshot.rightTrigger == 32767)
        #expect(assembler.apply(report, from: .pad) == .frameCompleted(resynced: false))
    }

    /// A motion node's catch-up after SYN_DROPPED has the sensor's values but no MSC_TIMESTAMP (libevdev reads no
    /// EV_MSC back): shown with the last sample's time, its motion would step the virtual pad's sensor clock by 0
    /// and the next sample by the whole gap. A node with a sensor clock keeps showing its last sample until the next
    /// one comes with its time, which then has the caught-up values.
    @Test func aMotionCatchUpWaitsForItsSampleTime() {
        var assembler = EvdevSnapshotAssembler(layout: layout, absoluteInfo: info)
        let stamp = { (microseconds: Int32) in EvdevEvent(type: EV_MSC, code: MSC_TIMESTAMP, value: microseconds) }
        for event in [abs(ABS_X, 8192), stamp(1_000), report] { assembler.apply(event, from: .motion) }
        let before = assembler.snapshot.motion
        assembler.apply(abs(ABS_X, 100), from: .motion)
        #expect(assembler.apply(dropped, from: .motion) == .dropped)
        assembler.apply(abs(ABS_X, 4096), from: .motion)
        #expect(assembler.apply(report, from: .motion) == .frameCompleted(resynced: true))
        #expect(assembler.snapshot.motion == before, "a sample without its time is shown")
        for event in [abs(ABS_RX, 1024 * 90), stamp(357_000), report] { assembler.apply(event, from: .motion) }
        let after = assembler.snapshot.motion
        #expect(after.timestampMicroseconds == 357_000)
        #expect(Swift.abs(after.accelMetersPerSecondSquared.x - 9.80665 / 2) < 1e-9, "the caught-up value is kept")
        #expect(Swift.abs(after.gyroRadiansPerSecond.x - Double.pi / 2) < 1e-9)
    }

    @Test func aMotionCatchUpWithoutASensorClockIsShownAtOnce() {
        var assembler = EvdevSnapshotAssembler(layout: layout, absoluteInfo: info)
        for event in [abs(ABS_X, 8192), report] { assembler.apply(event, from: .motion) }
        for event in [dropped, abs(ABS_X, 4096), report] { assembler.apply(event, from: .motion) }
        #expect(Swift.abs(assembler.snapshot.motion.accelMetersPerSecondSquared.x - 9.80665 / 2) < 1e-9)
    }

    @Test func seedingTakesKeysAlreadyHeldAndCurrentAxisValues() {
        var seeded = info
        seeded[.pad]![ABS_X]!.value = 255
        var assembler = EvdevSnapshotAssembler(layout: layout, absoluteInfo: seeded)
        assembler.seed(.pad, pressedKeys: [BTN_SOUTH, 0x2ff])
        #expect(assembler.snapshot[.a])
        #expect(assembler.snapshot.leftX == Int16.max)
    }

    /// The kernel sends ABS_MT_SLOT only when the slot changes: a reader that starts while the node's current slot
    /// is 1 (hid-playstation ends every report on slot 1) must put the next slot values on slot 1, not 0.
    @Test func theTouchpadStartsAtTheNodesCurrentSlot() {
        var seeded = info
        seeded[.touchpad]![ABS_MT_SLOT] = EvdevAbsoluteInfo(value: 1, minimum: 0, maximum: 1)
        var assembler = EvdevSnapshotAssembler(layout: layout, absoluteInfo: seeded)
        assembler.seed(.touchpad, pressedKeys: [])
        for event in [abs(ABS_MT_TRACKING_ID, 7), abs(ABS_MT_POSITION_X, 1919), report] {
            assembler.apply(event, from: .touchpad)
        }
        #expect(!assembler.snapshot.touches[0].active)
        #expect(assembler.snapshot.touches[1] == TouchContact(trackingID: 7, active: true, x: 1, y: 0))
    }

    /// Contacts already down when reading starts (or when a pad comes back) are part of the first snapshot.
    @Test func contactsDownAtTheStartAreSeeded() {
        var seeded = info
        seeded[.touchpad]![ABS_MT_SLOT] = EvdevAbsoluteInfo(value: 0, minimum: 0, maximum: 1)
        var assembler = EvdevSnapshotAssembler(layout: layout, absoluteInfo: seeded)
        assembler.seed(
            .touchpad, pressedKeys: [BTN_LEFT],
            touchSlots: [EvdevTouchSlot(slot: 1, trackingID: 9, x: 0, y: 1079)])
        #expect(!assembler.snapshot.touches[0].active)
        #expect(assembler.snapshot.touches[1] == TouchContact(trackingID: 9, active: true, x: 0, y: 1))
        #expect(assembler.snapshot[.touchpad])
        // The seeding left the node's own current slot (0) in place: the next slot values without ABS_MT_SLOT go there.
        for event in [abs(ABS_MT_TRACKING_ID, 10), abs(ABS_MT_POSITION_Y, 1079), report] {
            assembler.apply(event, from: .touchpad)
        }
        #expect(assembler.snapshot.touches[0] == TouchContact(trackingID: 10, active: true, x: 0, y: 1))
        #expect(assembler.snapshot.touches[1].active)
    }

    @Test(arguments: [11, 12, 13] as [UInt64])
    func anyEventSequenceIsAccepted(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        var assembler = EvdevSnapshotAssembler(layout: layout, absoluteInfo: info)
        let roles: [EvdevNodeRole] = [.pad, .touchpad, .motion, .other]
        for _ in 0..<20_000 {
            let event = EvdevEvent(
                type: UInt16.random(in: 0...5, using: &generator), code: UInt16.random(in: 0...0x300, using: &generator),
                value: Int32.random(in: .min ... .max, using: &generator))
            assembler.apply(event, from: roles.randomElement(using: &generator)!)
        }
        for axis in Axis.allCases { #expect(axis.range.contains(assembler.snapshot[axis])) }
    }
}
