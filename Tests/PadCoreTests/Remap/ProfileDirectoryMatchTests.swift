import PadCore
import Testing

@Suite struct ProfileDirectoryMatchTests {
    let pad = Fingerprint(rawValue: "b43f9de35e24")

    @Test func thePadsOwnFileComesFirstThenItsKindThenTheDefault() {
        let all: Set = ["b43f9de35e24.toml", "dualsense.toml", "default.toml"]
        #expect(ProfileDirectoryMatch.choose(among: all, for: pad, kind: .dualSense) == "b43f9de35e24.toml")
        #expect(ProfileDirectoryMatch.choose(among: all.subtracting(["b43f9de35e24.toml"]), for: pad, kind: .dualSense)
            == "dualsense.toml")
        #expect(ProfileDirectoryMatch.choose(among: ["default.toml", "dualsense.toml"], for: pad, kind: .xbox360)
            == "default.toml")
        #expect(ProfileDirectoryMatch.choose(among: ["dualsense.toml", "other.toml"], for: pad, kind: .xbox360) == nil)
    }

    @Test func anotherPadsFileIsNotThisOnes() {
        #expect(ProfileDirectoryMatch.choose(among: ["b43f9de35e25.toml"], for: pad, kind: .generic) == nil)
        // An ID prefix names no file: only the whole ID, as `padbridge list` prints it.
        #expect(ProfileDirectoryMatch.choose(among: ["b43f.toml"], for: pad, kind: .generic) == nil)
    }

    @Test(arguments: [
        (ControllerKind.dualSense, "dualsense.toml", nil), (.dualSenseEdge, "dualsense-edge.toml", "dualsenseedge.toml"),
        (.dualShock4, "dualshock4.toml", nil), (.xbox360, "xbox360.toml", nil), (.xboxOne, "xbox-one.toml", "xboxone.toml"),
        (.switchPro, "switch-pro.toml", "switchpro.toml"), (.generic, "generic.toml", nil),
    ])
    func eachKindHasItsFileNameAsListPrintsTheKind(kind: ControllerKind, name: String, earlier: String?) {
        #expect(ProfileDirectoryMatch.fileName(forKind: kind) == name)
        #expect(name == kind.name + ".toml")
        #expect(
            ProfileDirectoryMatch.candidates(for: pad, kind: kind)
                == ["b43f9de35e24.toml", name] + (earlier.map { [$0] } ?? []) + ["default.toml"])
    }

    @Test func theKindsOwnFileComesBeforeTheEarlierName() {
        #expect(ProfileDirectoryMatch.choose(among: ["xboxone.toml", "default.toml"], for: pad, kind: .xboxOne) == "xboxone.toml")
        #expect(
            ProfileDirectoryMatch.choose(among: ["xboxone.toml", "xbox-one.toml"], for: pad, kind: .xboxOne) == "xbox-one.toml")
    }
}
