// Package wsguard watches the frames a WebSocket client sends, on their way
// from the socket to coder/websocket, and stops the read at the three
// violations that library answers with the wrong close code (decision 019):
//
//   - an unmasked client frame, and a 64-bit payload length with its top
//     bit set: the library returns a bare error, which a server can only
//     close with 1001; RFC 6455 sections 5.1 and 5.2 call for 1002;
//   - a close frame whose reason is not UTF-8: the library echoes the
//     peer's code (1000) before the server hears of it; RFC 6455 section
//     8.1 calls for 1007.
//
// At such a frame, Read hands over the bytes before the byte that decides
// it and then returns a *Violation for good, so the library never acts on
// the frame and the server closes with Violation.Code.
//
// It does not unmask or copy data frames (their payloads are only
// counted), judge anything else the library already judges, or write to
// the socket: the close stays the library's, on the server's goroutine.
package wsguard
