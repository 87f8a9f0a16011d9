public import PadCore

/// One thing `padbridge doctor` checked, and what to do about it.
public struct SetupFinding: Sendable, Hashable {
    public enum Severity: Int, Sendable, Hashable, Comparable {
        case ok, advice, problem
        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    public var severity: Severity
    /// What was checked: a path, a module, a pad.
    public var subject: String
    /// What was found, in a sentence.
    public var finding: String
    /// The command or step that fixes it.
    public var fix: String?

    public init(_ severity: Severity, _ subject: String, _ finding: String, fix: String? = nil) {
        self.severity = severity
        self.subject = subject
        self.finding = finding
        self.fix = fix
    }
}

/// What the system looks like, as far as `padbridge doctor` asks. The real one reads the running system
/// (`LiveSystemFacts`); tests describe a machine in a few lines.
public protocol SystemFacts {
    func exists(_ path: String) -> Bool
    /// Whether this process may open `path` for writing (access(2) W_OK).
    func isWritable(_ path: String) -> Bool
    /// Whether this process may open `path` for reading (access(2) R_OK).
    func isReadable(_ path: String) -> Bool
    /// The names in a directory, or [] if it cannot be read.
    func entries(of directory: String) -> [String]
    func contents(of file: String) -> String?
    /// `uname -r`.
    var kernelRelease: String { get }
    var isRoot: Bool { get }
    /// Whether another program holds `node` with EVIOCGRAB: nil when none does; else the programs that have it
    /// open ("steam (pid 812)"), or "" when they cannot be named.
    func grabHolder(of node: String) -> String?
}

/// The checks behind `padbridge doctor`: virtual-device nodes, kernel modules, udev rules, and each pad's access.
public struct SetupInspection {
    public var facts: any SystemFacts

    public init(facts: any SystemFacts) { self.facts = facts }

    /// Every check, in the order doctor prints them.
    public func findings(for controllers: [Controller]) -> [SetupFinding] {
        virtualDeviceNodes() + [driverModule()] + udevRules()
            + controllers.flatMap { [controllerSupport($0)] + controllerAccess($0) }
    }

    /// What padbridge can do with a pad, and what not (docs/compatibility.md has the table, with the tests proving it).
    func controllerSupport(_ controller: Controller) -> SetupFinding {
        let capabilities = controller.capabilities
        let parts: [(String, Bool)] = [
            ("rumble", capabilities.rumble), ("player LEDs", capabilities.playerLeds),
            ("lightbar", capabilities.lightbar), ("adaptive triggers", capabilities.adaptiveTriggers),
            ("motion", capabilities.motion), ("touchpad", capabilities.touchpad), ("battery", capabilities.battery),
        ]
        let buttons = capabilities.buttons.pressed.count, axes = capabilities.axes.count
        let can = ["\(buttons) button\(buttons == 1 ? "" : "s"), \(axes) ax\(axes == 1 ? "is" : "es")"]
            + parts.filter(\.1).map(\.0)
        let cannot = parts.filter { !$0.1 }.map(\.0)
        let driver = controller.driver.map { " through \($0)" } ?? ""
        return SetupFinding(
            .ok, "\(controller.name) [\(controller.fingerprint)]",
            "padbridge can use its \(can.joined(separator: ", "))\(driver)"
                + (cannot.isEmpty ? "" : "; it has no \(cannot.joined(separator: ", ")) padbridge can reach"))
    }

