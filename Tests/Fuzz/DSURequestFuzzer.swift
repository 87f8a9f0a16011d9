// The DSU (cemuhook) request decoder under libFuzzer: compiled by scripts/fuzz into the report harness, beside
// ReportFuzzer.swift, which calls it for every input. A DSU server answers datagrams from anyone who can reach its
// port, so the decoder must be total. Checks:
//   * DSURequest(decoding:) returns or throws DSURequestError (never traps);
//   * a decoded request re-encodes to a datagram that decodes to the same request;
//   * the input re-sealed with a valid DSUC header and CRC (so the paths behind the checks are reached) obeys the same.

func checkDSURequest(_ bytes: UnsafeRawBufferPointer) {
    checkDSURequestRoundTrip(bytes)
    guard bytes.count >= DSUProtocol.minimumDatagramBytes else { return }
    // The same bytes as a client's datagram: magic, version, the length it has, a CRC that matches.
    var sealed = Array(bytes)
    sealed.withUnsafeMutableBytes { datagram in
        for (index, byte) in [UInt8(0x44), 0x53, 0x55, 0x43, 0xE9, 0x03].enumerated() { datagram[index] = byte }
        let length = UInt16(min(datagram.count - DSUProtocol.headerBytes, Int(UInt16.max)))
        datagram[6] = UInt8(truncatingIfNeeded: length)
        datagram[7] = UInt8(truncatingIfNeeded: length >> 8)
        DSUChecksum.seal(UnsafeMutableRawBufferPointer(rebasing: datagram[0..<(DSUProtocol.headerBytes + Int(length))]))
    }
    sealed.withUnsafeBytes { checkDSURequestRoundTrip($0) }
}

private func checkDSURequestRoundTrip(_ bytes: UnsafeRawBufferPointer) {
    do {
        let request = try DSURequest(decoding: bytes)
        precondition((try? DSURequest(decoding: request.encoded())) == request, "DSU request round trip")
    } catch {
        _ = error.description
    }
}
