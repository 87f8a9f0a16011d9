public import FlyingSocks
public import Logging

/// FlyingFox's log lines into padbridge's logger (standard error): its own chatter (a server starting, connections
/// opening and closing) at debug, its warnings and errors as such. Its default prints everything to standard
/// output, where the console's address line goes.
public struct ConsoleServerLog: FlyingSocks.Logging {
    let logger: Logger

    public init(logger: Logger) { self.logger = logger }

    public func logDebug(_ debug: @autoclosure () -> String) { logger.debug("\(debug())") }
    public func logInfo(_ info: @autoclosure () -> String) { logger.debug("\(info())") }
    public func logWarning(_ warning: @autoclosure () -> String) { logger.warning("\(warning())") }
    public func logError(_ error: @autoclosure () -> String) { logger.error("\(error())") }
    public func logCritical(_ critical: @autoclosure () -> String) { logger.critical("\(critical())") }
}