    /// `/dev/uinput` (virtual Xbox 360 pads) and `/dev/uhid` (virtual DualSense pads): present and writable.
    public func virtualDeviceNodes() -> [SetupFinding] {
        [
            ("/dev/uinput", "uinput", "CONFIG_INPUT_UINPUT", "virtual Xbox 360 pads"),
            ("/dev/uhid", "uhid", "CONFIG_UHID", "virtual DualSense pads"),
        ].map { node, module, option, use in
            if !facts.exists(node) {
                let load = "sudo modprobe \(module); to load it at every boot: "
                    + "sudo install -m644 udev/padbridge-modules.conf /etc/modules-load.d/"
                switch moduleAvailability(module) {
                case .available:
                    return SetupFinding(
                        .problem, node,
                        "missing: the \(module) kernel module is not loaded, so padbridge cannot create \(use)",
                        fix: load)
                case .absent:
                    return SetupFinding(
                        .problem, node,
                        "missing, and kernel \(facts.kernelRelease) has no \(module) module: \(use) cannot work",
                        fix: "boot a kernel built with \(option) (Debian's linux-image-amd64 has it as a module)")
                case .unknown:
                    return SetupFinding(
                        .problem, node,
                        "missing: the \(module) kernel module is not loaded (this system has no "
                            + "/lib/modules/\(facts.kernelRelease) to tell whether the kernel has it), so padbridge "
                            + "cannot create \(use)",
                        fix: load + "; if modprobe finds no module, the kernel needs \(option)")
                }
            }
            guard facts.isWritable(node) else {
                // uhid is an opt-in (the padbridge group): without it only the DualSense target is out of reach.
                if module == "uhid" {
                    return SetupFinding(
                        .advice, node, "present but not writable by this user, so padbridge cannot create \(use)",
                        fix: DeviceAccessError.uhidAdvice)
                }
                return SetupFinding(
                    .problem, node, "present but not writable by this user, so padbridge cannot create \(use)",
                    fix: Self.installRule)
            }
            return SetupFinding(.ok, node, "present and writable")
        }
    }

    /// hid-playstation binds virtual DualSense pads and reads physical ones; without it a virtual DualSense
    /// has no event nodes.
    func driverModule() -> SetupFinding {
        switch moduleAvailability("hid-playstation") {
        case .available where facts.exists("/sys/module/hid_playstation"):
            return SetupFinding(.ok, "hid-playstation", "loaded")
        case .available:
            return SetupFinding(.ok, "hid-playstation", "available; the kernel loads it when a DualSense appears")
        case .absent:
            return SetupFinding(
                .advice, "hid-playstation",
                "kernel \(facts.kernelRelease) has no hid-playstation driver (Linux 5.12+), so virtual DualSense pads "
                    + "get no event nodes and DualSense pads are read without touchpad and motion",
                fix: "boot a kernel of 5.12 or later with CONFIG_HID_PLAYSTATION")
        case .unknown:
            return SetupFinding(
                .advice, "hid-playstation",
                "not loaded, and this system has no /lib/modules/\(facts.kernelRelease) to tell whether the kernel "
                    + "has it; virtual DualSense pads need it",
                fix: "sudo modprobe hid-playstation")
        }
    }

    /// A rule that tags uinput, uhid and Sony hidraw nodes with uaccess, sorted before 73-seat-late.rules; and the
    /// modules-load file.
    func udevRules() -> [SetupFinding] {
        let directories = ["/etc/udev/rules.d", "/run/udev/rules.d", "/usr/lib/udev/rules.d", "/lib/udev/rules.d"]
        let candidates = directories.flatMap { directory in
            facts.entries(of: directory).filter { $0.hasSuffix(".rules") }.map { (directory, $0) }
        }
        let granting = candidates.filter { directory, name in
            guard let text = facts.contents(of: "\(directory)/\(name)") else { return false }
            return text.split(separator: "\n").contains { line in
                !line.hasPrefix("#") && line.contains("KERNEL==\"uinput\"") && line.contains("uaccess")
            }
        }
        var found: [SetupFinding] = []
        if let (directory, name) = granting.first {
            if name < "73-seat-late.rules" {
                found.append(SetupFinding(.ok, "udev rules", "\(directory)/\(name) gives the logged-in user access"))
            } else {
                found.append(
                    SetupFinding(
                        .advice, "udev rules",
                        "\(directory)/\(name) tags uinput with uaccess but sorts after 73-seat-late.rules, "
                            + "which applies the tag: it has no effect",
                        fix: "rename it with a prefix below 73, e.g. 70-padbridge.rules"))
            }
        } else {
            let severity: SetupFinding.Severity = facts.isRoot ? .ok : .advice
            found.append(
                SetupFinding(
                    severity, "udev rules",
                    "no rule gives the logged-in user access to uinput, uhid and pads' hidraw nodes"
                        + (facts.isRoot ? " (not needed while running as root)" : ""),
                    fix: facts.isRoot ? nil : Self.installRule))
        }
        let modulesLoad = facts.entries(of: "/etc/modules-load.d").contains { name in
            facts.contents(of: "/etc/modules-load.d/\(name)")?.split(separator: "\n").contains("uinput") ?? false
        }
        if !modulesLoad {
            found.append(
                SetupFinding(
                    .advice, "modules at boot", "uinput and uhid are not set to load at boot",
                    fix: "sudo install -m644 udev/padbridge-modules.conf /etc/modules-load.d/"))
        }
        return found
    }

