// aweft for the pages weftgate serves: the commit codec, the document
// model and one reconnecting link over a WebSocket. See doc.go beside it.
export { AweftError, decode, encode, fromBase64url, fromHex, toBase64url, toHex } from './cbor.js';
export { between, decodeCommit, encodeCommit, newId, sameValue } from './commit.js';
export { Document, Refusal } from './document.js';
export { decodeFrame, encodeFrame } from './frame.js';
export { Client, MAX_PENDING, Share, WINDOW } from './link.js';