    /// Each pad: its event nodes readable (monitor, remap), its hidraw node writable where feedback goes through it,
    /// and no other program holding it with EVIOCGRAB.
    func controllerAccess(_ controller: Controller) -> [SetupFinding] {
        let subject = "\(controller.name) [\(controller.fingerprint)]"
        var found: [SetupFinding] = []
        let unreadable = controller.nodes.evdev.map(\.path).filter { !facts.isReadable($0) }
        if unreadable.isEmpty {
            found.append(SetupFinding(.ok, subject, "event nodes readable"))
        } else {
            found.append(
                SetupFinding(
                    .advice, subject, "cannot read \(unreadable.joined(separator: ", ")): monitor and remap cannot use it",
                    fix: Self.installRule))
        }
        if let hidraw = controller.nodes.hidraw, controller.capabilities.lightbar {
            if facts.isWritable(hidraw) {
                found.append(SetupFinding(.ok, subject, "\(hidraw) writable (rumble, lightbar, LEDs, triggers)"))
            } else {
                found.append(
                    SetupFinding(
                        .advice, subject, "cannot write \(hidraw): feedback cannot reach this pad",
                        fix: Self.installRule))
            }
        }
        if let pad = controller.nodes.evdev(.pad), let holder = facts.grabHolder(of: pad.path) {
            found.append(
                SetupFinding(
                    .problem, subject,
                    "\(pad.path) is grabbed by another program"
                        + (holder.isEmpty ? "" : " (programs with it open: \(holder))")
                        + ": nothing else, padbridge included, sees its input",
                    fix: holder.isEmpty
                        ? "find it with `sudo fuser -v \(pad.path)` and close it" : "close the program that grabbed it"))
        }
        return found
    }

    enum ModuleAvailability { case available, absent, unknown }

    /// Whether the running kernel has `module`: loaded or built in (/sys/module), or listed in its modules.dep /
    /// modules.builtin; unknown when the system has no module tree for the running kernel (a container).
    func moduleAvailability(_ module: String) -> ModuleAvailability {
        let sysName = Self.sysfsModuleName(module)
        if facts.exists("/sys/module/\(sysName)") { return .available }
        let base = "/lib/modules/\(facts.kernelRelease)"
        let listed = [facts.contents(of: "\(base)/modules.dep"), facts.contents(of: "\(base)/modules.builtin")]
        if listed.allSatisfy({ $0 == nil }) { return .unknown }
        let found = listed.contains { text in
            guard let text else { return false }
            return text.split(separator: "\n").contains { line in
                let path = line.split(separator: ":", maxSplits: 1).first ?? line
                let file = path.split(separator: "/").last ?? path
                let name = file.split(separator: ".").first.map(String.init) ?? ""
                return Self.sysfsModuleName(name) == sysName
            }
        }
        return found ? .available : .absent
    }

    /// The kernel names modules with underscores in /sys/module ("hid_playstation") and either way elsewhere.
    static func sysfsModuleName(_ module: some StringProtocol) -> String {
        String(module.map { $0 == "-" ? "_" : $0 })
    }

    static let installRule =
        "sudo install -m644 \(DeviceAccessError.udevRuleFile) /etc/udev/rules.d/ && sudo udevadm control --reload "
        + "&& sudo udevadm trigger (then unplug and replug the pad, or log in again)"
}
